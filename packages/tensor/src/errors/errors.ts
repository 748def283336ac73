// Typed errors. Each carries the fields a program can branch on, and a message a beginner can act on.

/** Base class of every error this library throws on purpose. */
export class TensorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** The structured part of a DeviceMismatchError, for code that handles it. */
export interface DeviceMismatchDetails {
  /** The op that refused its arguments, e.g. 'matmul'. */
  readonly op: string;
  /** Name of the argument found on the wrong device, e.g. "other" or "mat2". */
  readonly argument: string;
  /** The common device the op runs on (SD-1/SD-5), as a string. */
  readonly expected: string;
  /** The stray argument's device, as a string. */
  readonly got: string;
  /** "file:line:col" of the user code that created the stray tensor, when known. */
  readonly createdAt: string | undefined;
}

/** Tensors of one op live on different devices (SD-2, SD-5). */
export class DeviceMismatchError extends TensorError implements DeviceMismatchDetails {
  readonly op: string;
  readonly argument: string;
  readonly expected: string;
  readonly got: string;
  readonly createdAt: string | undefined;

  constructor(d: DeviceMismatchDetails, message?: string) {
    super(
      message ??
        `Expected all tensors to be on the same device, but found at least two devices, ${d.expected} and ${d.got}! ` +
          `(when checking argument for argument ${d.argument} in method ${d.op})\n` +
          `  hint: move it first, e.g. \`${d.argument}.to('${d.expected}')\`, or create it with { device: '${d.expected}' }` +
          (d.createdAt ? `\n  the ${d.got} tensor was created at ${d.createdAt}` : ''),
    );
    this.op = d.op;
    this.argument = d.argument;
    this.expected = d.expected;
    this.got = d.got;
    this.createdAt = d.createdAt;
  }
}

/** A dtype an op or backend cannot take, or a cast it may not do. */
export class DTypeError extends TensorError {
  constructor(
    message: string,
    /** The op that refused the dtype, when known. */
    readonly op?: string,
    /** The dtype's name, when one dtype is at fault. */
    readonly dtype?: string,
  ) {
    super(message);
  }
}

/** Shapes that do not fit the op: broadcasting, matmul inner sizes, out-of-range dims, bad sizes. */
export class ShapeError extends TensorError {
  constructor(
    message: string,
    /** The op that refused the shapes, when known. */
    readonly op?: string,
  ) {
    super(message);
  }
}

/** A device whose backend is not registered, failed to start, or has no such index. */
export class BackendUnavailableError extends TensorError {
  constructor(
    message: string,
    /** The device type asked for, e.g. 'cuda'. */
    readonly deviceType?: string,
    /** Why the backend is unavailable (its factory's error), when known. */
    readonly reason?: string,
  ) {
    super(message);
  }
}

/** A device string that cannot be parsed (DEV-1). */
export class DeviceStringError extends TensorError {}

/** A numeric argument out of its allowed range, or non-finite where that is not allowed. */
export class ValueError extends TensorError {}

/**
 * Python's IndexError, as PyTorch raises it for subscripts: an index out of bounds, too many
 * indices, a mask whose shape does not fit, index tensors that do not broadcast together. For an
 * out-of-bounds index, `dim`, `index` and `size` say which.
 */
export class IndexError extends TensorError {
  constructor(
    message: string,
    /** The dim of the indexed tensor the bad index was for, when one is at fault. */
    readonly dim?: number,
    /** The index that was out of bounds. */
    readonly index?: number,
    /** The size of that dim. */
    readonly size?: number,
  ) {
    super(message);
  }
}
