import { getBackend, listBackends, probeSaysSkip, startAll } from '../backend/registry.js';
import { cpu, device, type Device, type DeviceLike } from './device.js';

let defaultDevice: Device = cpu;

/** The device factories use when none is given: cpu unless changed (DEV-4). */
export function getDefaultDevice(): Device {
  return defaultDevice;
}

/** Make `d` the device factories use when none is given (PyTorch's `torch.set_default_device`). */
export function setDefaultDevice(d: DeviceLike): void {
  defaultDevice = device(d);
}

/**
 * The available device with the highest registered priority: by convention cuda > webgpu > cpu.
 * A backend declaring the feature 'software-adapter' (a GPU API emulated on the CPU, such as
 * lavapipe or SwiftShader) ranks below every hardware device, cpu included: it is slower there.
 * A backend whose probe (`BackendFactory.probe`) already says it is unavailable or a software
 * adapter is not even started unless no other device is available.
 */
export async function bestDevice(): Promise<Device> {
  const names = listBackends();
  const skips = await Promise.all(names.map(probeSaysSkip));
  const first = await startAll(names.filter((_, i) => !skips[i]));
  const found = first.some((d) => d.available) ? first : await startAll(names);
  const software = (type: string) => getBackend(type).capabilities.features.includes('software-adapter');
  const ready = found
    .filter((d) => d.available)
    .sort((a, b) => Number(software(a.type)) - Number(software(b.type)) || b.priority - a.priority);
  const best = ready[0];
  if (!best) return cpu;
  return best.type === 'cpu' ? cpu : device(best.type, 0);
}
