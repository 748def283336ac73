// Device strings and Device objects (spec §1: DEV-1, DEV-2).
import { describe, expect, it } from 'vitest';
import { cpu, Device, device } from '../../src/device/device.js';
import { DeviceStringError, TensorError } from '../../src/errors/errors.js';

/** Runs fn, which must throw; returns the error. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw, got none');
}

/** fn must throw a DeviceStringError whose message is exactly `message`. */
function expectDeviceStringError(fn: () => unknown, message: string): void {
  expect(fn).toThrow(DeviceStringError);
  const e = thrown(fn);
  expect(e).toBeInstanceOf(DeviceStringError);
  expect((e as Error).message).toBe(message);
}

describe('DEV-1: parsing device strings', () => {
  for (const s of ['cuda:', 'cuda:01', 'cuda:0:1', '', ':0', 'cuda:-1']) {
    it(`DEV-1: malformed ${JSON.stringify(s)} throws "Invalid device string: '${s}'"`, () => {
      expectDeviceStringError(() => device(s), `Invalid device string: '${s}'`);
    });
  }

  it('DEV-1: other malformed strings (spaces, non-digit index, "+1", "cpu:x")', () => {
    for (const s of [' cuda', 'cuda ', 'cuda: 0', 'cuda:x', 'cuda:+1', 'cpu:x', 'cuda:1.0', 'cuda::0', '0', 'cuda-0']) {
      expectDeviceStringError(() => device(s), `Invalid device string: '${s}'`);
    }
  });

  it('DEV-1: an unknown type "tpu" throws "Expected one of cpu, cuda, webgpu device type at start of device string: tpu"', () => {
    expectDeviceStringError(
      () => device('tpu'),
      'Expected one of cpu, cuda, webgpu device type at start of device string: tpu',
    );
  });

  it('DEV-1: the unknown-type message names the type only, even with an index', () => {
    expectDeviceStringError(
      () => device('tpu:0'),
      'Expected one of cpu, cuda, webgpu device type at start of device string: tpu',
    );
    // names are case-sensitive, as in PyTorch
    expectDeviceStringError(
      () => device('CUDA'),
      'Expected one of cpu, cuda, webgpu device type at start of device string: CUDA',
    );
  });

  it('DEV-1: well-formed strings parse into type and index', () => {
    const cases: Array<[string, string, number | null]> = [
      ['cpu', 'cpu', null],
      ['cpu:0', 'cpu', 0],
      ['cuda', 'cuda', null],
      ['cuda:0', 'cuda', 0],
      ['cuda:1', 'cuda', 1],
      ['cuda:10', 'cuda', 10],
      ['webgpu', 'webgpu', null],
      ['webgpu:0', 'webgpu', 0],
    ];
    for (const [s, type, index] of cases) {
      const d = device(s);
      expect(d).toBeInstanceOf(Device);
      expect(d.type, s).toBe(type);
      expect(d.index, s).toBe(index);
      expect(d.toString(), s).toBe(s);
    }
  });

  it('DEV-1: DeviceStringError is a TensorError and an Error, named DeviceStringError', () => {
    const e = thrown(() => device('cuda:'));
    expect(e).toBeInstanceOf(DeviceStringError);
    expect(e).toBeInstanceOf(TensorError);
    expect(e).toBeInstanceOf(Error);
    expect((e as Error).name).toBe('DeviceStringError');
  });

  it('DEV-1: a non-string, non-Device spec throws DeviceStringError', () => {
    expect(() => device(0 as unknown as string)).toThrow(DeviceStringError);
    expect(() => device(null as unknown as string)).toThrow(DeviceStringError);
    expect(() => device({ type: 'cpu', index: null } as unknown as string)).toThrow(DeviceStringError);
  });
});

describe('DEV-2: Device objects', () => {
  it("DEV-2: device('cuda') has index null, prints 'cuda', and is not equal to device('cuda:0')", () => {
    const d = device('cuda');
    expect(d.type).toBe('cuda');
    expect(d.index).toBeNull();
    expect(d.toString()).toBe('cuda');
    expect(String(d)).toBe('cuda');
    expect(`${d}`).toBe('cuda');
    expect(d.equals(device('cuda:0'))).toBe(false);
    expect(device('cuda:0').equals(d)).toBe(false);
    expect(d.equals(device('cuda'))).toBe(true);
  });

  it("DEV-2: device('cuda', 1) prints 'cuda:1' and equals device('cuda:1')", () => {
    const d = device('cuda', 1);
    expect(d.type).toBe('cuda');
    expect(d.index).toBe(1);
    expect(d.toString()).toBe('cuda:1');
    expect(d.equals(device('cuda:1'))).toBe(true);
    expect(device('cuda', 0).equals(device('cuda:0'))).toBe(true);
    expect(device('cuda', 0).equals(device('cuda'))).toBe(false);
  });

  it("DEV-2: device('cpu') prints 'cpu' and has index null; it equals the exported cpu", () => {
    const d = device('cpu');
    expect(d.type).toBe('cpu');
    expect(d.index).toBeNull();
    expect(d.toString()).toBe('cpu');
    expect(d.equals(cpu)).toBe(true);
    expect(cpu.toString()).toBe('cpu');
    expect(cpu.index).toBeNull();
    expect(device('cpu:0').equals(cpu)).toBe(false); // index 0 ≠ no index, as for cuda
  });

  it('DEV-2: device(Device) returns the same object', () => {
    for (const d of [cpu, device('cuda'), device('cuda:3'), device('webgpu', 0)]) {
      expect(device(d)).toBe(d);
    }
  });

  it('DEV-2: device(Device, index) throws: a Device already has its index', () => {
    expect(() => device(device('cuda'), 0)).toThrow(DeviceStringError);
    expect(() => device(cpu, 0)).toThrow(DeviceStringError);
  });

  it("DEV-2: 'cuda:1' with an explicit index throws", () => {
    expect(() => device('cuda:1', 1)).toThrow(DeviceStringError);
    expect(() => device('cuda:0', 1)).toThrow(DeviceStringError);
  });

  it('DEV-2: cpu:1 throws (a CPU index must be 0 or absent)', () => {
    expect(() => device('cpu:1')).toThrow(DeviceStringError);
    expect(() => device('cpu', 1)).toThrow(DeviceStringError);
    expect(device('cpu', 0).index).toBe(0);
  });

  it('DEV-2: an explicit index must be a non-negative integer', () => {
    expect(() => device('cuda', -1)).toThrow(DeviceStringError);
    expect(() => device('cuda', 1.5)).toThrow(DeviceStringError);
    expect(() => device('cuda', NaN)).toThrow(DeviceStringError);
  });

  it('DEV-2: Device objects are frozen and serialize as their string', () => {
    const d = device('cuda:2');
    expect(Object.isFrozen(d)).toBe(true);
    expect(d.toJSON()).toBe('cuda:2');
    expect(JSON.stringify({ device: d })).toBe('{"device":"cuda:2"}');
    expect(JSON.stringify(device('cuda'))).toBe('"cuda"');
  });

  it('DEV-2: equality needs the same type and index', () => {
    expect(device('cuda:0').equals(device('webgpu:0'))).toBe(false);
    expect(device('cuda:0').equals(device('cuda:1'))).toBe(false);
    expect(device('cuda:1').equals(device('cuda:1'))).toBe(true);
  });
});
