// PIN-3 on a CPU-only process: pinMemory warns once and yields unpinned batches.
import '@core/backend-cpu';
import { arange } from '@core/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DataLoader, NO_ACCELERATOR_WARNING, pinnedMemoryAvailable, TensorDataset } from '../src/index.js';

const loader = (pinMemory?: boolean) =>
  new DataLoader(new TensorDataset(arange(10).reshape([5, 2]), arange(5)), { batchSize: 2, ...(pinMemory === undefined ? {} : { pinMemory }) });

describe('PIN-3 without an accelerator', () => {
  afterEach(() => vi.restoreAllMocks());

  it('PIN-3: pinMemory defaults to false and batches are unpinned (PIN-2)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const l = loader();
    expect(l.pinMemory).toBe(false);
    for await (const [xb, yb] of l) expect([xb.isPinned(), yb.isPinned()]).toEqual([false, false]);
    expect(warn).not.toHaveBeenCalled();
  });

  it("PIN-3: pinMemory: true warns PyTorch's message once per process and yields unpinned batches", async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(pinnedMemoryAvailable()).toBe(false);
    const a = loader(true);
    let batches = 0;
    for (let epoch = 0; epoch < 2; epoch++) {
      for await (const [xb, yb] of a) {
        expect([xb.isPinned(), yb.isPinned()]).toEqual([false, false]);
        batches++;
      }
    }
    for await (const _ of loader(true)) batches++; // a second loader does not warn again
    expect(batches).toBe(9);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      "'pin_memory' argument is set as true but no accelerator is found, then device pinned memory won't be used.",
    );
    expect(NO_ACCELERATOR_WARNING).toBe(warn.mock.calls[0]![0]);
  });
});
