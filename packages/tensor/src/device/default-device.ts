import { availableDevices } from '../backend/registry.js';
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

/** The available device with the highest registered priority: by convention cuda > webgpu > cpu. */
export async function bestDevice(): Promise<Device> {
  const ready = (await availableDevices()).filter((d) => d.available).sort((a, b) => b.priority - a.priority);
  const best = ready[0];
  if (!best) return cpu;
  return best.type === 'cpu' ? cpu : device(best.type, 0);
}
