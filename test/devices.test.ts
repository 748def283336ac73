// Devices, placement, transfers and pinned memory (spec §1 DEV-3..DEV-7, §3 XFER-*, PIN-1/2),
// the backend registry (isAvailable, availableDevices, bestDevice, listBackends, getBackend) and
// the two-copies-of-core check.
import '@core/backend-cpu';
import { createRequire } from 'node:module';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  availableDevices, BackendUnavailableError, bestDevice, bfloat16, bool, cpu, device, Device, DeviceStringError, empty,
  emptyLike, float16, float32, float64, full, fullLike, getBackend, getDefaultDevice, int32, isAvailable, linspace,
  listBackends, loadedCoreCopies, ones, onesLike, rand, randint, randintLike, randLike, randn, randnLike, registerBackend,
  roundToBFloat16, roundToFloat16, setDefaultDevice, arange, tensor, Tensor, TensorError, zeros, zerosLike,
  type Backend,
} from '@core/tensor';
import { createFakeBackend, registerFakeBackend } from './helpers/fake-backend.js';
import { expectError, expectRejection, flat } from './helpers/assert.js';

async function values(t: Tensor): Promise<number[]> {
  return flat(await t.toArray());
}

// These run first, while no accelerator backend is registered (vitest runs tests in file order).
describe('PIN-1 without an accelerator backend', () => {
  it('PIN-1: pinMemory() with only the cpu backend registered throws BackendUnavailableError', () => {
    expect(listBackends()).toEqual(['cpu']);
    const t = tensor([1, 2]);
    const e = expectError(() => t.pinMemory(), BackendUnavailableError, 'pinMemory()', 'no accelerator');
    expect(e.deviceType).toBe('cpu');
    expect(t.isPinned()).toBe(false);
  });

  it('PIN-1: an accelerator without pinned-memory support does not enable pinning', () => {
    registerFakeBackend({ pinnedMemory: false });
    expect(isAvailable('fake')).toBe(true);
    expectError(() => tensor([1]).pinMemory(), BackendUnavailableError, 'no accelerator');
  });
});

describe('with the fake accelerator registered', () => {
  beforeAll(() => registerFakeBackend());
  afterEach(() => setDefaultDevice('cpu'));

  describe('DEV-4 / DEV-3: where factories put tensors', () => {
    it('DEV-4: every factory without `device` creates float32 (or int32/bool) tensors on cpu', () => {
      const made: Array<[string, Tensor]> = [
        ['zeros', zeros([2])], ['ones', ones([2])], ['empty', empty([2])], ['full', full([2], 3)],
        ['rand', rand([2])], ['randn', randn([2])], ['randint', randint(5, [2])], ['arange', arange(3)],
        ['linspace', linspace(0, 1, 3)], ['tensor', tensor([1, 2])],
      ];
      for (const [name, t] of made) {
        expect(t.device.toString(), name).toBe('cpu');
        expect(t.device.index, name).toBeNull();
        expect(t.device.equals(cpu), name).toBe(true);
      }
      expect(zeros([1]).dtype).toBe(float32);
      expect(randint(5, [1]).dtype).toBe(int32);
      expect(getDefaultDevice().toString()).toBe('cpu');
    });

    it('DEV-3: `{ device: "fake" }` resolves to fake:0 (a resolved index), and "fake:1" stays fake:1', () => {
      for (const d of ['fake', device('fake'), 'fake:0']) {
        const t = zeros([2], { device: d });
        expect(t.device.toString()).toBe('fake:0');
        expect(t.device.index).toBe(0);
        expect(t.device.equals(device('fake:0'))).toBe(true);
        expect(t.device.equals(device('fake'))).toBe(false); // DEV-2: 'fake' ≠ 'fake:0'
      }
      expect(ones([1], { device: 'fake:1' }).device.toString()).toBe('fake:1');
      expect(tensor([1, 2]).to('fake').device.toString()).toBe('fake:0');
    });

    it('DEV-3: an out-of-range device index throws BackendUnavailableError naming the device count', () => {
      const e = expectError(() => zeros([1], { device: 'fake:5' }), BackendUnavailableError, 'fake:5', 'invalid device index 5', 'has 2 device(s)');
      expect(e.deviceType).toBe('fake');
      expectError(() => tensor([1]).to('fake:2'), BackendUnavailableError, 'invalid device index 2');
      expectError(() => zeros([1], { device: 'cpu:1' }), DeviceStringError, 'CPU device index must be 0');
    });

    it('setDefaultDevice("fake") sends factories to fake:0; getDefaultDevice reports it; restoring gives cpu again', async () => {
      setDefaultDevice('fake');
      expect(getDefaultDevice().toString()).toBe('fake');
      const t = tensor([1, 2, 3]);
      expect(t.device.toString()).toBe('fake:0');
      expect(zeros([1]).device.toString()).toBe('fake:0');
      expect(rand([2]).device.toString()).toBe('fake:0');
      expect(await values(t)).toEqual([1, 2, 3]);
      setDefaultDevice(device('fake', 1));
      expect(ones([1]).device.toString()).toBe('fake:1');
      setDefaultDevice('cpu');
      expect(getDefaultDevice().equals(cpu)).toBe(true);
      expect(zeros([1]).device.toString()).toBe('cpu');
    });

    it('setDefaultDevice rejects malformed device strings', () => {
      expectError(() => setDefaultDevice('fake:01'), DeviceStringError, "Invalid device string: 'fake:01'");
      expect(getDefaultDevice().toString()).toBe('cpu');
    });
  });

  describe('DEV-5: *Like factories copy device and dtype', () => {
    it('DEV-5: zerosLike/onesLike/emptyLike/fullLike/randLike/randnLike keep device and dtype', async () => {
      const src = tensor([[1, 2, 3]], { device: 'fake:1', dtype: float16 });
      src.requiresGrad = true;
      const made: Array<[string, Tensor]> = [
        ['zerosLike', zerosLike(src)], ['onesLike', onesLike(src)], ['emptyLike', emptyLike(src)],
        ['fullLike', fullLike(src, 2.5)], ['randLike', randLike(src)], ['randnLike', randnLike(src)],
      ];
      for (const [name, t] of made) {
        expect(t.device.toString(), name).toBe('fake:1');
        expect(t.dtype, name).toBe(float16);
        expect(t.shape, name).toEqual([1, 3]);
        expect(t.requiresGrad, name).toBe(false); // DEV-5: requires_grad defaults to False
        expect(t).not.toBe(src);
      }
      expect(await values(made[0]![1])).toEqual([0, 0, 0]);
      expect(await values(made[1]![1])).toEqual([1, 1, 1]);
      expect(await values(made[3]![1])).toEqual([2.5, 2.5, 2.5]);
    });

    it('DEV-5: overrides win over the source tensor', () => {
      const src = zeros([2], { device: 'fake', dtype: bfloat16 });
      const a = zerosLike(src, { dtype: float32 });
      expect(a.dtype).toBe(float32);
      expect(a.device.toString()).toBe('fake:0');
      const b = onesLike(src, { device: 'cpu' });
      expect(b.dtype).toBe(bfloat16);
      expect(b.device.toString()).toBe('cpu');
    });

    it('DEV-5: randintLike keeps device and dtype (float source → float values, int source → int32)', async () => {
      const i = randintLike(zeros([50], { dtype: int32, device: 'fake' }), 0, 3);
      expect(i.dtype).toBe(int32);
      expect(i.device.toString()).toBe('fake:0');
      const f = randintLike(zeros([50], { device: 'fake' }), 0, 3);
      expect(f.device.toString()).toBe('fake:0');
      expect(f.dtype).toBe(float32);
      for (const v of await values(f)) expect([0, 1, 2]).toContain(v);
    });
  });

  describe('DEV-7: .to() returns the same object when nothing changes', () => {
    it('DEV-7: cpu tensor .to("cpu"), .to(cpu), .to("cpu:0"), .to(float32), .to({device, dtype}), .to(itself), .cpu(), .float()', () => {
      const x = tensor([1, 2, 3]);
      expect(x.to('cpu')).toBe(x);
      expect(x.to(cpu)).toBe(x);
      expect(x.to('cpu:0')).toBe(x);
      expect(x.to(float32)).toBe(x);
      expect(x.to({ device: 'cpu', dtype: float32 })).toBe(x);
      expect(x.to({})).toBe(x);
      expect(x.to(tensor([0]))).toBe(x);
      expect(x.to('cpu', { nonBlocking: true })).toBe(x); // XFER-4: no-op for CPU→CPU
      expect(x.cpu()).toBe(x);
      expect(x.float()).toBe(x);
    });

    it('DEV-7: a fake:0 tensor .to("fake") / .to(device("fake")) / .to("fake:0") is itself (DEV-3 resolution)', () => {
      const x = zeros([2], { device: 'fake' });
      expect(x.to('fake')).toBe(x);
      expect(x.to(device('fake'))).toBe(x);
      expect(x.to('fake:0')).toBe(x);
      expect(x.to(zeros([1], { device: 'fake:0' }))).toBe(x);
    });

    it('fake:0 → fake:1 goes through the host (the contract has no direct device path), so the sync .to() says to await', () => {
      const x = zeros([2], { device: 'fake' });
      expectError(() => x.to('fake:1'), TensorError, "await t.toAsync('fake:1')");
    });

    it('DEV-7: `{ copy: true }` gives a new tensor with its own memory', () => {
      const x = tensor([1, 2, 3]);
      const y = x.to('cpu', { copy: true });
      expect(y).not.toBe(x);
      expect(Array.from(y.dataSync())).toEqual([1, 2, 3]);
      y.fill_(9);
      expect(Array.from(x.dataSync())).toEqual([1, 2, 3]);
      const z = x.to({ copy: true });
      expect(z).not.toBe(x);
      z.zero_();
      expect(Array.from(x.dataSync())).toEqual([1, 2, 3]);
    });

    it('DEV-7: to(dtype) converts, and leaves the source unchanged', () => {
      const x = tensor([1 / 3, 70000, -2.5]);
      const h = x.to(float16);
      expect(h).not.toBe(x);
      expect(h.dtype).toBe(float16);
      expect(h.device.toString()).toBe('cpu');
      expect(Array.from(h.dataSync())).toEqual([roundToFloat16(1 / 3), Infinity, -2.5]);
      const i = x.to(int32);
      expect(Array.from(i.dataSync())).toEqual([0, 70000, -2]); // truncation toward zero
      expect(x.dtype).toBe(float32);
      expect(Array.from(x.dataSync())).toEqual([Math.fround(1 / 3), 70000, -2.5]);
    });

    it('DEV-7: half(), bfloat16(), float(), double(), int(), bool() round like RND-1/RND-4', () => {
      const x = tensor([1 + 2 ** -11, 1 + 3 * 2 ** -8, 0]);
      expect(x.half().dtype).toBe(float16);
      expect(Array.from(x.half().dataSync())).toEqual([1, roundToFloat16(Math.fround(1 + 3 * 2 ** -8)), 0]);
      expect(x.bfloat16().dtype).toBe(bfloat16);
      expect(Array.from(x.bfloat16().dataSync())).toEqual([1, 1.015625, 0]);
      expect(x.bfloat16().float().dtype).toBe(float32);
      expect(Array.from(x.bfloat16().float().dataSync())).toEqual([1, 1.015625, 0]);
      expect(x.double().dtype).toBe(float64);
      expect(Array.from(x.bool().dataSync())).toEqual([1, 1, 0]);
      expect(x.bool().dtype).toBe(bool);
      expect(roundToBFloat16(1 + 2 ** -8)).toBe(1);
    });

    it('DEV-7: to({ device, dtype }) and to(otherTensor) change both', async () => {
      const x = tensor([1.5, 2049]);
      const y = x.to({ device: 'fake', dtype: float16 });
      expect(y.device.toString()).toBe('fake:0');
      expect(y.dtype).toBe(float16);
      expect(await values(y)).toEqual([1.5, 2048]);
      const like = zeros([1], { device: 'fake:1', dtype: bfloat16 });
      const z = x.to(like);
      expect(z.device.toString()).toBe('fake:1');
      expect(z.dtype).toBe(bfloat16);
      expect(await values(z)).toEqual([1.5, 2048]);
      expect(x.device.toString()).toBe('cpu'); // source unchanged
      expect(x.dtype).toBe(float32);
      // a dtype in the second argument
      const w = x.to('fake', { dtype: int32 });
      expect(w.dtype).toBe(int32);
      expect(await values(w)).toEqual([1, 2049]);
    });

    it('DEV-7: .to() of a non-contiguous view moves its logical values', async () => {
      const x = arange(6).reshape([2, 3]).t();
      expect(x.isContiguous()).toBe(false);
      const y = x.to('fake');
      expect(await y.toArray()).toEqual([[0, 3], [1, 4], [2, 5]]);
      expect(y.isContiguous()).toBe(true);
    });

    it('.to() with a bad target throws a TypeError', () => {
      expect(() => tensor([1]).to(42 as unknown as 'cpu')).toThrow(TypeError);
    });
  });

  describe('reads and XFER-*: moving between the fake device and cpu', () => {
    it('a fake tensor cannot be read synchronously: .to("cpu"), .cpu(), dataSync() throw and say to await', () => {
      const f = tensor([1, 2], { device: 'fake' });
      expectError(() => f.to('cpu'), TensorError, 'async read', 'toAsync');
      expectError(() => f.cpu(), TensorError, 'toAsync');
      expectError(() => f.dataSync(), TensorError, 'dataSync()', 'fake:0', 'await');
    });

    it('toAsync("cpu") and await item()/toArray()/data() read fake tensors', async () => {
      const f = tensor([[1, 2], [3, 4]], { device: 'fake' });
      const c = await f.toAsync('cpu');
      expect(c.device.toString()).toBe('cpu');
      expect(c.isPinned()).toBe(false); // XFER-3: a blocking copy is unpinned
      expect(Array.from(c.dataSync())).toEqual([1, 2, 3, 4]);
      expect(await f.toArray()).toEqual([[1, 2], [3, 4]]);
      expect(Array.from(await f.data())).toEqual([1, 2, 3, 4]);
      expect(await f.select(1, 1).select(0, 1).item()).toBe(4);
      const h = await f.toAsync({ device: 'cpu', dtype: float16 });
      expect(h.dtype).toBe(float16);
      expect(Array.from(h.dataSync())).toEqual([1, 2, 3, 4]);
      expect(await f.toAsync('fake')).toBe(f);
      const x = tensor([1]);
      expect(await x.toAsync('cpu')).toBe(x);
    });

    it('toAsync crosses fake devices (fake:0 → fake:1)', async () => {
      const f = tensor([5, 6], { device: 'fake:0' });
      const g = await f.toAsync('fake:1');
      expect(g.device.toString()).toBe('fake:1');
      expect(await values(g)).toEqual([5, 6]);
    });

    it('XFER-2/XFER-4: nonBlocking cpu→fake gives the same values, and a following op sees them', async () => {
      const x = rand([64]);
      const a = x.to('fake', { nonBlocking: true });
      const b = x.to('fake');
      expect(await values(a)).toEqual(await values(b));
      expect(await a.sum().item()).toBeCloseTo(await x.sum().item(), 4);
      const pinned = x.pinMemory();
      expect(await values(pinned.to({ device: 'fake', nonBlocking: true }))).toEqual(Array.from(x.dataSync()));
      expect(a.isPinned()).toBe(false); // PIN-2: never true on a non-CPU device
    });

    it('XFER-3: a non-blocking fake→cpu copy lands in pinned memory; values are the same', async () => {
      const f = tensor([1, 2, 3], { device: 'fake' });
      const p = await f.toAsync('cpu', { nonBlocking: true });
      expect(p.device.toString()).toBe('cpu');
      expect(p.isPinned()).toBe(true);
      expect(Array.from(p.dataSync())).toEqual([1, 2, 3]);
      const q = await f.toAsync({ device: 'cpu', nonBlocking: true });
      expect(q.isPinned()).toBe(true);
    });

    it('XFER-3: ...also when the dtype changes on the way', async () => {
      const f = tensor([1, 2049], { device: 'fake' });
      const p = await f.toAsync({ device: 'cpu', dtype: float16, nonBlocking: true });
      expect(p.dtype).toBe(float16);
      expect(Array.from(p.dataSync())).toEqual([1, 2048]);
      expect(p.isPinned()).toBe(true);
    });
  });

  describe('PIN-1 / PIN-2: pinned memory', () => {
    it('PIN-2: ordinary cpu tensors and all fake tensors are not pinned', () => {
      expect(tensor([1]).isPinned()).toBe(false);
      expect(zeros([1], { device: 'fake' }).isPinned()).toBe(false);
      expect(tensor([1]).add(1).isPinned()).toBe(false);
    });

    it('PIN-1: pinMemory() on cpu makes a pinned copy with the same values, dtype and shape', () => {
      const t = tensor([[1, 2], [3, 4]], { dtype: int32 });
      const p = t.pinMemory();
      expect(p).not.toBe(t);
      expect(p.isPinned()).toBe(true);
      expect(t.isPinned()).toBe(false);
      expect(p.dtype).toBe(int32);
      expect(p.shape).toEqual([2, 2]);
      expect(p.device.toString()).toBe('cpu');
      expect(Array.from(p.dataSync())).toEqual([1, 2, 3, 4]);
      p.fill_(0); // a copy, not a view
      expect(Array.from(t.dataSync())).toEqual([1, 2, 3, 4]);
      // a non-contiguous source
      const v = t.t().pinMemory();
      expect(Array.from(v.dataSync())).toEqual([1, 3, 2, 4]);
    });

    it('PIN-1: an already pinned tensor is returned as itself', () => {
      const p = tensor([1]).pinMemory();
      expect(p.pinMemory()).toBe(p);
    });

    it("PIN-1: pinning a fake tensor throws \"cannot pin '…' only dense CPU tensors can be pinned\"", () => {
      const f = zeros([2], { device: 'fake' });
      expectError(() => f.pinMemory(), TensorError, `cannot pin '${f.toString()}' only dense CPU tensors can be pinned`);
      expect(f.toString()).toContain('fake:0');
    });

    it('PIN-1: factory `pinMemory: true` on fake throws "Only dense CPU tensors can be pinned"; on cpu it pins', () => {
      expectError(() => zeros([2], { device: 'fake', pinMemory: true }), TensorError, 'Only dense CPU tensors can be pinned');
      expectError(() => tensor([1], { device: 'fake:1', pinMemory: true }), TensorError, 'Only dense CPU tensors can be pinned');
      const z = zeros([3], { pinMemory: true });
      expect(z.isPinned()).toBe(true);
      expect(Array.from(z.dataSync())).toEqual([0, 0, 0]);
      expect(tensor([4, 5], { pinMemory: true }).isPinned()).toBe(true);
    });
  });

  describe('the backend registry', () => {
    it('listBackends() lists registered names in registration order; getBackend returns a started backend', () => {
      expect(listBackends().slice(0, 2)).toEqual(['cpu', 'fake']);
      const b = getBackend('fake');
      expect(b.name).toBe('fake');
      expect(b.deviceCount).toBe(2);
      expect(b.capabilities.syncRead).toBe(false);
      expect('readSync' in b).toBe(false);
      expect(getBackend('cpu').name).toBe('cpu');
      expect(getBackend('cpu').capabilities.syncRead).toBe(true);
    });

    it('getBackend of an unregistered type names the package to import', () => {
      const e = expectError(() => getBackend('webgpu'), BackendUnavailableError, "No backend for device type 'webgpu' is registered", "import '@core/backend-webgpu'");
      expect(e.deviceType).toBe('webgpu');
      expect(e.reason).toBe('no backend registered');
      expectError(() => zeros([1], { device: 'cuda' }), BackendUnavailableError, "import '@core/backend-cuda'");
      expect(isAvailable('webgpu')).toBe(false);
      expect(isAvailable('cuda')).toBe(false);
      expect(isAvailable('cpu')).toBe(true);
      expect(isAvailable('fake')).toBe(true);
    });

    it('an unknown device type is a DeviceStringError that lists the registered types', () => {
      expectError(() => zeros([1], { device: 'tpu' }), DeviceStringError, 'Expected one of cpu, cuda, webgpu', 'fake', 'device type at start of device string: tpu');
    });

    it('a factory that throws: unavailable with its reason, in availableDevices(), getBackend and on use', async () => {
      registerBackend({ name: 'broken', priority: 1000, create: () => { throw new Error('no driver found'); } });
      expect(listBackends()).toContain('broken');
      expect(isAvailable('broken')).toBe(false);
      const all = await availableDevices();
      const entry = all.find((d) => d.type === 'broken');
      expect(entry).toEqual({ type: 'broken', available: false, reason: 'no driver found', priority: 1000, deviceCount: 0 });
      expectError(() => getBackend('broken'), BackendUnavailableError, "The 'broken' backend is unavailable: no driver found");
      expectError(() => zeros([1], { device: 'broken' }), BackendUnavailableError, 'no driver found');
      const cpuEntry = all.find((d) => d.type === 'cpu');
      expect(cpuEntry).toMatchObject({ available: true, priority: 100, deviceCount: 1 });
      expect(all.find((d) => d.type === 'fake')).toMatchObject({ available: true, priority: 50, deviceCount: 2 });
    });

    it('a backend that reports the wrong name or contract major version is unavailable with the reason', async () => {
      registerBackend({ name: 'liar', priority: 1, create: () => createFakeBackend() });
      expect(isAvailable('liar')).toBe(false);
      expectError(() => getBackend('liar'), BackendUnavailableError, "it reports the name 'fake' but was registered as 'liar'");
      registerBackend({ name: 'ancient', priority: 1, create: () => ({ ...createFakeBackend({ name: 'ancient' }), contractVersion: '0.9.0' }) as Backend<unknown> });
      expectError(() => getBackend('ancient'), BackendUnavailableError, 'contract 0.9.0');
    });

    it('registerBackend validates its argument', () => {
      expect(() => registerBackend({ name: 'bad name', priority: 1, create: () => createFakeBackend() })).toThrow(TypeError);
      expect(() => registerBackend({ name: 'x', priority: 1 } as never)).toThrow(TypeError);
    });

    it('an async factory: "starting" until it settles, then available and usable', async () => {
      let resolve!: (b: Backend<unknown>) => void;
      registerBackend({ name: 'slowdev', priority: 10, create: () => new Promise<Backend<unknown>>((r) => { resolve = r; }) });
      expect(isAvailable('slowdev')).toBe(false);
      expectError(() => getBackend('slowdev'), BackendUnavailableError, "The 'slowdev' backend is still starting", 'await bestDevice()');
      const pending = availableDevices();
      resolve(createFakeBackend({ name: 'slowdev' }));
      const all = await pending;
      expect(all.find((d) => d.type === 'slowdev')).toMatchObject({ available: true, priority: 10, deviceCount: 2 });
      expect(isAvailable('slowdev')).toBe(true);
      const t = tensor([1, 2], { device: 'slowdev:1' });
      expect(t.device.toString()).toBe('slowdev:1');
      expect(await values(t.mul(3))).toEqual([3, 6]);
    });

    it('a failing async factory is reported with its reason', async () => {
      registerBackend({ name: 'asyncbroken', priority: 2000, create: async () => { throw new Error('adapter request failed'); } });
      const all = await availableDevices();
      expect(all.find((d) => d.type === 'asyncbroken')).toMatchObject({ available: false, reason: 'adapter request failed', deviceCount: 0 });
      expect(isAvailable('asyncbroken')).toBe(false);
      expectError(() => getBackend('asyncbroken'), BackendUnavailableError, 'adapter request failed');
    });

    it('bestDevice() picks the available backend with the highest priority, skipping failed ones', async () => {
      // broken (1000) and asyncbroken (2000) failed above; cpu (100) beats fake (50) and slowdev (10)
      const best = await bestDevice();
      expect(best).toBeInstanceOf(Device);
      expect(best.toString()).toBe('cpu');
      registerBackend({ name: 'turbo', priority: 300, create: async () => createFakeBackend({ name: 'turbo' }) });
      const faster = await bestDevice();
      expect(faster.toString()).toBe('turbo:0');
      expect(zeros([1], { device: faster }).device.toString()).toBe('turbo:0');
    });
  });

  describe('two copies of core in one process', () => {
    it('loadedCoreCopies() is 1; loading the CJS build next to the ESM one warns about two copies', async () => {
      expect(loadedCoreCopies()).toBe(1);
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      try {
        const require = createRequire(import.meta.url);
        const second = require('@core/tensor') as typeof import('@core/tensor');
        expect(second.Tensor).not.toBe(Tensor); // really a second module instance
        expect(warn).toHaveBeenCalledTimes(1);
        const message = String(warn.mock.calls[0]![0]);
        expect(message).toContain('two copies of core are loaded');
        expect(message).toMatch(/versions \S+ and \S+/);
        expect(loadedCoreCopies()).toBe(2);
        expect(second.loadedCoreCopies()).toBe(2);
        // The copies share the registry (it lives on globalThis)...
        expect(second.listBackends()).toEqual(listBackends());
        // ...but not their classes: a tensor of one copy is not a Tensor to the other.
        const foreign = second.tensor([1, 2]);
        expect(foreign).not.toBeInstanceOf(Tensor);
        expect(() => tensor([1, 2]).add(foreign as unknown as Tensor)).toThrow(TypeError);
      } finally {
        warn.mockRestore();
      }
    });
  });
});
