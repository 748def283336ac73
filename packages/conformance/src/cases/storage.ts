// The storage contract, driven through the Backend object itself (alloc, write, read, readSync,
// free, memoryStats, synchronize, kernels on raw storages), plus the identity and capability
// declarations and the public API's allocation limit and dispose paths.
import {
  CONTRACT_VERSION, hostArrayFor, loadedCoreCopies, TensorError, zeros, empty, float32,
  bfloat16BitsToNumber, float16BitsToNumber, type DTypeName, type HostArray, type TensorRef,
} from '@core/tensor';
import { expectEqual, expectRejects, expectThrows, expectTrue, fmt } from '../check.js';
import { ALL_DTYPES } from '../oracle/dtype.js';
import { Rng } from '../rng.js';
import { fail, type Case, type Env } from '../types.js';

const HOST_TYPE: Record<DTypeName, string> = {
  float32: 'Float32Array', float16: 'Uint16Array', bfloat16: 'Uint16Array', float64: 'Float64Array', int32: 'Int32Array', bool: 'Uint8Array',
};
const ITEMSIZE: Record<DTypeName, number> = { float32: 4, float16: 2, bfloat16: 2, float64: 8, int32: 4, bool: 1 };

/** Host data covering the dtype's interesting values: every kind of float (bit patterns for halves). */
function hostData(dtype: DTypeName, n: number, seed: string): HostArray {
  const rng = new Rng(seed);
  const out = hostArrayFor(dtype, n);
  const specials = [0, -0, Infinity, -Infinity, NaN, 1e-40, 5e-324, 3.4e38];
  for (let i = 0; i < n; i++) {
    switch (dtype) {
      case 'float16':
      case 'bfloat16': out[i] = rng.int(0, 65536); break;
      case 'int32': out[i] = rng.int(-(2 ** 31), 2 ** 31); break;
      case 'bool': out[i] = rng.int(0, 2); break;
      default: out[i] = i < specials.length ? specials[i]! : (rng.next() - 0.5) * 10 ** rng.int(-30, 30);
    }
  }
  return out;
}

/** Element i as a comparable value: halves decoded, so every NaN pattern compares as NaN. */
function valueAt(dtype: DTypeName, a: HostArray, i: number): number {
  const v = a[i]!;
  if (dtype === 'float16') return float16BitsToNumber(v);
  if (dtype === 'bfloat16') return bfloat16BitsToNumber(v);
  return v;
}

/** Same values (bit patterns for non-NaN halves; NaN payloads may differ, RND-5), same host array type. */
function expectSameHost(label: string, dtype: DTypeName, got: HostArray, want: HostArray): void {
  if (got?.constructor?.name !== HOST_TYPE[dtype]) fail(`${label}: read returned ${got?.constructor?.name ?? typeof got}, expected a ${HOST_TYPE[dtype]} for ${dtype}`);
  if (got.length !== want.length) fail(`${label}: read returned ${got.length} elements, expected ${want.length}`);
  for (let i = 0; i < want.length; i++) {
    const g = valueAt(dtype, got, i);
    const w = valueAt(dtype, want, i);
    const same = Number.isNaN(w) ? Number.isNaN(g) : Object.is(g, w) && (dtype === 'float16' || dtype === 'bfloat16' ? got[i] === want[i] : true);
    if (!same) fail(`${label}: element ${i} is ${fmt(g)}, expected ${fmt(w)} (a storage must hold exactly what was written)`);
  }
}

function contiguousRef(storage: unknown, dtype: DTypeName, shape: number[], strides?: number[], offset = 0): TensorRef<unknown> {
  const s = strides ?? shape.map((_, i) => shape.slice(i + 1).reduce((a, b) => a * b, 1));
  return { storage, dtype, shape, strides: s, offset };
}

export function storageCases(env: Env): Case[] {
  const b = env.backend;
  const cases: Case[] = [];
  const add = (id: string, op: string, dtype: DTypeName | '-', run: Case['run'], skip?: string) =>
    cases.push({ id: `storage/${id}`, category: 'storage', op, dtype, run, ...(skip ? { skip } : {}) });

  add('identity', 'identity', '-', () => {
    expectEqual('name', b.name, env.name);
    const major = (v: string) => v.split('.')[0];
    expectTrue('contractVersion', typeof b.contractVersion === 'string' && /^\d+\.\d+\.\d+/.test(b.contractVersion), `'${b.contractVersion}' is not semver`);
    expectEqual(`contractVersion major (core implements ${CONTRACT_VERSION})`, major(b.contractVersion), major(CONTRACT_VERSION));
    expectTrue('deviceCount', Number.isInteger(b.deviceCount) && b.deviceCount >= 1, `got ${b.deviceCount}`);
  });

  add('capabilities', 'identity', '-', () => {
    const c = b.capabilities;
    for (const [name, s] of Object.entries(c.dtypes)) {
      if (!(ALL_DTYPES as readonly string[]).includes(name)) fail(`capabilities.dtypes has unknown dtype '${name}'`);
      if (typeof s?.storage !== 'boolean' || typeof s.compute !== 'boolean') fail(`capabilities.dtypes.${name} needs boolean storage and compute`);
      if (s.compute && !s.storage) fail(`capabilities.dtypes.${name}: compute without storage`);
    }
    expectEqual('syncRead matches whether readSync exists', c.syncRead, typeof b.readSync === 'function');
    expectTrue('maxBufferBytes', c.maxBufferBytes > 0, `got ${c.maxBufferBytes}`);
    expectTrue('features', Array.isArray(c.features));
    expectTrue('strictNumerics', typeof c.strictNumerics === 'boolean');
    expectTrue('pinnedMemory', typeof c.pinnedMemory === 'boolean');
  });

  add('required-dtypes', 'identity', '-', () => {
    // Core allocates bool results (comparisons) and int32 ones (argmax, indices), and creates float32 by default.
    for (const d of ['float32', 'int32', 'bool'] as const) expectTrue(`${d} storage`, env.storage.has(d), `core needs ${d} storage`);
    expectTrue('float32 compute', env.compute.has('float32'), 'core computes in float32 by default (random numbers, int promotion)');
  });

  add('one-core-copy', 'identity', '-', () => {
    expectEqual('loadedCoreCopies() (a second copy of @core/tensor means two registries)', loadedCoreCopies(), 1);
  });

  for (const dtype of ALL_DTYPES) {
    const skip = env.storage.has(dtype) ? undefined : `the ${env.name} backend does not declare storage for ${dtype}`;
    add(`roundtrip/${dtype}`, 'alloc/write/read', dtype, async () => {
      const data = hostData(dtype, 1000, `roundtrip/${dtype}`);
      const s = b.alloc(0, dtype, data.length);
      try {
        b.write(s, data, 0);
        const pending = b.read(s);
        expectTrue('read() returns a promise', typeof (pending as Promise<unknown>)?.then === 'function');
        expectSameHost(`${dtype} write then read`, dtype, await pending, data);
      } finally {
        b.free(s);
      }
    }, skip);
    add(`readSync/${dtype}`, 'readSync', dtype, () => {
      const data = hostData(dtype, 257, `readSync/${dtype}`);
      const s = b.alloc(0, dtype, data.length);
      try {
        b.write(s, data, 0);
        expectSameHost(`${dtype} write then readSync`, dtype, b.readSync!(s), data);
      } finally {
        b.free(s);
      }
    }, skip ?? (env.syncRead ? undefined : `the ${env.name} backend declares syncRead: false`));
    add(`write-offset/${dtype}`, 'alloc/write/read', dtype, async () => {
      const data = hostData(dtype, 40, `write-offset/${dtype}`);
      const part = hostData(dtype, 9, `write-offset-part/${dtype}`);
      const s = b.alloc(0, dtype, data.length);
      try {
        b.write(s, data, 0);
        b.write(s, part, 13);
        const want = data.slice() as HostArray;
        want.set(part as never, 13);
        expectSameHost(`${dtype} write of 9 elements at offset 13`, dtype, await b.read(s), want);
      } finally {
        b.free(s);
      }
    }, skip);
    add(`empty/${dtype}`, 'alloc/write/read', dtype, async () => {
      const s = b.alloc(0, dtype, 0);
      try {
        expectSameHost(`${dtype} storage of 0 elements`, dtype, await b.read(s), hostArrayFor(dtype, 0));
      } finally {
        b.free(s);
      }
    }, skip);
    add(`read-returns-a-copy/${dtype}`, 'alloc/write/read', dtype, async () => {
      const data = hostData(dtype, 16, `copy/${dtype}`);
      const s = b.alloc(0, dtype, data.length);
      try {
        b.write(s, data, 0);
        const first = await b.read(s);
        first.fill(0 as never);
        expectSameHost(`${dtype} read after changing a previous read's array (the caller owns what read returns)`, dtype, await b.read(s), data);
      } finally {
        b.free(s);
      }
    }, skip);
    add(`memory-stats/${dtype}`, 'memoryStats', dtype, () => {
      // No await between the calls: nothing (not even the garbage collector's finalizers) runs in between.
      const before = b.memoryStats(0);
      const n = 4096;
      const s = b.alloc(0, dtype, n);
      const during = b.memoryStats(0);
      b.free(s);
      const after = b.memoryStats(0);
      expectTrue('allocatedBytes grows by at least the allocation', during.allocatedBytes - before.allocatedBytes >= n * ITEMSIZE[dtype],
        `${before.allocatedBytes} → ${during.allocatedBytes} for ${n} ${dtype} elements`);
      expectEqual('allocations after one alloc', during.allocations, before.allocations + 1);
      expectTrue('reservedBytes ≥ allocatedBytes', during.reservedBytes >= during.allocatedBytes, `${during.reservedBytes} < ${during.allocatedBytes}`);
      expectEqual('allocatedBytes after free', after.allocatedBytes, before.allocatedBytes);
      expectEqual('allocations after free', after.allocations, before.allocations);
    }, skip);
  }

  add('double-free', 'free', '-', () => {
    const before = b.memoryStats(0);
    const s = b.alloc(0, 'float32', 64);
    b.free(s);
    try {
      b.free(s); // core never does this; a backend may throw, but must not corrupt its accounting
    } catch {
      /* throwing is fine */
    }
    const after = b.memoryStats(0);
    expectEqual('allocatedBytes after free + double free', after.allocatedBytes, before.allocatedBytes);
    expectEqual('allocations after free + double free', after.allocations, before.allocations);
  });

  add('invalid-device-index', 'alloc/write/read', '-', () => {
    let threw = false;
    try {
      const s = b.alloc(b.deviceCount, 'float32', 4);
      b.free(s);
    } catch {
      threw = true;
    }
    expectTrue(`alloc on device ${b.deviceCount} (the backend has ${b.deviceCount})`, threw, 'should throw');
  });

  add('synchronize', 'synchronize', '-', async () => {
    for (let i = 0; i < b.deviceCount; i++) await b.synchronize(i);
  });

  add('large-buffer', 'alloc/write/read', 'float32', async () => {
    const bytes = Math.min(32 * 2 ** 20, b.capabilities.maxBufferBytes);
    const n = Math.floor(bytes / 4);
    const head = Float32Array.from({ length: 4096 }, (_, i) => i + 0.5);
    const tail = Float32Array.from({ length: 4096 }, (_, i) => -i - 0.25);
    const before = b.memoryStats(0);
    const s = b.alloc(0, 'float32', n);
    const during = b.memoryStats(0);
    try {
      expectTrue('allocatedBytes for a large buffer', during.allocatedBytes - before.allocatedBytes >= n * 4, `${during.allocatedBytes - before.allocatedBytes} < ${n * 4}`);
      b.write(s, head, 0);
      b.write(s, tail, n - tail.length);
      const back = (await b.read(s)) as Float32Array;
      expectEqual(`length of a ${n}-element read`, back.length, n);
      for (let i = 0; i < head.length; i++) if (back[i] !== head[i]) fail(`large buffer: element ${i} is ${back[i]}, expected ${head[i]}`);
      for (let i = 0; i < tail.length; i++) if (back[n - tail.length + i] !== tail[i]) fail(`large buffer: element ${n - tail.length + i} is ${back[n - tail.length + i]}, expected ${tail[i]}`);
    } finally {
      b.free(s);
    }
  });

  add('limit', 'alloc/write/read', 'float32', () => {
    const n = Math.floor(b.capabilities.maxBufferBytes / 4) + 1;
    const before = b.memoryStats(0);
    expectThrows(`empty([${n}]) over maxBufferBytes ${b.capabilities.maxBufferBytes}`, () => empty([n], { device: env.device, dtype: float32 }), TensorError, 'largest buffer');
    expectEqual('allocations after a refused allocation (the backend is never asked)', b.memoryStats(0).allocations, before.allocations);
  }, Number.isSafeInteger(Math.floor(b.capabilities.maxBufferBytes / 4) + 1) ? undefined : 'maxBufferBytes is not a finite safe integer');

  add('ordering', 'kernels', 'float32', async () => {
    // Work may be queued, but in call order, and read waits for it.
    const k = b.kernels;
    const src = b.alloc(0, 'float32', 8);
    const dst = b.alloc(0, 'float32', 8);
    try {
      b.write(src, Float32Array.from([1, 2, 3, 4, 5, 6, 7, 8]), 0);
      k.copy(contiguousRef(src, 'float32', [8]), contiguousRef(dst, 'float32', [8]));
      k.fill(contiguousRef(src, 'float32', [8]), 0);
      k.fill(contiguousRef(dst, 'float32', [2], [4], 1), -1);
      expectEqual('copy then fill: destination', Array.from(await b.read(dst)).join(','), '1,-1,3,4,5,-1,7,8');
      expectEqual('copy then fill: source', Array.from(await b.read(src)).join(','), '0,0,0,0,0,0,0,0');
    } finally {
      b.free(src);
      b.free(dst);
    }
  });

  add('strided-kernel-copy', 'kernels', 'float32', async () => {
    // A transposed, offset input view copied into a strided output view, through the kernel directly.
    const src = b.alloc(0, 'float32', 13);
    const dst = b.alloc(0, 'float32', 12);
    try {
      b.write(src, Float32Array.from({ length: 13 }, (_, i) => i), 0);
      b.write(dst, new Float32Array(12).fill(-1), 0);
      b.kernels.copy(contiguousRef(src, 'float32', [3, 4], [1, 3], 1), contiguousRef(dst, 'float32', [3, 4], [1, 3], 0));
      // out[i][j] at i + 3j holds in[i][j] at 1 + i + 3j.
      expectEqual('strided copy', Array.from(await b.read(dst)).join(','), Array.from({ length: 12 }, (_, p) => p + 1).join(','));
    } finally {
      b.free(src);
      b.free(dst);
    }
  });

  add('multi-device-stats', 'memoryStats', '-', () => {
    const before0 = b.memoryStats(0);
    const before1 = b.memoryStats(1);
    const s = b.alloc(1, 'float32', 1024);
    const after0 = b.memoryStats(0);
    const after1 = b.memoryStats(1);
    b.free(s);
    expectEqual('device 0 allocations after an alloc on device 1', after0.allocations, before0.allocations);
    expectEqual('device 1 allocations after an alloc on device 1', after1.allocations, before1.allocations + 1);
  }, b.deviceCount > 1 ? undefined : `the ${env.name} backend has one device`);

  add('dispose', 'free', 'float32', () => {
    // Measured around the disposes alone: an allocation may free storages the garbage collector
    // found before (core reclaims them synchronously), which would move a before/after pair.
    const t = zeros([256], { device: env.device });
    const during = b.memoryStats(0);
    t.dispose();
    t.dispose(); // a second dispose is a no-op
    const after = b.memoryStats(0);
    expectTrue('dispose() of a 256-element float32 tensor frees ≥ 1024 bytes', during.allocatedBytes - after.allocatedBytes >= 1024);
    expectEqual('allocations after dispose()', after.allocations, during.allocations - 1);
    expectThrows('using a disposed tensor', () => t.add(1), TensorError, 'disposed');
  });

  add('view-keeps-storage', 'free', 'float32', async () => {
    const t = zeros([4, 4], { device: env.device });
    const v = t.t();
    const withBoth = b.memoryStats(0).allocations;
    t.dispose();
    expectTrue('a view keeps its storage after the base is disposed', b.memoryStats(0).allocations === withBoth);
    expectEqual('reading the view', (await v.data()).length, 16);
    // Measured around the dispose alone: across an await the garbage collector may free other storages.
    const held = b.memoryStats(0).allocations;
    v.dispose();
    expectEqual('allocations after the last view is disposed', b.memoryStats(0).allocations, held - 1);
  });

  add('read-freed-storage', 'free', 'float32', async () => {
    const s = b.alloc(0, 'float32', 4);
    b.free(s);
    // Either a synchronous throw or a rejected promise: never stale data.
    await expectRejects('read() of a freed storage', async () => b.read(s), Error);
  });

  return cases;
}
