import type { MemoryStats } from '../backend/contract.js';
import { device as parseDevice, type DeviceLike } from '../device/device.js';
import { getBackend } from '../backend/registry.js';

/** Memory held on a device, as its backend counts it. */
export function memoryStats(d: DeviceLike = 'cpu'): MemoryStats {
  const dev = parseDevice(d);
  return getBackend(dev.type).memoryStats(dev.index ?? 0);
}
