// A convolution's float32 intermediates are freed when the call returns, not left to the garbage
// collector: in a training loop that never yields, what is left to it decides how often core
// forces a full collection (docs/guides/memory.md). Checked by watching the cpu backend's frees.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import { autocast, bfloat16, getBackend, randn } from '@core/tensor';
import { F } from '../src/index.js';

/** The element counts of the float32 storages freed while `fn` runs (no garbage collection can run inside). */
function freedDuring(fn: () => unknown): number[] {
  const backend = getBackend('cpu') as unknown as { free(s: unknown): void };
  const free = backend.free;
  const freed: number[] = [];
  backend.free = function (this: unknown, s: unknown) {
    const { dtype, numel } = s as { dtype: string; numel: number };
    if (dtype === 'float32') freed.push(numel);
    return free.call(this, s);
  };
  try {
    fn();
  } finally {
    backend.free = free;
  }
  return freed;
}

describe('conv2d frees its float32 intermediates', () => {
  const x = randn([4, 3, 10, 10]).requiresGrad_();
  const w = randn([5, 3, 3, 3]).requiresGrad_();
  const b = randn([5]).requiresGrad_();
  const outputElements = 4 * 5 * 8 * 8;

  it('float32 with a bias: the product before the bias is freed when the call returns', () => {
    let y = null as unknown;
    const freed = freedDuring(() => (y = F.conv2d(x, w, b)));
    expect(freed).toContain(outputElements);
    expect(y).not.toBeNull();
  });

  it('under bf16 autocast: the product and the biased float32 sums are both freed once rounded', () => {
    const freed = freedDuring(() => autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => F.conv2d(x, w, b)));
    expect(freed.filter((n) => n === outputElements)).toHaveLength(2);
  });
});
