// The intermediates of nn's functions are freed as soon as nothing needs them, not left to the
// garbage collector: a convolution's float32 sums when the call returns, its columns (the im2col
// copy) and a dropout mask or max-pool's indices when the backward pass is done with them. In a
// training loop that never yields, what is left to the collector decides how often core forces a
// full collection (docs/guides/memory.md). Checked by watching the cpu backend's frees.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import { autocast, bfloat16, getBackend, noGrad, randn, setFusedKernelsEnabled, type Tensor } from '@core/tensor';
import { F } from '../src/index.js';

/** What the cpu backend allocates and frees while `fn` runs (no garbage collection can run inside). */
interface Traffic {
  /** Storages allocated, by `dtype:numel`. */
  readonly allocated: Map<string, object[]>;
  /** Storages freed, as `dtype:numel`. */
  readonly freed: string[];
  /** The storages freed. */
  readonly freedStorages: Set<object>;
}

function traffic(fn: () => unknown): Traffic {
  const backend = getBackend('cpu') as unknown as { alloc(...a: unknown[]): object; free(s: unknown): void };
  const { alloc, free } = backend;
  const t: Traffic = { allocated: new Map(), freed: [], freedStorages: new Set() };
  const key = (s: object) => `${(s as { dtype: string }).dtype}:${(s as { numel: number }).numel}`;
  backend.alloc = function (this: unknown, ...args: unknown[]) {
    const s = alloc.apply(this, args);
    t.allocated.set(key(s), [...(t.allocated.get(key(s)) ?? []), s]);
    return s;
  };
  backend.free = function (this: unknown, s: unknown) {
    t.freed.push(key(s as object));
    t.freedStorages.add(s as object);
    return free.call(this, s);
  };
  try {
    fn();
  } finally {
    backend.alloc = alloc;
    backend.free = free;
  }
  return t;
}

/** The storages freed while `fn` runs, as `dtype:numel`. */
function freedDuring(fn: () => unknown): string[] {
  return traffic(fn).freed;
}

/** The one storage of `key` the forward pass made, and whether `fn` (no earlier) freed it. */
function madeThenFreed(forward: Traffic, key: string, fn: () => unknown): boolean {
  const made = forward.allocated.get(key) ?? [];
  expect(made, `the forward pass allocates one ${key} storage`).toHaveLength(1);
  expect(forward.freedStorages.has(made[0]!), `${key} freed by the forward pass`).toBe(false);
  return traffic(fn).freedStorages.has(made[0]!);
}

const count = (list: readonly string[], item: string) => list.filter((s) => s === item).length;

describe('conv2d frees its intermediates', () => {
  const x = randn([4, 3, 10, 10]).requiresGrad_();
  const w = randn([5, 3, 3, 3]).requiresGrad_();
  const b = randn([5]).requiresGrad_();
  const outputElements = 4 * 5 * 8 * 8;
  const columnElements = 4 * 27 * 64; // [N, C·kh·kw, oh·ow]

  it('float32 with a bias: the product before the bias is freed when the call returns', () => {
    let y = null as unknown;
    const freed = freedDuring(() => (y = F.conv2d(x, w, b)));
    expect(freed).toContain(`float32:${outputElements}`);
    expect(y).not.toBeNull();
  });

  it('under bf16 autocast: the product and the biased float32 sums are both freed once rounded (or never made, by the fused matmulRounded)', () => {
    const conv = () => autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => F.conv2d(x, w, b));
    // The cpu backend's matmulRounded adds the bias and rounds as its GEMM stores the result.
    expect(typeof getBackend('cpu').fused?.matmulRounded).toBe('function');
    expect(traffic(conv).allocated.has(`float32:${outputElements}`)).toBe(false);
    setFusedKernelsEnabled(false);
    try {
      expect(count(freedDuring(conv), `float32:${outputElements}`)).toBe(2);
    } finally {
      setFusedKernelsEnabled(true);
    }
  });

  it('float32: the columns are kept for the weight\'s gradient and freed by the backward pass, or at once without grad', () => {
    let y!: Tensor;
    const forward = traffic(() => (y = F.conv2d(x, w, b)));
    expect(madeThenFreed(forward, `float32:${columnElements}`, () => y.sum().backward())).toBe(true);
    const inference = traffic(() => noGrad(() => F.conv2d(x, w, b)));
    expect(inference.freedStorages.has(inference.allocated.get(`float32:${columnElements}`)![0]!)).toBe(true);
  });

  it('under bf16 autocast: a 16-bit input is not widened, and its gradient is summed into place with no float32 columns (the fused matmulStridedSum)', () => {
    expect(typeof getBackend('cpu').fused?.matmulStridedSum).toBe('function');
    const x16 = x.to(bfloat16).detach().requiresGrad_();
    let y!: Tensor;
    const forward = traffic(() => (y = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => F.conv2d(x16, w, b))));
    expect(forward.allocated.has(`float32:${x.numel()}`)).toBe(false);
    const backward = traffic(() => y.float().sum().backward());
    expect(backward.allocated.has(`float32:${columnElements}`)).toBe(false);
    expect(backward.allocated.has(`float32:${x.numel()}`)).toBe(false);
    expect(x16.grad!.dtype).toBe(bfloat16);
  });

  it('under bf16 autocast: the 16-bit columns are freed by the backward pass', () => {
    let y!: Tensor;
    const forward = traffic(() => (y = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => F.conv2d(x, w, b))));
    expect(madeThenFreed(forward, `bfloat16:${columnElements}`, () => y.float().sum().backward())).toBe(true);
  });

  it('a retained graph keeps the columns for the next backward pass, which frees them and gives the same gradient', async () => {
    let y!: Tensor;
    const forward = traffic(() => (y = F.conv2d(x, w, b).sum()));
    w.grad = null;
    expect(madeThenFreed(forward, `float32:${columnElements}`, () => y.backward(undefined, { retainGraph: true }))).toBe(false);
    const first = Array.from(await w.grad!.data());
    w.grad = null;
    expect(madeThenFreed(forward, `float32:${columnElements}`, () => y.backward())).toBe(true);
    expect(Array.from(await w.grad!.data())).toEqual(first);
  });
});

describe('dropout and max-pool free what only their backward pass reads', () => {
  const x = randn([8, 4, 6, 6]).requiresGrad_();
  const n = 8 * 4 * 6 * 6;

  it('dropout: the uniform draws and the bool mask are freed at once, the scaled mask by the backward pass', () => {
    let y!: Tensor;
    const forward = traffic(() => (y = F.dropout(x, 0.5)));
    const [draws, mask] = forward.allocated.get(`float32:${n}`)!;
    expect(forward.freedStorages.has(draws!)).toBe(true);
    expect(forward.freed).toContain(`bool:${n}`);
    expect(forward.freedStorages.has(mask!)).toBe(false);
    expect(traffic(() => y.sum().backward()).freedStorages.has(mask!)).toBe(true);
  });

  it('max-pool: the indices are freed by the backward pass', () => {
    let y!: Tensor;
    const forward = traffic(() => (y = F.maxPool2d(x, 2)));
    expect(madeThenFreed(forward, `int32:${n / 4}`, () => y.sum().backward())).toBe(true);
  });
});
