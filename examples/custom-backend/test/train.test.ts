// The tiny training run on 'jsref' learns, and follows the cpu's run step by step (the same
// seeded data and weights; float32 rounding differs only where accumulation order does).
import { describe, expect, it } from 'vitest';
import '@core/backend-cpu';
import '../src/index.js';
import { trainTiny } from '../src/train.js';

describe('training on jsref', () => {
  it('lowers the loss and matches the cpu backend', async () => {
    const mine = await trainTiny('jsref:0', 12);
    const reference = await trainTiny('cpu', 12);
    expect(mine.losses.at(-1)!).toBeLessThan(mine.losses[0]! * 0.5);
    mine.losses.forEach((l, i) => expect(Math.abs(l - reference.losses[i]!)).toBeLessThan(1e-4 * Math.max(1, reference.losses[i]!)));
    expect(mine.accuracy).toBeGreaterThan(0.9);
  });
  it('runs on the second device too', async () => {
    const { losses } = await trainTiny('jsref:1', 3);
    expect(losses).toHaveLength(3);
  });
});
