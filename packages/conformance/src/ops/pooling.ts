// Table entry for F.maxPool2d, a composite (a −∞-padded window view's max) or the backend's fused
// maxPool2d kernel with its backward (so its cases run fused and decomposed), checked bit for bit
// against a float64 oracle of PyTorch's definition: window (i, j) reads rows
// i·stride − padding + a·dilation and columns likewise, skipping positions outside the input, and
// gives its first maximum in row-major window order, NaN counting as the maximum (so of ±0 the
// first, and a window of −∞ gives −∞). The samples are full of ties and zeros of both signs;
// the numerics samples add NaN and −∞. The gradient samples hold distinct values, so the oracle's
// numeric gradients are the one-hot of each window's maximum.
import { F } from '@core/nn';
import type { DTypeName, Tensor } from '@core/tensor';
import type { Expected } from '../check.js';
import { randomArray, type Input, type Layout } from '../inputs.js';
import { FLOAT_DTYPES, roundTo } from '../oracle/dtype.js';
import { nd, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

type Pair = number | readonly [number, number];

/** maxPool2d's arguments in a sample. */
export interface MaxPoolArgs {
  readonly kernel: Pair;
  readonly stride?: Pair;
  readonly padding?: Pair;
  readonly dilation?: Pair;
  readonly ceilMode?: boolean;
}

const pairOf = (v: Pair | undefined, fallback: Pair): [number, number] => {
  const p = v ?? fallback;
  return typeof p === 'number' ? [p, p] : [p[0], p[1]];
};

/** PyTorch's pooling_output_shape. */
function pooledSize(size: number, k: number, s: number, p: number, d: number, ceil: boolean): number {
  let out = Math.floor((size + 2 * p - d * (k - 1) - 1 + (ceil ? s - 1 : 0)) / s) + 1;
  if (ceil && (out - 1) * s >= size + p) out--;
  return out;
}

/** max_pool2d of [N, C, H, W] or [C, H, W] x by PyTorch's definition (exact: each output is an input element). */
function maxPoolReference(x: NdArray, a: MaxPoolArgs, dtype: DTypeName): Expected {
  const batched = x.shape.length === 4;
  const [N, C, H, W] = (batched ? x.shape : [1, ...x.shape]) as [number, number, number, number];
  const k = pairOf(a.kernel, 1);
  const s = pairOf(a.stride, a.kernel);
  const p = pairOf(a.padding, 0);
  const d = pairOf(a.dilation, 1);
  const [oh, ow] = [0, 1].map((i) => pooledSize(i === 0 ? H : W, k[i]!, s[i]!, p[i]!, d[i]!, a.ceilMode ?? false)) as [number, number];
  const values: number[] = [];
  for (let plane = 0; plane < N * C; plane++) {
    for (let i = 0; i < oh; i++) {
      for (let j = 0; j < ow; j++) {
        let best = -Infinity;
        for (let ka = 0; ka < k[0]; ka++) {
          const r = i * s[0] - p[0] + ka * d[0];
          for (let kb = 0; kb < k[1]; kb++) {
            const c = j * s[1] - p[1] + kb * d[1];
            if (r < 0 || r >= H || c < 0 || c >= W) continue;
            const v = x.data[(plane * H + r) * W + c]!;
            if (v > best || (Number.isNaN(v) && !Number.isNaN(best))) best = v;
          }
        }
        values.push(roundTo(dtype, best));
      }
    }
  }
  return { value: nd(batched ? [N, C, oh, ow] : [C, oh, ow], values), dtype };
}

/** Values drawn from a few (ties), ±0 among them; with `specials`, NaN and −∞ too. */
export function tiesArray(rng: Rng, dtype: DTypeName, shape: readonly number[], specials: boolean): NdArray {
  const few = [0, -0, 1, -1, 0.5, 2, -2.5];
  return nd(shape, () => {
    const u = rng.next();
    if (specials && u < 0.06) return NaN;
    if (specials && u < 0.14) return -Infinity;
    return roundTo(dtype, few[rng.int(0, few.length)]!);
  });
}

/** The samples: name, input shape, arguments and the input's layout. */
export const MAX_POOL2D_SAMPLES: ReadonlyArray<[string, number[], MaxPoolArgs, Layout?]> = [
  ['k2-2x3x6x6', [2, 3, 6, 6], { kernel: 2 }],
  ['k3-s2-p1-overlapping-2x2x7x8', [2, 2, 7, 8], { kernel: 3, stride: 2, padding: 1 }],
  ['k2x3-s3x1-p1-dilation2x1-1x2x9x7', [1, 2, 9, 7], { kernel: [2, 3], stride: [3, 1], padding: [1, 1], dilation: [2, 1] }],
  ['k3-s2-ceilMode-transposed-2x2x8x6', [2, 2, 8, 6], { kernel: 3, stride: 2, ceilMode: true }, 'transposed'],
  ['k2-s1-p1-dilation2-ceilMode-strided-1x2x6x7', [1, 2, 6, 7], { kernel: 2, stride: 1, padding: 1, dilation: 2, ceilMode: true }, 'strided'],
  ['unbatched-k4-s3-p2-ceilMode-permuted-3x10x11', [3, 10, 11], { kernel: 4, stride: 3, padding: 2, ceilMode: true }, 'permuted'],
];

/** F.maxPool2d with a sample's arguments. */
export function maxPool2dCall(x: Tensor, a: MaxPoolArgs): Tensor {
  return F.maxPool2d(x, a.kernel, { stride: a.stride ?? null, padding: a.padding ?? 0, dilation: a.dilation ?? 1, ceilMode: a.ceilMode ?? false });
}

const MAX_POOL2D: OpInfo = {
  name: 'maxPool2d',
  category: 'composites',
  dtypes: FLOAT_DTYPES,
  tolerance: 'exact',
  differentiable: true,
  fused: 'maxPool2d',
  samples: (dtype, rng) => {
    const sample = (name: string, shape: number[], args: MaxPoolArgs, layout: Layout = 'contiguous', numerics = false): Sample => ({
      name: numerics ? `${name}-nan-inf` : name,
      inputs: [{ value: tiesArray(rng, dtype, shape, numerics), dtype, layout } satisfies Input],
      args: { ...args },
      ...(numerics ? { numerics } : {}),
    });
    return [
      ...MAX_POOL2D_SAMPLES.map(([name, shape, args, layout]) => sample(name, shape, args, layout)),
      ...MAX_POOL2D_SAMPLES.map(([name, shape, args, layout]) => sample(name, shape, args, layout, true)),
    ];
  },
  gradSamples: (dtype, rng) => [
    { name: 'grad-k3-s2-p1-overlapping-1x2x5x6', inputs: [{ value: randomArray(rng, dtype, [1, 2, 5, 6], { lo: -2, hi: 2 }), dtype }], args: { kernel: 3, stride: 2, padding: 1 } },
    {
      name: 'grad-k2-dilation2-ceilMode-transposed-1x2x6x5',
      inputs: [{ value: randomArray(rng, dtype, [1, 2, 6, 5], { lo: -2, hi: 2 }), dtype, layout: 'transposed' }],
      args: { kernel: 2, stride: 2, padding: 1, dilation: 2, ceilMode: true },
    },
  ],
  call: ([x], a) => maxPool2dCall(x!, a as MaxPoolArgs),
  reference: ([x], a, dtype) => maxPoolReference(x!, a as MaxPoolArgs, dtype),
};

/** The pooling ops' table entries. */
export const POOLING_INFOS: OpInfo[] = [MAX_POOL2D];
