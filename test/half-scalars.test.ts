// TP-6 with scalars: half-precision tensors compute with a JS scalar kept in float32 (PyTorch's
// opmath) and round once, rather than rounding the scalar to the half type first.
import '@core/backend-cpu';
import { bfloat16, float16, roundToBFloat16, roundToFloat16, tensor } from '@core/tensor';
import { describe, expect, it } from 'vitest';

const f32 = Math.fround;

describe('TP-6: half-precision ops with scalars', () => {
  it('float16 · (1 + 2^-11 + 2^-14) rounds once: 3.001953125, not the 3.00390625 a pre-rounded scalar gives', async () => {
    const s = 1 + 2 ** -11 + 2 ** -14;
    const [got] = (await tensor([3], { dtype: float16 }).mul(s).toArray()) as number[];
    expect(got).toBe(roundToFloat16(f32(3 * f32(s))));
    expect(got).toBe(3.001953125);
    expect(roundToFloat16(3 * roundToFloat16(s))).toBe(3.00390625); // what rounding the scalar first would give
  });

  it('bfloat16 + (2^-8 + 2^-17): the low bits of the scalar break the tie upwards, as in float32 math', async () => {
    const s = 2 ** -8 + 2 ** -17; // rounded to bf16 first it would be 2^-8, an exact tie that rounds 1 + 2^-8 down to 1
    const [got] = (await tensor([1], { dtype: bfloat16 }).add(s).toArray()) as number[];
    expect(got).toBe(roundToBFloat16(f32(1 + f32(s))));
    expect(got).toBe(1 + 2 ** -7);
    expect(roundToBFloat16(1 + roundToBFloat16(s))).toBe(1);
  });

  it('keeps the half dtype, and tensor-with-tensor ops are unchanged', async () => {
    const x = tensor([2049, 3], { dtype: float16 });
    expect(x.mul(1.5).dtype).toBe(float16);
    const y = x.add(tensor([1, 1], { dtype: float16 }));
    // 2049 is stored as 2048 (tie to even); 2048 + 1 is again a tie, so it stays 2048 (RND-3).
    expect(await y.toArray()).toEqual([2048, 4]);
  });
});
