// Typed errors of the WebGPU backend. All extend core's TensorError, so `catch (e) { if (e
// instanceof TensorError) … }` sees them, and each names what happened and what to do.
import { TensorError } from '@core/tensor';

/** Base class of errors raised by the WebGPU backend. */
export class WebGPUError extends TensorError {}

/** No WebGPU implementation or no adapter: the factory rejects with this, so `availableDevices()` shows why. */
export class WebGPUUnavailableError extends WebGPUError {}

/** The GPU device was lost (driver reset, GPU removed, `destroy()`); every later operation fails with this. */
export class WebGPUDeviceLostError extends WebGPUError {
  constructor(
    message: string,
    /** GPUDeviceLostReason: 'destroyed' or 'unknown'. */
    readonly reason: string,
  ) {
    super(message);
  }
}

/** The device could not allocate a buffer. */
export class WebGPUOutOfMemoryError extends WebGPUError {
  constructor(
    message: string,
    /** The size of the allocation that failed (0 when the device did not say). */
    readonly bytes: number,
  ) {
    super(message);
  }
}

/**
 * A tensor larger than one storage-buffer binding (`maxStorageBufferBindingSize`): kernels bind a
 * whole storage, so the backend refuses it up front instead of failing inside the device.
 */
export class WebGPUBufferLimitError extends WebGPUError {
  constructor(
    message: string,
    /** Bytes the tensor needs on the device. */
    readonly bytes: number,
    /** The adapter's `maxStorageBufferBindingSize`. */
    readonly limit: number,
  ) {
    super(message);
  }
}

/** A WebGPU validation or internal error reported by the device (a bug in this backend if it ever shows). */
export class WebGPUValidationError extends WebGPUError {}
