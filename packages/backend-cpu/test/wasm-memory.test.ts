// Tensors in the wasm heap are freed by finalizers, which need the JS engine to collect their
// handles. It would not, for lack of heap growth it can see: a loop like the training demo's (a
// macrotask turn per batch, as the DataLoader gives, and never a gc call) grew to gigabytes of live
// tensors. In Node core counts them and asks for collections itself (docs/guides/memory.md);
// elsewhere the heap's ballast buffers make the engine see them. Live bytes stay near what the
// loop really holds.
import { full, memoryStats } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import '../src/index.js';

describe('wasm heap memory', () => {
  it('keeps live bytes bounded in a DataLoader-like loop without gc calls (200 steps × 8 MiB)', async () => {
    for (let step = 0; step < 200; step++) {
      const x = full([1024, 1024], step); // 4 MiB
      const y = x.mul(2); // 4 MiB
      expect(y.numel()).toBe(1 << 20);
      await new Promise((resolve) => setImmediate(resolve)); // the DataLoader's turn of the event loop
    }
    const live = memoryStats('cpu').allocatedBytes;
    expect(live).toBeLessThan(300 * 2 ** 20);
  });
});
