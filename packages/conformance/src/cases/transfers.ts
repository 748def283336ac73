// Transfers between the backend's device and another (XFER-*), and pinned memory (PIN-*): every
// stored dtype crosses both ways exactly, blocking, non-blocking and asynchronous copies agree,
// and non-blocking device → host copies land in pinned memory.
import {
  BackendUnavailableError, cpu, full, getBackend, isAvailable, listBackends, TensorError, type Device, type DTypeName, type Tensor,
} from '@core/tensor';
import { expectEqual, expectTensor, expectThrows, expectTrue } from '../check.js';
import { dtypeObject, edges, randomArray, toDevice } from '../inputs.js';
import { ALL_DTYPES, isFloat, roundTo } from '../oracle/dtype.js';
import { map, nd, transpose, vector, type NdArray } from '../oracle/ndarray.js';
import { Rng } from '../rng.js';
import { cpuSkip, type Case, type Env } from '../types.js';

/** Move with `.to()` where the source reads synchronously, else with `await toAsync()` (the documented way). */
async function move(env: Env, x: Tensor, target: Device, options: { nonBlocking?: boolean; dtype?: DTypeName } = {}): Promise<Tensor> {
  const spec = { device: target, nonBlocking: options.nonBlocking ?? false, ...(options.dtype ? { dtype: dtypeObject(options.dtype) } : {}) };
  const syncSource = x.device.type === 'cpu' || env.syncRead;
  return syncSource ? x.to(spec) : x.toAsync(spec);
}

function sampleValues(dtype: DTypeName, seed: string): NdArray {
  const rng = new Rng(seed);
  const special = edges(dtype).concat(isFloat(dtype) ? [NaN, Infinity, -Infinity] : []);
  const random = randomArray(rng, dtype, [24]);
  return nd([5, 8], (i) => (i < special.length ? special[i]! : random.data[i % 24]!));
}

/** A pinned copy of a cpu tensor, or null where no backend supports pinned memory (PIN-1). */
function pinnedOrNull(host: Tensor): Tensor | null {
  const accelerator = listBackends().some((n) => n !== 'cpu' && isAvailable(n) && getBackend(n).capabilities.pinnedMemory);
  return accelerator ? host.pinMemory() : null;
}

export function transferCases(env: Env): Case[] {
  const cases: Case[] = [];
  const dev = env.device;
  const other = env.peer ?? env.cpu;
  const add = (id: string, op: string, dtype: DTypeName | '-', run: Case['run'], skip?: string) =>
    cases.push({ id: `transfers/${id}`, category: 'transfers', op, dtype, run, ...(skip ? { skip } : {}) });
  const noOther = other ? undefined : cpuSkip(env, `no second device: the ${env.name} backend has one device and is the cpu`);
  // Cases that use the cpu device itself: the host side of uploads and downloads, and pinned memory.
  const hostSkip = cpuSkip(env, env.name === 'cpu' ? 'the cpu backend under test has no host ↔ device copies' : undefined);

  for (const dtype of ALL_DTYPES) {
    const skip = noOther ?? (env.storage.has(dtype) ? undefined : `declared capabilities: the ${env.name} backend does not declare storage for ${dtype}`);
    for (const mode of ['blocking', 'nonBlocking'] as const) {
      add(`XFER-1/round-trip/${mode}/${dtype}`, 'to(device)', dtype, async () => {
        const values = sampleValues(dtype, `xfer/${dtype}`);
        const x = toDevice(values, dtype, dev).transpose(0, 1); // a non-contiguous source
        const there = await move(env, x, other!, { nonBlocking: mode === 'nonBlocking' });
        await expectTensor(there, { value: transpose(values, 0, 1), dtype }, { label: `${dev} → ${other} (${mode})`, cls: 'exact', device: other! });
        const back = await move(env, there, dev, { nonBlocking: mode === 'nonBlocking' });
        await expectTensor(x, { value: transpose(values, 0, 1), dtype }, { label: 'the source after the copy', cls: 'exact', device: dev });
        return expectTensor(back, { value: transpose(values, 0, 1), dtype }, { label: `${other} → ${dev} (${mode})`, cls: 'exact', device: dev });
      }, skip);
    }
    add(`XFER-2/pinned-non-blocking-equals-blocking/${dtype}`, 'to(device)', dtype, async () => {
      // A non-blocking copy from pinned memory may be queued by the device (a staging buffer):
      // every stored dtype, even and odd lengths, must arrive exactly as a blocking copy does.
      const sample = sampleValues(dtype, `xfer-pinned/${dtype}`).data;
      for (const length of [40, 7]) {
        const values = nd([length], (i) => sample[i]!);
        const host = toDevice(values, dtype, cpu);
        const pinned = pinnedOrNull(host);
        const queued = (pinned ?? host).to(dev, { nonBlocking: true });
        const plain = host.to(dev);
        await expectTensor(queued, { value: values, dtype }, { label: `${pinned ? 'pinned' : 'pageable'} → ${dev}, non-blocking, length ${length}`, cls: 'exact', device: dev });
        await expectTensor(plain, { value: values, dtype }, { label: `cpu → ${dev}, blocking, length ${length}`, cls: 'exact', device: dev });
      }
    }, hostSkip ?? skip);
    add(`XFER-2/toAsync-equals-to/${dtype}`, 'toAsync', dtype, async () => {
      const values = sampleValues(dtype, `xfer-async/${dtype}`);
      const x = toDevice(values, dtype, other!);
      const a = await x.toAsync(dev, { nonBlocking: true });
      return expectTensor(a, { value: values, dtype }, { label: `await toAsync(${dev})`, cls: 'exact', device: dev });
    }, skip);
  }

  const floatSkip = noOther ?? (env.compute.has('float32') && env.storage.has('float16') ? undefined : `declared capabilities: the ${env.name} backend does not declare storage for float16`);
  add('XFER-1/move-and-cast', 'to(device, dtype)', 'float32', async () => {
    const values = vector([0.1, 65519.99, 1e-7, -2.5]);
    const x = toDevice(values, 'float32', dev);
    const y = await move(env, x, other!, { dtype: 'float16' });
    return expectTensor(y, { value: map(values, (v) => roundTo('float16', roundTo('float32', v))), dtype: 'float16' }, { label: `to({ device: ${other}, dtype: float16 })`, cls: 'exact', device: other! });
  }, floatSkip);
  add('XFER-2/non-blocking-then-compute', 'to(device)', 'float32', async () => {
    // cpu_t.to(dev, nonBlocking).sum() is always correct: later work sees the data.
    const values = randomArray(new Rng('xfer-2'), 'float32', [1000]);
    const host = toDevice(values, 'float32', cpu);
    const y = host.to(dev, { nonBlocking: true }).sum();
    const exact = Array.from(values.data).reduce((s, v) => s + v, 0);
    const mag = Array.from(values.data).reduce((s, v) => s + Math.abs(v), 0);
    return expectTensor(y, { value: nd([], [Math.fround(exact)]), dtype: 'float32', bound: new Float64Array([1002 * 2 ** -24 * mag]) }, { label: 'sum after a non-blocking upload', cls: 'accumulated', device: dev });
  }, hostSkip);
  add('XFER-3/non-blocking-download-is-pinned', 'to(cpu)', 'float32', async () => {
    const x = toDevice(vector([1, 2, 3]), 'float32', dev);
    const nb = await move(env, x, cpu, { nonBlocking: true });
    const b = await move(env, x, cpu);
    expectEqual('non-blocking device → host copy isPinned()', nb.isPinned(), true);
    expectEqual('blocking device → host copy isPinned()', b.isPinned(), false);
    await expectTensor(nb, { value: vector([1, 2, 3]), dtype: 'float32' }, { label: 'non-blocking download', cls: 'exact', device: cpu });
  }, hostSkip);
  add('XFER-4/cpu-to-cpu-non-blocking', 'to(device)', 'float32', () => {
    const x = toDevice(vector([1, 2]), 'float32', cpu);
    expectTrue("cpu tensor .to('cpu', { nonBlocking: true }) is itself", x.to({ device: 'cpu', nonBlocking: true }) === x);
  }, cpuSkip(env));

  // PIN-*: pinned host memory.
  add('PIN-1/device-tensors-cannot-be-pinned', 'pinMemory', '-', () => {
    const x = toDevice(vector([1, 2]), 'float32', dev);
    expectThrows('pinMemory() of a device tensor', () => x.pinMemory(), TensorError, `cannot pin '${x.toString()}' only dense CPU tensors can be pinned`);
    expectThrows(`full(..., { device: '${dev}', pinMemory: true })`, () => full([2], 0, { device: dev, pinMemory: true }), TensorError, 'Only dense CPU tensors can be pinned');
  }, env.name === 'cpu' ? 'the backend under test is the cpu' : undefined);
  add('PIN-1/pin-or-explain', 'pinMemory', '-', async () => {
    const accelerator = listBackends().some((n) => n !== 'cpu' && isAvailable(n) && getBackend(n).capabilities.pinnedMemory);
    const x = toDevice(vector([1, 2, 3]), 'float32', cpu);
    if (!accelerator) {
      expectThrows('pinMemory() without an accelerator', () => x.pinMemory(), BackendUnavailableError, 'pinned');
      return;
    }
    const p = x.pinMemory();
    expectEqual('pinMemory().isPinned()', p.isPinned(), true);
    expectTrue('pinning a pinned tensor returns it', p.pinMemory() === p);
    if (env.name !== 'cpu') {
      const up = p.to(dev, { nonBlocking: true });
      await expectTensor(up, { value: vector([1, 2, 3]), dtype: 'float32' }, { label: 'pinned → device, non-blocking', cls: 'exact', device: dev });
    }
  }, cpuSkip(env));
  add('PIN-2/not-pinned-by-default', 'pinMemory', '-', () => {
    expectEqual('an ordinary cpu tensor isPinned()', toDevice(vector([1]), 'float32', cpu).isPinned(), false);
    expectEqual('a device tensor isPinned()', toDevice(vector([1]), 'float32', dev).isPinned(), false);
  }, cpuSkip(env));
  return cases;
}
