// Max pooling's fused kernels (maxPool2d and its backward) against the decomposition on the same
// backend, bit for bit, values and gradients, on inputs full of ties, ±0, NaN and −∞ with the
// table's padding, dilation, strides, ceilMode and strided layouts. Where the oracle's numeric
// gradients cannot go (ties and non-finite values), this checks that both paths send each
// window's gradient to the same element: its first maximum, the first NaN, or for a window of
// −∞ its first position inside the input. The upstream gradients are small integers, so sums of
// overlapping windows are exact in any order.
import type { DTypeName, Tensor } from '@core/tensor';
import { stored, toDevice } from '../inputs.js';
import { FLOAT_DTYPES } from '../oracle/dtype.js';
import { nd } from '../oracle/ndarray.js';
import { MAX_POOL2D_SAMPLES, maxPool2dCall, tiesArray } from '../ops/pooling.js';
import { Rng } from '../rng.js';
import { fail, type Case, type Env } from '../types.js';
import { withFused } from './table.js';

/** Fails at the first element where `fused` and `decomposed` differ (±0 told apart, NaN matching NaN). */
async function expectSameBits(label: string, fused: Tensor, decomposed: Tensor): Promise<void> {
  if (fused.shape.join() !== decomposed.shape.join()) fail(`${label}: fused [${fused.shape.join(', ')}], decomposed [${decomposed.shape.join(', ')}]`);
  const [a, b] = await Promise.all([fused.data(), decomposed.data()]);
  for (let i = 0; i < b.length; i++) {
    if (!Object.is(Number(a[i]), Number(b[i]))) fail(`${label}: fused ${Number(a[i])} and decomposed ${Number(b[i])} differ at flat index ${i}`);
  }
}

/** The fused-against-decomposed cases of maxPool2d, one per dtype and table sample. */
export function poolingCases(env: Env): Case[] {
  return FLOAT_DTYPES.flatMap((dtype: DTypeName) => MAX_POOL2D_SAMPLES.map(([name, shape, args, layout]): Case => {
    const id = `autograd/maxPool2d/${dtype}/${name}-ties-nan-inf/fused-vs-decomposed`;
    const skip = !env.compute.has(dtype)
      ? `declared capabilities: the ${env.name} backend does not declare compute for ${dtype} (checked by capabilities/maxPool2d/${dtype}/rejects)`
      : !env.fused.has('maxPool2d') ? `the ${env.name} backend registers no fused maxPool2d kernel: there is nothing to compare the decomposition with (the /decomposed cases check it)` : undefined;
    return {
      id,
      category: 'autograd',
      op: 'maxPool2d',
      dtype,
      ...(skip ? { skip } : {}),
      run: async () => {
        const rng = new Rng(id);
        const input = stored({ value: tiesArray(rng, dtype, shape, true), dtype, layout: layout ?? 'contiguous' });
        const [fused, decomposed] = (['fused', 'decomposed'] as const).map((variant) => withFused(variant, () => {
          const leaf = toDevice(input.base, dtype, env.device, true);
          const y = maxPool2dCall(input.view(leaf), args);
          y.backward(toDevice(nd(y.shape, (i) => (i % 5) - 2), dtype, env.device));
          return { y, grad: leaf.grad! };
        }));
        await expectSameBits(`maxPool2d ${dtype} ${name}: the output`, fused!.y, decomposed!.y);
        await expectSameBits(`maxPool2d ${dtype} ${name}: the input's gradient`, fused!.grad, decomposed!.grad);
      },
    };
  }));
}
