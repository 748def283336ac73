// compile(fn) without a backend: options are checked, CORE_COMPILE=0 and mode 'eager' pass calls
// through, JS in fn runs only while tracing, a changed number argument retraces, and past
// recompileLimit new signatures run eagerly with one warning; and, on a host-memory backend whose
// kernels are never called, which `.grad` a replay attaches. The replay of tensor programs is
// tested on the cpu backend in packages/optim/test/compile.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CONTRACT_VERSION, type Backend, type Kernels } from '../src/backend/contract.js';
import { registerBackend } from '../src/backend/registry.js';
import { compile } from '../src/compile/compile.js';
import { tensor, type Tensor } from '../src/index.js';

/** A compiled function of numbers and how often its body ran. */
function counted(options?: Parameters<typeof compile>[1]) {
  const runs = { n: 0 };
  const f = compile((a: number, b: number) => {
    runs.n++;
    return a + b;
  }, options);
  return { f, runs };
}

afterEach(() => {
  delete process.env.CORE_COMPILE;
  vi.restoreAllMocks();
});

describe('compile without tensors', () => {
  it('checks its options: TypeErrors naming the keyword', () => {
    expect(() => compile(() => 0, { onBrake: 'eager' } as never)).toThrow("compile() got an unexpected keyword argument 'onBrake' (it takes onBreak, recompileLimit, mode)");
    expect(() => compile(() => 0, { onBreak: 'ignore' as never })).toThrow("compile(): onBreak must be 'error' or 'eager', got ignore");
    expect(() => compile(() => 0, { recompileLimit: 0 })).toThrow('compile(): recompileLimit must be a positive integer, got 0');
    expect(() => compile(() => 0, { mode: 'fast' as never })).toThrow("compile(): mode must be 'replay' or 'eager', got fast");
  });

  it('runs the body on the two tracing calls only, then replays the captured result', () => {
    const { f, runs } = counted();
    expect([f(1, 2), f(1, 2), f(1, 2), f(1, 2)]).toEqual([3, 3, 3, 3]);
    expect(runs.n).toBe(2);
    expect(f.explain()).toMatchObject({ calls: 4, replays: 2, mode: 'replay' });
  });

  it('guards number arguments by value: a new value traces again, and explain() names the guard', () => {
    const { f, runs } = counted();
    f(1, 2);
    f(1, 2);
    f(1, 5);
    expect(runs.n).toBe(3);
    expect(f.explain().lastRetraceReason).toBe('guard failed: arg 1: number 2 → arg 1: number 5');
  });

  it('CORE_COMPILE=0 and mode eager pass every call through', () => {
    process.env.CORE_COMPILE = '0';
    const env = counted();
    const mode = counted({ mode: 'eager' });
    delete process.env.CORE_COMPILE;
    for (let i = 0; i < 3; i++) {
      env.f(1, 1);
      mode.f(1, 1);
    }
    expect([env.runs.n, mode.runs.n]).toEqual([3, 3]);
    expect(env.f.explain().mode).toBe('eager (CORE_COMPILE=0)');
    expect(mode.f.explain().mode).toBe("eager (mode: 'eager')");
  });

  it('past recompileLimit, new signatures run eagerly with one warning', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const { f, runs } = counted({ recompileLimit: 2 });
    for (const b of [1, 2, 3, 4]) expect(f(0, b)).toBe(b);
    expect(runs.n).toBe(4);
    expect(f.explain().programs).toHaveLength(0); // each signature ran once: nothing captured yet
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0])).toContain('recompileLimit (2) reached');
  });
});

/** A host-memory backend named cpu whose kernels are never called: enough to make tensors and set `.grad`s. */
function memoryBackend(): Backend<Float32Array> {
  return {
    name: 'cpu',
    contractVersion: CONTRACT_VERSION,
    deviceCount: 1,
    capabilities: {
      dtypes: { float32: { storage: true, compute: true } },
      syncRead: true,
      maxBufferBytes: 1 << 20,
      features: [],
      strictNumerics: true,
      pinnedMemory: false,
    },
    alloc: (_index, _dtype, numel) => new Float32Array(numel),
    free: () => {},
    write: (storage, data, offset) => storage.set(data, offset),
    read: async (storage) => storage.slice(),
    readSync: (storage) => storage.slice(),
    synchronize: async () => {},
    memoryStats: () => ({ allocatedBytes: 0, allocations: 0, reservedBytes: 0 }),
    kernels: new Proxy({}, { get: () => () => { throw new Error('no kernel is called here'); } }) as Kernels<Float32Array>,
  };
}

describe('compile with .grad tensors', () => {
  it('a replay attaches the .grad a call sets from its own argument, as eager does, not the argument of the capture', () => {
    registerBackend({ name: 'cpu', priority: 0, create: memoryBackend });
    const p = tensor([0, 0]).requiresGrad_();
    const step = compile((g: Tensor) => {
      p.grad = g;
    });
    for (const v of [1, 2, 3, 4]) {
      const g = tensor([v, v]);
      step(g);
      expect(p.grad).toBe(g);
    }
    expect(step.explain().replays).toBe(2);
  });
});
