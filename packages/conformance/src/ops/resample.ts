// The table entry for @core/nn's F.interpolate (core's op table lists it for its autocast class:
// float32 on CUDA, like PyTorch's upsample ops). The oracle samples each output position from
// PyTorch 1.13's documented rules, written out here per spatial dim and combined directly (a sum
// over every combination of the dims' taps), in float64:
// - the sampling scale is (in − 1)/(out − 1) with alignCorners, else 1/scaleFactor when a scale
//   factor is given, else in/out;
// - 'nearest' reads ⌊dst·scale⌋ and 'nearest-exact' ⌊(dst + ½)·scale⌋ (clamped to the last pixel),
//   the product taken in float32 for every column but float64, as PyTorch's kernels do; PyTorch's
//   2-D and 3-D nearest kernels copy an unchanged size and halve the index of a doubled one;
// - linear modes interpolate between the two neighbours of src = scale·(dst + ½) − ½ (at least 0),
//   or scale·dst with alignCorners; bicubic uses Keys' kernel (A = −0.75) on four neighbours,
//   clamped to the edges.
// Nearest results are exact. The others are computed in the column's accumulation dtype (float32
// for the 16-bit types): the bound allows each dim's products and sums and the weights' own
// rounding (3 roundings per dim of Σ|w·x|), and the sample position's rounding, which moves each
// weight by about 2u·(src + 2) (weighted by the taps' |x|).
import { F } from '@core/nn';
import type { DTypeName } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Input, type Layout } from '../inputs.js';
import { accumulatorOf, FLOAT_DTYPES, roundTo, unitRoundoff } from '../oracle/dtype.js';
import { at, nd, numel, unravel, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

type Mode = 'nearest' | 'nearest-exact' | 'linear' | 'bilinear' | 'bicubic' | 'trilinear';

interface InterpolateArgs {
  readonly size?: readonly number[];
  readonly scaleFactor?: readonly number[];
  readonly mode: Mode;
  readonly alignCorners?: boolean;
}

/** One output position's reads along a dim: [input index, weight] pairs, and where it samples. */
interface Taps {
  readonly reads: ReadonlyArray<readonly [number, number]>;
  readonly src: number;
}

/** Keys' cubic convolution kernel with A = −0.75, at distance |s|. */
function keys(s: number): number {
  const A = -0.75;
  const x = Math.abs(s);
  if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return A * x * x * x - 5 * A * x * x + 8 * A * x - 4 * A;
  return 0;
}

/** The reads of output `d` along a dim of `size` inputs and `out` outputs (see the header). */
function tapsAt(d: number, size: number, out: number, factor: number | undefined, a: InterpolateArgs, spatial: number, dtype: DTypeName): Taps {
  const last = size - 1;
  const scale = a.alignCorners ? (out > 1 ? last / (out - 1) : 0) : factor !== undefined ? 1 / factor : size / out;
  if (a.mode === 'nearest' || a.mode === 'nearest-exact') {
    if (a.mode === 'nearest' && spatial > 1 && (out === size || out === 2 * size)) return { reads: [[out === size ? d : Math.floor(d / 2), 1]], src: d };
    const f = dtype === 'float64' ? (v: number) => v : Math.fround;
    const src = f((a.mode === 'nearest' ? d : d + 0.5) * f(scale));
    return { reads: [[Math.min(Math.floor(src), last), 1]], src };
  }
  const src = a.alignCorners ? scale * d : scale * (d + 0.5) - 0.5;
  if (a.mode === 'bicubic') {
    const i0 = Math.floor(src);
    return { reads: [-1, 0, 1, 2].map((k) => [Math.min(Math.max(i0 + k, 0), last), keys(src - (i0 + k))] as const), src };
  }
  if (out === size) return { reads: [[d, 1]], src: d };
  const s = Math.max(src, 0);
  const i0 = Math.min(Math.floor(s), last);
  return { reads: [[i0, 1 - (s - i0)], [Math.min(i0 + 1, last), s - i0]], src: s };
}

function interpolateReference(x: NdArray, a: InterpolateArgs, dtype: DTypeName): Expected {
  const spatial = x.shape.slice(2);
  const size = a.size ?? spatial.map((s, i) => Math.floor(s * a.scaleFactor![i]!));
  const shape = [...x.shape.slice(0, 2), ...size];
  const taps = size.map((out, i) => Array.from({ length: out }, (_, d) => tapsAt(d, spatial[i]!, out, a.size ? undefined : a.scaleFactor![i], a, spatial.length, dtype)));
  const nearest = a.mode === 'nearest' || a.mode === 'nearest-exact';
  const u = unitRoundoff(accumulatorOf(dtype));
  const values: number[] = [];
  const bounds: number[] = [];
  for (let flat = 0; flat < numel(shape); flat++) {
    const idx = unravel(flat, shape);
    const perDim = taps.map((t, i) => t[idx[2 + i]!]!);
    // Every combination of one read per dim: Π weights · x at the combined index.
    let combos: Array<{ index: number[]; weight: number }> = [{ index: idx.slice(0, 2), weight: 1 }];
    for (const t of perDim) combos = combos.flatMap((c) => t.reads.map(([i, w]) => ({ index: [...c.index, i], weight: c.weight * w })));
    const terms = combos.map((c) => ({ term: c.weight * at(x, c.index), magnitude: Math.abs(at(x, c.index)) }));
    values.push(terms.reduce((s, t) => s + t.term, 0));
    if (nearest) {
      bounds.push(0);
      continue;
    }
    const weighted = terms.reduce((s, t) => s + Math.abs(t.term), 0);
    const read = terms.reduce((s, t) => s + t.magnitude, 0);
    bounds.push(3 * spatial.length * u * weighted + perDim.reduce((s, t) => s + 2 * u * (Math.abs(t.src) + 2), 0) * read);
  }
  return { value: nd(shape, values.map((v) => roundTo(dtype, v))), dtype, bound: Float64Array.from(bounds) };
}

const INTERPOLATE: OpInfo = {
  name: 'interpolate',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  // 16-bit inputs are resampled in float32 (a cast in, one rounding out): no compute in them.
  needs: 'storage',
  tolerance: 'accumulated',
  differentiable: true,
  samples: (dtype, rng) => {
    const r = (shape: number[], layout: Layout = 'contiguous') => input(randomArray(rng, dtype, shape), dtype, layout);
    const s = (name: string, shape: number[], args: InterpolateArgs, layout: Layout = 'contiguous'): Sample => ({ name, inputs: [r(shape, layout)], args: { ...args } });
    return [
      s('nearest-1d-5-to-8', [2, 3, 5], { size: [8], mode: 'nearest' }),
      s('nearest-1d-scale-1.5', [1, 2, 4], { scaleFactor: [1.5], mode: 'nearest' }),
      s('nearest-2d-scale-2-and-1', [1, 2, 3, 4], { scaleFactor: [2, 1], mode: 'nearest' }),
      s('nearest-exact-2d-5x6-to-3x4', [1, 2, 5, 6], { size: [3, 4], mode: 'nearest-exact' }),
      s('nearest-3d-permuted', [1, 2, 2, 3, 3], { size: [3, 4, 3], mode: 'nearest' }, 'permuted'),
      s('linear-align-5-to-9', [2, 2, 5], { size: [9], mode: 'linear', alignCorners: true }),
      s('linear-scale-1.7', [1, 2, 6], { scaleFactor: [1.7], mode: 'linear' }),
      s('bilinear-4x5-to-7x3', [1, 2, 4, 5], { size: [7, 3], mode: 'bilinear' }),
      s('bilinear-align-permuted', [2, 2, 3, 4], { size: [5, 6], mode: 'bilinear', alignCorners: true }, 'permuted'),
      s('bicubic-4x4-to-6x5', [1, 1, 4, 4], { size: [6, 5], mode: 'bicubic' }),
      s('bicubic-align-down', [1, 2, 5, 6], { size: [3, 4], mode: 'bicubic', alignCorners: true }),
      s('trilinear-2x3x3-to-3x4x2', [1, 1, 2, 3, 3], { size: [3, 4, 2], mode: 'trilinear' }),
    ];
  },
  gradSamples: (dtype, rng) => {
    const r = (shape: number[]) => input(randomArray(rng, dtype, shape), dtype);
    return [
      { name: 'grad-nearest-1d-scale-1.5', inputs: [r([1, 2, 4])], args: { scaleFactor: [1.5], mode: 'nearest' } },
      { name: 'grad-bilinear-3x4-to-5x3', inputs: [r([1, 2, 3, 4])], args: { size: [5, 3], mode: 'bilinear' } },
      { name: 'grad-bicubic-align-3x3-to-4x5', inputs: [r([1, 1, 3, 3])], args: { size: [4, 5], mode: 'bicubic', alignCorners: true } },
    ];
  },
  call: ([x], a) => F.interpolate(x!, a as InterpolateArgs),
  reference: ([x], a, dtype) => interpolateReference(x!, a as InterpolateArgs, dtype),
};

/** The resampling ops' entries. */
export const RESAMPLE_INFOS: readonly OpInfo[] = [INTERPOLATE];
