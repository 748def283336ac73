/** Why the cuda backend cannot start: no driver, a driver too old, no device, or no native addon. */
export class CudaUnavailableError extends Error {
  /** Always 'CudaUnavailableError'. */
  override readonly name = 'CudaUnavailableError';
  /** The reason alone, e.g. "no NVIDIA driver (libcuda.so.1 not found)". */
  readonly reason: string;

  /** Builds the error; its message is the reason itself so core reports it verbatim. */
  constructor(reason: string) {
    super(reason);
    this.reason = reason;
  }
}
