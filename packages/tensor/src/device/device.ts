import { DeviceStringError } from '../errors/errors.js';

/**
 * A device: a type ('cpu', 'cuda', 'webgpu', or a third party's) and an optional index.
 * `device('cuda')` (index null) is not equal to `device('cuda:0')` (DEV-2); tensors always carry
 * a resolved index on non-CPU devices (DEV-3).
 */
export class Device {
  private constructor(
    /** The device type: 'cpu', 'cuda', 'webgpu', or a registered third party's. */
    readonly type: string,
    /** The device index, or null when not given (the current device of that type). */
    readonly index: number | null,
  ) {
    Object.freeze(this);
  }

  /** @internal Use `device()`. */
  static of(type: string, index: number | null): Device {
    return new Device(type, index);
  }

  /** Same type and same index (null differs from 0). */
  equals(other: Device): boolean {
    return this.type === other.type && this.index === other.index;
  }

  /** 'cpu', 'cuda:1': the form `device()` parses. */
  toString(): string {
    return this.index === null ? this.type : `${this.type}:${this.index}`;
  }

  /** Serialises as its string form. */
  toJSON(): string {
    return this.toString();
  }
}

/** A Device, or a string `device()` parses such as 'cpu', 'cuda' or 'cuda:1'. */
export type DeviceLike = Device | string;

const DEVICE_STRING = /^([A-Za-z_][A-Za-z0-9_]*)(?::(0|[1-9][0-9]*))?$/;

/** Device types that parse even before their backend is registered, in PyTorch's message order. */
const KNOWN_TYPES = ['cpu', 'cuda', 'webgpu'];

let typeCheck: (type: string) => boolean = (t) => KNOWN_TYPES.includes(t);
let typeList: () => string[] = () => KNOWN_TYPES;

/** @internal The registry widens the accepted types to the registered backends. */
export function setDeviceTypeSource(accepts: (type: string) => boolean, list: () => string[]): void {
  typeCheck = accepts;
  typeList = list;
}

/** Parse `'cuda:0'`, `'cpu'`, `('cuda', 1)` or pass a Device through (DEV-1, DEV-2). */
export function device(spec: DeviceLike, index?: number): Device {
  if (spec instanceof Device) {
    if (index !== undefined) throw new DeviceStringError(`device(${spec}, ${index}): a Device already has its index`);
    return spec;
  }
  if (typeof spec !== 'string') {
    throw new DeviceStringError(`device() expects a string like 'cpu' or 'cuda:0', got ${typeof spec}`);
  }
  const m = DEVICE_STRING.exec(spec);
  if (!m) throw new DeviceStringError(`Invalid device string: '${spec}'`);
  const type = m[1]!;
  if (!typeCheck(type)) {
    throw new DeviceStringError(
      `Expected one of ${typeList().join(', ')} device type at start of device string: ${type}`,
    );
  }
  let idx: number | null = m[2] === undefined ? null : Number(m[2]);
  if (index !== undefined) {
    if (idx !== null) throw new DeviceStringError(`type (string) must not include an index because index was passed explicitly: ${spec}`);
    if (!Number.isInteger(index) || index < 0) throw new DeviceStringError(`Device index must not be negative, got ${index}`);
    idx = index;
  }
  if (type === 'cpu' && idx !== null && idx !== 0) {
    throw new DeviceStringError(`CPU device index must be 0 or absent, got ${idx}`);
  }
  return Device.of(type, idx);
}

/** The cpu device (`device('cpu')`). */
export const cpu = Device.of('cpu', null);
