// Device rules and their errors (DEV-*, SD-*). The second device is another device of the backend
// under test when it has several, else the cpu device (for a backend that is not cpu); cases that
// need one are skipped, with that reason, when neither exists.
import {
  BackendUnavailableError, cat, cpu, device, DeviceMismatchError, DeviceStringError, float16, float32, fullLike, onesLike,
  tensor, TensorError, where, zeros, zerosLike, type Device,
} from '@core/tensor';
import { expectEqual, expectTensor, expectThrows, expectTrue } from '../check.js';
import { toDevice } from '../inputs.js';
import { storeResult } from '../oracle/dtype.js';
import { nd, vector } from '../oracle/ndarray.js';
import { cpuSkip, type Case, type Env } from '../types.js';

const NO_SECOND = (env: Env) => `no second device: the ${env.name} backend has one device and is the cpu`;
const NOT_CPU_ONLY = (env: Env) => `needs a non-cpu backend under test (the cpu-scalar rules are about cpu tensors meeting another device; ${env.name} is cpu)`;

export function deviceCases(env: Env): Case[] {
  const cases: Case[] = [];
  const dev = env.device;
  const other: Device | null = env.peer ?? env.cpu;
  const noSecond = other ? undefined : cpuSkip(env, NO_SECOND(env));
  const add = (id: string, op: string, run: Case['run'], skip?: string) =>
    cases.push({ id: `devices/${id}`, category: 'devices', op, dtype: '-', run, ...(skip ? { skip } : {}) });
  const t = (values: number[], d: Device = dev) => toDevice(vector(values), 'float32', d);

  // DEV-1, DEV-2: device strings.
  for (const bad of [`${env.name}:`, `${env.name}:01`, `${env.name}:0:1`, `${env.name}:-1`]) {
    add(`DEV-1/invalid-'${bad}'`, 'device()', () => {
      expectThrows(`device('${bad}')`, () => device(bad), DeviceStringError, `Invalid device string: '${bad}'`);
    });
  }
  add('DEV-1/unknown-type', 'device()', () => {
    expectThrows("device('nosuchdevice')", () => device('nosuchdevice'), DeviceStringError, 'device type at start of device string: nosuchdevice');
  });
  add('DEV-2/index', 'device()', () => {
    const plain = device(env.name);
    expectEqual(`device('${env.name}').index`, plain.index, null);
    expectEqual(`String(device('${env.name}'))`, String(plain), env.name);
    if (env.name !== 'cpu') {
      expectEqual(`String(device('${env.name}', 1))`, String(device(env.name, 1)), `${env.name}:1`);
      expectTrue(`device('${env.name}') is not device('${env.name}:0')`, !plain.equals(device(`${env.name}:0`)));
    }
  });
  add('DEV-3/resolved-index', 'factories', () => {
    const x = zeros([2], { device: env.name });
    expectEqual(`zeros({ device: '${env.name}' }).device`, String(x.device), env.name === 'cpu' ? 'cpu' : `${env.name}:0`);
  });
  add('DEV-3/invalid-index', 'factories', () => {
    expectThrows(`zeros on ${env.name}:${env.backend.deviceCount}`, () => zeros([1], { device: `${env.name}:${env.backend.deviceCount}` }), BackendUnavailableError, 'invalid device index');
  }, env.name === 'cpu' ? 'cpu has no device indices' : undefined);
  add('DEV-4/factories-default-to-cpu', 'factories', () => {
    expectEqual('zeros([2]).device', String(zeros([2]).device), 'cpu');
  }, cpuSkip(env));
  add('DEV-5/like-factories', 'factories', () => {
    const x = t([1, 2]);
    for (const [name, y] of [['zerosLike', zerosLike(x)], ['onesLike', onesLike(x)], ['fullLike', fullLike(x, 3)]] as const) {
      expectEqual(`${name}(x).device`, String(y.device), String(dev));
      expectEqual(`${name}(x).dtype`, y.dtype.name, 'float32');
      expectEqual(`${name}(x).requiresGrad`, y.requiresGrad, false);
    }
    if (env.storage.has('float16')) expectEqual('zerosLike(x, { dtype: float16 }).dtype', zerosLike(x, { dtype: float16 }).dtype.name, 'float16');
  });
  add('DEV-6/result-on-operand-device', 'add', async () => {
    const y = t([1, 2]).add(t([3, 4]));
    return expectTensor(y, { value: vector([4, 6]), dtype: 'float32' }, { label: 'x + y', cls: 'exact', device: dev });
  });
  add('DEV-7/to-same-is-identity', 'to', () => {
    const x = t([1, 2]);
    expectTrue('x.to(x.device) returns x itself', x.to(x.device) === x);
    expectTrue(`x.to('${env.name}') returns x itself (index resolves to the tensor's)`, x.to(env.name) === x);
    expectTrue('x.to(float32) returns x itself', x.to(float32) === x);
    expectTrue('x.to({ copy: true }) is a new tensor', x.to({ device: x.device, copy: true }) !== x);
  });
  add('DEV-7/to-copy-is-independent', 'to', async () => {
    const x = t([1, 2]);
    const y = x.to({ device: x.device, copy: true });
    x.fill_(5);
    return expectTensor(y, { value: vector([1, 2]), dtype: 'float32' }, { label: 'the copy after the source changed', cls: 'exact', device: dev });
  });

  // SD-2, SD-5: mismatches, both operand orders, with PyTorch's message and the typed fields.
  const otherName = String(other);
  const devName = String(dev);
  const firstNonCpu = (a: Device, b: Device) => (a.type !== 'cpu' ? a : b);
  add('SD-2/elementwise-both-orders', 'add', () => {
    if (!other) return;
    const a = t([1, 2]);
    const b = t([3, 4], other);
    const e1 = expectThrows('dev + other', () => a.add(b), DeviceMismatchError,
      `Expected all tensors to be on the same device, but found at least two devices, ${firstNonCpu(dev, other)} and ${firstNonCpu(dev, other) === dev ? otherName : devName}!`) as DeviceMismatchError;
    expectEqual('error.op', e1.op, 'add');
    expectEqual('error.argument', e1.argument, firstNonCpu(dev, other) === dev ? 'other' : 'self');
    const common = firstNonCpu(other, dev);
    expectThrows('other + dev', () => b.add(a), DeviceMismatchError, `found at least two devices, ${common} and ${common === dev ? otherName : devName}!`);
  }, noSecond);
  add('SD-2/compare-where-reduce', 'where', () => {
    if (!other) return;
    const a = t([1, 2]);
    const b = t([3, 4], other);
    expectThrows('a.lt(b)', () => a.lt(b), DeviceMismatchError, 'Expected all tensors to be on the same device');
    expectThrows('where(cond, a, b)', () => where(a.gt(0), a, b), DeviceMismatchError, 'Expected all tensors to be on the same device');
  }, noSecond);
  const schema: Array<[string, (a: ReturnType<typeof t>, b: ReturnType<typeof t>) => unknown, string, string]> = [
    ['matmul', (a, b) => a.reshape([1, 2]).matmul(b.reshape([2, 1])), 'other', 'matmul'],
    ['mm', (a, b) => a.reshape([1, 2]).mm(b.reshape([2, 1])), 'mat2', 'mm'],
    ['cat', (a, b) => cat([a, b]), 'tensors[1]', 'cat'],
    ['gather', (a, b) => a.gather(0, b.int()), 'index', 'gather'],
    ['indexSelect', (a, b) => a.indexSelect(0, b.int()), 'index', 'indexSelect'],
  ];
  for (const [op, fn, argument, method] of schema) {
    add(`SD-5/${op}`, op, () => {
      if (!other) return;
      const a = t([1, 0]);
      const b = t([0, 1], other);
      expectThrows(`${op}(${devName}, ${otherName})`, () => fn(a, b), DeviceMismatchError,
        `found at least two devices, ${devName} and ${otherName}! (when checking argument for argument ${argument} in method ${method})`);
    }, noSecond);
  }

  // SD-3, SD-4: the 0-dim CPU scalar exemption.
  const cpuDev = env.cpu;
  const cpuOnly = cpuSkip(env, cpuDev ? undefined : NOT_CPU_ONLY(env));
  add('SD-3/cpu-scalar-operand', 'add', async () => {
    const y = t([1, 2]).add(toDevice(nd([], [0.5]), 'float32', cpu));
    return expectTensor(y, { value: vector([1.5, 2.5]), dtype: 'float32' }, { label: `${devName}[2] + cpu 0-dim`, cls: 'exact', device: dev });
  }, cpuOnly);
  add('SD-3/cpu-scalar-half-opmath', 'mul', async () => {
    // A 0-dim cpu tensor acts as a scalar: f16 · 0.1 computes in f32 and rounds once.
    const x = toDevice(vector([3, 7, 11]), 'float16', dev);
    const y = x.mul(toDevice(nd([], [0.1]), 'float32', cpu));
    return expectTensor(y, { value: vector([3, 7, 11].map((v) => storeResult('float16', v * Math.fround(0.1)))), dtype: 'float16' }, { label: `${devName} f16 * cpu 0-dim f32`, cls: 'exact', device: dev });
  }, cpuOnly ?? (env.compute.has('float16') ? undefined : `declared capabilities: the ${env.name} backend does not declare compute for float16`));
  add('SD-3/too-many-cpu-scalars', 'where', () => {
    const c = toDevice(vector([1, 0]), 'bool', dev);
    const s = () => toDevice(nd([], [1]), 'float32', cpu);
    expectThrows('where(dev cond, cpu 0-dim, cpu 0-dim)', () => where(c, s(), s()), TensorError, 'Trying to pass too many CPU scalars to non-CPU kernel!');
  }, cpuOnly);
  add('SD-4/no-exemption-for-in-place-target', 'add_', () => {
    const target = toDevice(nd([], [1]), 'float32', cpu);
    expectThrows('cpu0.add_(dev tensor)', () => target.add_(t([1])), DeviceMismatchError, 'Expected all tensors to be on the same device');
  }, cpuOnly);
  add('SD-4/no-exemption-for-non-0-dim-cpu', 'add', () => {
    expectThrows('dev 0-dim + cpu[2]', () => toDevice(nd([], [1]), 'float32', dev).add(t([1, 2], cpu)), DeviceMismatchError, `${devName} and cpu!`);
  }, cpuOnly);
  add('SD-4/no-exemption-for-schema-ops', 'matmul', () => {
    expectThrows('matmul(dev, cpu 0-dim)', () => t([1, 2]).matmul(toDevice(nd([], [1]), 'float32', cpu)), DeviceMismatchError, 'when checking argument for argument other in method matmul');
  }, cpuOnly);

  // SD-8: copy_ crosses devices. It is synchronous, so the source must read synchronously: host
  // data always does; a device without readSync is refused with a pointer to toAsync.
  add('SD-8/copy_-from-cpu', 'copy_', async () => {
    const dst = t([0, 0, 0]);
    dst.copy_(t([1, 2, 3], cpu));
    return expectTensor(dst, { value: vector([1, 2, 3]), dtype: 'float32' }, { label: `${devName}.copy_(cpu tensor)`, cls: 'exact', device: dev });
  }, cpuOnly);
  add('SD-8/copy_-between-devices', 'copy_', async () => {
    if (!other) return;
    const dst = t([0, 0, 0], other);
    const src = t([4, 5, 6]);
    if (!env.syncRead) {
      expectThrows(`${otherName}.copy_(${devName} tensor) without readSync`, () => dst.copy_(src), TensorError, 'toAsync');
      return;
    }
    dst.copy_(src);
    return expectTensor(dst, { value: vector([4, 5, 6]), dtype: 'float32' }, { label: `${otherName}.copy_(${devName})`, cls: 'exact', device: other });
  }, noSecond);

  // Reading: dataSync is for cpu tensors; asynchronous reads always work.
  add('reads/dataSync-needs-cpu', 'dataSync', () => {
    expectThrows(`dataSync() of a ${devName} tensor`, () => t([1]).dataSync(), TensorError, 'await');
  }, env.name === 'cpu' ? 'the cpu backend reads synchronously' : undefined);
  add('reads/sync-to-without-readSync', 'to', async () => {
    const x = t([1, 2]);
    expectThrows(`${devName} tensor .to('cpu') without readSync`, () => x.to('cpu'), TensorError, 'toAsync');
    const y = await x.toAsync('cpu');
    return expectTensor(y, { value: vector([1, 2]), dtype: 'float32' }, { label: 'toAsync', cls: 'exact', device: cpu });
  }, env.syncRead || env.name === 'cpu' ? `the ${env.name} backend reads synchronously` : cpuSkip(env));
  add('reads/item-and-toArray', 'item', async () => {
    const x = t([1.5, 2.5, -1]);
    expectEqual('await x.sum().item()', await x.sum().item(), 3);
    expectEqual('await x.toArray()', JSON.stringify(await x.reshape([3, 1]).toArray()), '[[1.5],[2.5],[-1]]');
  });
  add('reads/bool-and-int-data', 'data', async () => {
    const b = toDevice(vector([1, 0, 1]), 'bool', dev);
    const i = toDevice(vector([-3, 7]), 'int32', dev);
    expectEqual('bool data() array type', (await b.data()).constructor.name, 'Uint8Array');
    expectEqual('int32 data() array type', (await i.data()).constructor.name, 'Int32Array');
    expectEqual('int32 values', Array.from(await i.data()).join(','), '-3,7');
  });
  add('tensor-factory-on-device', 'tensor()', async () => {
    const x = tensor([[1, 2], [3, 4]], { device: dev });
    return expectTensor(x, { value: nd([2, 2], [1, 2, 3, 4]), dtype: 'float32' }, { label: 'tensor(nested, { device })', cls: 'exact', device: dev });
  });
  return cases;
}
