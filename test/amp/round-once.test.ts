// AC-8 with a bias: PyTorch's linear and conv2d add the bias to the GEMM's float32 accumulator and
// round once to the region dtype. Checked bit for bit against PyTorch 1.13 on two real MNIST digits
// (fixtures/round-once.py writes the fixture) and on the smallest case where a second rounding shows.
import '@core/backend-cpu';
import { readFileSync } from 'node:fs';
import { F } from '@core/nn';
import { autocast, bfloat16, float16, tensor, type Tensor } from '@core/tensor';
import { describe, expect, it } from 'vitest';

interface Fixture {
  readonly digits: string;
  readonly conv2d: { readonly shape: number[]; readonly bits: string };
  readonly linear: { readonly shape: number[]; readonly bits: string };
}

const fixture = JSON.parse(readFileSync(new URL('./fixtures/round-once.json', import.meta.url), 'utf8')) as Fixture;

/** The fixture's integer-formula weights (float32, exactly as the Python script builds them). */
function weights(n: number, scale: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => ((((i * 7919 + 13) % 1009) - 504) / 504) * scale);
}

function bytes(b64: string): Uint8Array {
  return new Uint8Array(Buffer.from(b64, 'base64'));
}

/** PyTorch's bf16 outputs as numbers (a bf16 is the top half of a float32). */
function bf16Values(b64: string): number[] {
  const raw = bytes(b64);
  const halves = new Uint16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2);
  return Array.from(new Float32Array(Uint32Array.from(halves, (h) => h << 16).buffer));
}

function mismatches(y: Tensor, expected: number[]): number {
  const got = y.dataSync();
  return expected.filter((v, i) => !Object.is(v, got[i])).length;
}

const raw = bytes(fixture.digits);
const digits = tensor(new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4)).reshape([2, 1, 28, 28]);
const BF16 = { deviceType: 'cpu', dtype: bfloat16 } as const;

describe('AC-8: a product with a bias rounds once under autocast, as PyTorch', () => {
  it('F.linear([[1, 1]], [[1, 2⁻⁸]], [2⁻⁸]) is 1.0078125 in a bf16 region (rounding the product first gives 1)', () => {
    for (const dtype of [bfloat16, float16]) {
      const y = autocast({ deviceType: 'cpu', dtype }, () => F.linear(tensor([[1, 1]]), tensor([[1, 2 ** -8]]), tensor([2 ** -8])));
      expect(y.dtype).toBe(dtype);
      // 1 + 2⁻⁸ + 2⁻⁸ = 1 + 2⁻⁷ is exact in both; bf16 rounds the product 1 + 2⁻⁸ to 1 (a tie to even).
      expect(Array.from(y.dataSync())).toEqual([1 + 2 ** -7]);
    }
  });

  it("F.conv2d's bf16 outputs on two MNIST digits equal PyTorch 1.13's bit for bit", () => {
    const y = autocast(BF16, () => F.conv2d(digits, tensor(weights(72, 0.5)).reshape([8, 1, 3, 3]), tensor(weights(8, 0.1))));
    expect(y.dtype).toBe(bfloat16);
    expect(y.shape).toEqual(fixture.conv2d.shape);
    expect(mismatches(y, bf16Values(fixture.conv2d.bits))).toBe(0);
  });

  it("F.linear's bf16 outputs on two MNIST digits equal PyTorch 1.13's bit for bit", () => {
    const y = autocast(BF16, () => F.linear(digits.reshape([2, 784]), tensor(weights(16 * 784, 0.05)).reshape([16, 784]), tensor(weights(16, 0.1))));
    expect(y.shape).toEqual(fixture.linear.shape);
    expect(mismatches(y, bf16Values(fixture.linear.bits))).toBe(0);
  });
});
