import { availableDevices, BackendUnavailableError, bestDevice, device as parseDevice, isAvailable, type Device } from '@core/tensor';

/**
 * The device a `--device` flag names: `auto` picks the best available backend; a named one
 * (`cpu`, `webgpu`, `cuda`, `cuda:1`, …) must be available, or a BackendUnavailableError says why
 * not and what to try instead. Import the backends the program may use before calling it.
 */
export async function chooseDevice(flag: string): Promise<Device> {
  if (flag === 'auto') return bestDevice();
  const wanted = parseDevice(flag);
  if (isAvailable(wanted.type)) return wanted; // up already (the cpu): no need to start the other backends
  const status = (await availableDevices()).find((d) => d.type === wanted.type);
  if (!status?.available) {
    const why = status ? status.reason : 'no backend registered for it in this program';
    throw new BackendUnavailableError(`--device ${flag}: ${wanted.type} is unavailable (${why}); try --device auto or --device cpu`, wanted.type, why);
  }
  return wanted;
}
