// Table entries for views: a view is a chain of steps (data, so one entry per op), applied to a
// tensor by the library and to the values by the oracle. Reads materialise the view through the
// backend's strided copy; writes go through views into their base, which must change exactly where
// the oracle says (found by running the same chain over an array of storage positions).
import { empty, type DTypeName, type Tensor } from '@core/tensor';
import { randomArray, type Input, type Layout } from '../inputs.js';
import { ALL_DTYPES, FLOAT_DTYPES, roundTo } from '../oracle/dtype.js';
import * as nda from '../oracle/ndarray.js';
import { nd, numel, type NdArray } from '../oracle/ndarray.js';
import type { OpInfo, Sample } from '../opinfo.js';
import type { Rng } from '../rng.js';

export type ViewStep =
  | readonly ['reshape', readonly number[]]
  | readonly ['view', readonly number[]]
  | readonly ['permute', readonly number[]]
  | readonly ['transpose', number, number]
  | readonly ['t']
  | readonly ['T']
  | readonly ['expand', readonly number[]]
  | readonly ['expandAs', readonly number[]]
  | readonly ['slice', number, number, number | undefined, number]
  | readonly ['narrow', number, number, number]
  | readonly ['select', number, number]
  | readonly ['squeeze', number | undefined]
  | readonly ['unsqueeze', number]
  | readonly ['flatten', number, number]
  | readonly ['contiguous']
  | readonly ['clone']
  | readonly ['detach']
  | readonly ['asStrided', readonly number[], readonly number[], number];

export function applySteps(t: Tensor, steps: readonly ViewStep[]): Tensor {
  let x = t;
  for (const s of steps) {
    switch (s[0]) {
      case 'reshape': x = x.reshape(s[1]); break;
      case 'view': x = x.view(s[1]); break;
      case 'permute': x = x.permute(s[1]); break;
      case 'transpose': x = x.transpose(s[1], s[2]); break;
      case 't': x = x.t(); break;
      case 'T': x = x.T; break;
      case 'expand': x = x.expand(s[1]); break;
      case 'expandAs': x = x.expandAs(empty(s[1], { device: x.device, dtype: x.dtype })); break;
      case 'slice': x = x.slice(s[1], s[2], s[3], s[4]); break;
      case 'narrow': x = x.narrow(s[1], s[2], s[3]); break;
      case 'select': x = x.select(s[1], s[2]); break;
      case 'squeeze': x = x.squeeze(s[1]); break;
      case 'unsqueeze': x = x.unsqueeze(s[1]); break;
      case 'flatten': x = x.flatten(s[1], s[2]); break;
      case 'contiguous': x = x.contiguous(); break;
      case 'clone': x = x.clone(); break;
      case 'detach': x = x.detach(); break;
      case 'asStrided': x = x.asStrided(s[1], s[2], s[3]); break;
      default: return s satisfies never;
    }
  }
  return x;
}

/** The oracle's version of each step, on values. */
export function applyStepsRef(a: NdArray, steps: readonly ViewStep[]): NdArray {
  let x = a;
  for (const s of steps) {
    const rank = x.shape.length;
    const dim = (d: number, r = rank) => (d < 0 ? d + r : d);
    switch (s[0]) {
      case 'reshape':
      case 'view': x = nda.reshape(x, s[1]); break;
      case 'permute': x = nda.permute(x, s[1].map((d) => dim(d))); break;
      case 'transpose': x = rank === 0 ? x : nda.transpose(x, s[1], s[2]); break;
      case 't': x = rank < 2 ? x : nda.transpose(x, 0, 1); break;
      case 'T': x = nda.permute(x, x.shape.map((_, i) => rank - 1 - i)); break;
      case 'expand': {
        const lead = s[1].length - rank;
        x = nda.broadcastTo(x, s[1].map((v, i) => (v === -1 ? x.shape[i - lead]! : v)));
        break;
      }
      case 'expandAs': x = nda.broadcastTo(x, s[1]); break;
      case 'slice': x = nda.slice(x, s[1], s[2], s[3], s[4]); break;
      case 'narrow': { const st = s[2] < 0 ? s[2] + x.shape[dim(s[1])]! : s[2]; x = nda.slice(x, s[1], st, st + s[3]); break; }
      case 'select': x = nda.select(x, s[1], s[2]); break;
      case 'squeeze': {
        const only = s[1] === undefined ? null : dim(s[1]);
        x = nda.reshape(x, x.shape.filter((v, i) => !(v === 1 && (only === null || only === i))));
        break;
      }
      case 'unsqueeze': { const d = dim(s[1], rank + 1); x = nda.reshape(x, [...x.shape.slice(0, d), 1, ...x.shape.slice(d)]); break; }
      case 'flatten': {
        if (rank === 0) { x = nda.reshape(x, [1]); break; }
        const st = dim(s[1]);
        const en = dim(s[2]);
        x = nda.reshape(x, [...x.shape.slice(0, st), numel(x.shape.slice(st, en + 1)), ...x.shape.slice(en + 1)]);
        break;
      }
      case 'contiguous':
      case 'clone':
      case 'detach': break;
      case 'asStrided': {
        const src = x;
        x = nda.generate(s[1], (idx) => src.data[s[3] + idx.reduce((o, v, k) => o + v * s[2][k]!, 0)]!);
        break;
      }
      default: return s satisfies never;
    }
  }
  return x;
}

const input = (value: NdArray, dtype: DTypeName, layout: Layout = 'contiguous'): Input => ({ value, dtype, layout });

/** One view op: its samples are (input shape, layout, chain) triples. */
interface ViewSpec {
  readonly name: string;
  readonly samples: readonly { readonly name: string; readonly shape: readonly number[]; readonly layout?: Layout; readonly steps: readonly ViewStep[] }[];
  readonly differentiable?: boolean;
  /** Check the gradient of every sample (default: the first two, as for every op). */
  readonly gradEverySample?: boolean;
}

const VIEW_SPECS: readonly ViewSpec[] = [
  { name: 'reshape', samples: [
    { name: '2x3x4->4x6', shape: [2, 3, 4], steps: [['reshape', [4, 6]]] },
    { name: 'transposed-4x3->-1', shape: [4, 3], layout: 'transposed', steps: [['reshape', [-1]]] },
    { name: 'strided-2x6->3x2x2', shape: [2, 6], layout: 'strided', steps: [['reshape', [3, 2, 2]]] },
    { name: '0-dim->1x1', shape: [], steps: [['reshape', [1, 1]]] },
    { name: 'empty-0x3->3x0', shape: [0, 3], steps: [['reshape', [3, 0]]] },
  ] },
  { name: 'view', samples: [
    { name: '2x3x4->6x4', shape: [2, 3, 4], steps: [['view', [6, 4]]] },
    { name: 'offset-3x4->12', shape: [3, 4], layout: 'offset', steps: [['view', [12]]] },
  ] },
  { name: 'permute', samples: [
    { name: '2x3x4-[2,0,1]', shape: [2, 3, 4], steps: [['permute', [2, 0, 1]]] },
    { name: 'permuted-2x3x4-[-1,1,0]', shape: [2, 3, 4], layout: 'permuted', steps: [['permute', [-1, 1, 0]]] },
  ] },
  { name: 'transpose', samples: [
    { name: '2x3x4-(0,2)', shape: [2, 3, 4], steps: [['transpose', 0, 2]] },
    { name: 'strided-3x4-(0,1)', shape: [3, 4], layout: 'strided', steps: [['transpose', 0, 1]] },
  ] },
  { name: 't', samples: [
    { name: '3x4', shape: [3, 4], steps: [['t']] },
    { name: '1d-5', shape: [5], steps: [['t']] },
    { name: 'T-2x3x4', shape: [2, 3, 4], steps: [['T']] },
  ] },
  { name: 'expand', samples: [
    { name: '3x1->2x3x4', shape: [3, 1], steps: [['expand', [2, 3, 4]]] },
    { name: '0-dim->2x3', shape: [], steps: [['expand', [2, 3]]] },
    { name: '1x3->4x-1x3', shape: [1, 3], steps: [['expand', [4, -1, 3]]] },
  ] },
  { name: 'slice', samples: [
    { name: 'dim1-1:-1:2-3x6', shape: [3, 6], steps: [['slice', 1, 1, -1, 2]] },
    { name: 'dim0--2:-3x4', shape: [3, 4], steps: [['slice', 0, -2, undefined, 1]] },
    { name: 'transposed-dim0-0:3:2', shape: [4, 5], layout: 'transposed', steps: [['slice', 0, 0, 3, 2]] },
    { name: 'empty-dim1-2:2', shape: [3, 4], steps: [['slice', 1, 2, 2, 1]] },
  ] },
  { name: 'narrow', samples: [
    { name: 'dim0-1,2-4x3', shape: [4, 3], steps: [['narrow', 0, 1, 2]] },
    { name: 'strided-dim-1--3,2', shape: [2, 5], layout: 'strided', steps: [['narrow', -1, -3, 2]] },
  ] },
  { name: 'select', samples: [
    { name: 'dim1--1-3x4', shape: [3, 4], steps: [['select', 1, -1]] },
    { name: 'permuted-dim0-1', shape: [2, 3, 4], layout: 'permuted', steps: [['select', 0, 1]] },
    { name: '1d-to-0-dim', shape: [5], steps: [['select', 0, 3]] },
  ] },
  { name: 'squeeze', samples: [
    { name: 'all-1x3x1x2', shape: [1, 3, 1, 2], steps: [['squeeze', undefined]] },
    { name: 'dim2-1x3x1x2', shape: [1, 3, 1, 2], steps: [['squeeze', 2]] },
  ] },
  { name: 'unsqueeze', samples: [
    { name: 'dim1-3x4', shape: [3, 4], steps: [['unsqueeze', 1]] },
    { name: 'transposed-dim-1', shape: [3, 4], layout: 'transposed', steps: [['unsqueeze', -1]] },
    { name: '0-dim', shape: [], steps: [['unsqueeze', 0]] },
  ] },
  { name: 'flatten', samples: [
    { name: '1,2-2x3x4', shape: [2, 3, 4], steps: [['flatten', 1, 2]] },
    { name: 'permuted-all', shape: [2, 3, 4], layout: 'permuted', steps: [['flatten', 0, -1]] },
  ] },
  { name: 'expandAs', samples: [
    { name: '3x1-as-2x3x4', shape: [3, 1], steps: [['expandAs', [2, 3, 4]]] },
    { name: 'transposed-1x3-as-4x3', shape: [1, 3], layout: 'transposed', steps: [['expandAs', [4, 3]]] },
  ] },
  { name: 'contiguous', samples: [
    { name: 'transposed-4x3', shape: [4, 3], layout: 'transposed', steps: [['contiguous']] },
    { name: 'strided-2x5', shape: [2, 5], layout: 'strided', steps: [['contiguous']] },
  ] },
  { name: 'clone', samples: [
    { name: 'permuted-2x3x4', shape: [2, 3, 4], layout: 'permuted', steps: [['clone']] },
    { name: 'offset-3x2', shape: [3, 2], layout: 'offset', steps: [['clone']] },
  ] },
  // The values of a detached tensor are its input's; that it leaves autograd is checked by the autograd cases.
  { name: 'detach', differentiable: false, samples: [
    { name: 'permuted-2x3x4', shape: [2, 3, 4], layout: 'permuted', steps: [['detach']] },
  ] },
  // Every gradient: asStrided's is a backend's fused stridedSum where it has one.
  { name: 'asStrided', gradEverySample: true, samples: [
    { name: 'overlapping-windows-10->4x3', shape: [10], steps: [['asStrided', [4, 3], [2, 1], 1]] },
    { name: 'broadcast-stride0-6->2x3', shape: [6], steps: [['asStrided', [2, 3], [0, 2], 0]] },
    // A convolution's im2col: the 3×3 windows [N, C, kh, kw, oh, ow] of a [1, 2, 5, 5] image, from element 1.
    { name: 'conv-windows-1x2x5x5->1x2x3x3x3x2', shape: [1, 2, 5, 5], steps: [['asStrided', [1, 2, 3, 3, 3, 2], [50, 25, 5, 1, 5, 1], 1]] },
  ] },
  { name: 'chain', samples: [
    { name: 'permute-slice-select-expand', shape: [2, 3, 4], steps: [['permute', [2, 0, 1]], ['slice', 0, 1, undefined, 2], ['select', 1, 1], ['unsqueeze', 0], ['expand', [3, 2, 3]]] },
    { name: 'transposed-narrow-T-flatten', shape: [4, 3], layout: 'transposed', steps: [['narrow', 1, 1, 2], ['T'], ['flatten', 0, 1]] },
  ] },
];

function readInfo(spec: ViewSpec): OpInfo {
  return {
    name: spec.name,
    category: 'views',
    dtypes: ALL_DTYPES,
    needs: 'storage',
    tolerance: 'exact',
    differentiable: spec.differentiable ?? true,
    samples: (dtype, rng) => viewSamples(spec, dtype, rng, ''),
    ...(spec.gradEverySample && { gradSamples: (dtype: DTypeName, rng: Rng) => viewSamples(spec, dtype, rng, 'grad-') }),
    call: ([x], a) => applySteps(x!, a.steps),
    reference: ([x], a, dtype) => ({ value: applyStepsRef(x!, a.steps), dtype }),
  };
}

function viewSamples(spec: ViewSpec, dtype: DTypeName, rng: Rng, prefix: string): Sample[] {
  return spec.samples.map((s) => ({
    name: prefix + s.name,
    inputs: [input(randomArray(rng, dtype, [...s.shape]), dtype, s.layout)],
    args: { steps: s.steps },
  }));
}

/** Where each element of a view over a contiguous base of `shape` lives in the base (flat index). */
function positions(shape: readonly number[], steps: readonly ViewStep[]): NdArray {
  return applyStepsRef(nda.reshape(nda.arange(numel(shape)), shape), steps);
}

type InPlace = 'copy_' | 'fill_' | 'zero_' | 'add_' | 'sub_' | 'mul_' | 'div_' | 'clamp_';

interface WriteSpec {
  readonly name: string;
  readonly base: readonly number[];
  readonly steps: readonly ViewStep[];
  /** The in-place op that writes the view: copy_ or add_… a source, fill_ a value, clamp_ to [-0.5, 0.5] (ints: [-3, 3]). */
  readonly how: InPlace;
  /** The dtypes the op is defined for (default: all). */
  readonly dtypes?: readonly DTypeName[];
}

const NUMERIC_DTYPES: readonly DTypeName[] = [...FLOAT_DTYPES, 'int32'];

const WRITE_SPECS: readonly WriteSpec[] = [
  { name: 'copy_(transposed-slice)', base: [3, 4], steps: [['transpose', 0, 1], ['slice', 0, 1, 3, 1]], how: 'copy_' },
  { name: 'copy_(strided-broadcast-src)', base: [3, 6], steps: [['slice', 1, 0, undefined, 2]], how: 'copy_' },
  { name: 'fill_(step-2-slice)', base: [2, 5], steps: [['slice', 1, 1, undefined, 2]], how: 'fill_' },
  { name: 'fill_(select-permuted)', base: [2, 3, 4], steps: [['permute', [2, 0, 1]], ['select', 1, 1]], how: 'fill_' },
  { name: 'zero_(step-2-slice)', base: [2, 5], steps: [['slice', 1, 0, undefined, 2]], how: 'zero_' },
  { name: 'add_(select)', base: [3, 4], steps: [['select', 0, 1]], how: 'add_' },
  { name: 'add_(transposed)', base: [3, 4], steps: [['t']], how: 'add_' },
  { name: 'sub_(transposed)', base: [3, 4], steps: [['t']], how: 'sub_', dtypes: NUMERIC_DTYPES },
  { name: 'mul_(select)', base: [3, 4], steps: [['select', 1, 2]], how: 'mul_', dtypes: NUMERIC_DTYPES },
  { name: 'div_(step-2-slice)', base: [2, 6], steps: [['slice', 1, 1, undefined, 2]], how: 'div_', dtypes: FLOAT_DTYPES },
  { name: 'clamp_(transposed)', base: [3, 4], steps: [['t']], how: 'clamp_', dtypes: NUMERIC_DTYPES },
];

/** The bounds clamp_ writes between. */
const clampBounds = (dtype: DTypeName): [number, number] => (dtype === 'int32' ? [-3, 3] : [-0.5, 0.5]);

function writeInfo(spec: WriteSpec): OpInfo {
  const storageOnly = spec.how === 'copy_' || spec.how === 'fill_' || spec.how === 'zero_';
  return {
    name: spec.name.replace(/\(.*/, '(view)'),
    category: 'views',
    dtypes: spec.dtypes ?? ALL_DTYPES,
    needs: storageOnly ? 'storage' : 'compute',
    tolerance: 'exact',
    differentiable: false,
    samples: (dtype, rng) => {
      const viewShape = positions(spec.base, spec.steps).shape;
      // copy_ from a source that broadcasts (one row) for the broadcast sample, full shape otherwise.
      const srcShape = spec.name.includes('broadcast') ? [1, ...viewShape.slice(1)] : [...viewShape];
      const value = dtype === 'bool' ? 1 : dtype === 'int32' ? -5 : 0.3;
      // div_ by values away from 0, so the quotients stay in range.
      const src = spec.how === 'div_' ? randomArray(rng, dtype, srcShape, { lo: 0.5, hi: 2 }) : randomArray(rng, dtype, srcShape);
      return [{
        name: spec.name.replace(/^[^(]*\(/, '').replace(/\)$/, ''),
        inputs: [input(randomArray(rng, dtype, [...spec.base]), dtype), input(src, dtype)],
        args: { value },
      }];
    },
    call: ([base, src], a, { dtype }) => {
      const view = applySteps(base!, spec.steps);
      switch (spec.how) {
        case 'copy_': view.copy_(src!); break;
        case 'fill_': view.fill_(a.value); break;
        case 'zero_': view.zero_(); break;
        case 'add_': view.add_(src!); break;
        case 'sub_': view.sub_(src!); break;
        case 'mul_': view.mul_(src!); break;
        case 'div_': view.div_(src!); break;
        case 'clamp_': view.clamp_(...clampBounds(dtype)); break;
        default: return spec.how satisfies never;
      }
      return base!;
    },
    reference: ([base, src], a, dtype) => {
      const pos = positions(spec.base, spec.steps);
      const out = nd(base!.shape, base!.data);
      const full = nda.broadcastTo(src!, pos.shape);
      const [lo, hi] = clampBounds(dtype);
      pos.data.forEach((p, i) => {
        const old = out.data[p]!;
        const s = full.data[i]!;
        switch (spec.how) {
          case 'copy_': out.data[p] = s; break;
          case 'fill_': out.data[p] = roundTo(dtype, a.value); break;
          case 'zero_': out.data[p] = 0; break;
          case 'add_': out.data[p] = addIn(dtype, old, s); break;
          case 'sub_': out.data[p] = arithmeticIn(dtype, old - s); break;
          case 'mul_': out.data[p] = arithmeticIn(dtype, old * s); break;
          case 'div_': out.data[p] = arithmeticIn(dtype, old / s); break;
          case 'clamp_': out.data[p] = Math.min(Math.max(old, roundTo(dtype, lo)), roundTo(dtype, hi)); break;
          default: return spec.how satisfies never;
        }
      });
      return { value: out, dtype };
    },
  };
}

/** An exact result stored as the dtype stores it: int32 wraps, half types are computed in f32 and rounded once. */
function arithmeticIn(dtype: DTypeName, exact: number): number {
  if (dtype === 'int32') return exact | 0;
  return roundTo(dtype, dtype === 'float16' || dtype === 'bfloat16' ? Math.fround(exact) : exact);
}

/** `add` as the dtype does it (bool: or; int32: wrapping). */
function addIn(dtype: DTypeName, a: number, b: number): number {
  if (dtype === 'bool') return a !== 0 || b !== 0 ? 1 : 0;
  return arithmeticIn(dtype, a + b);
}

/** Views alias their base: a write to the base shows through every view. */
const ALIAS: OpInfo = {
  name: 'alias',
  category: 'views',
  dtypes: ALL_DTYPES,
  needs: 'storage',
  tolerance: 'exact',
  differentiable: false,
  samples: (dtype, rng: Rng) => [{ name: 'base-write-seen-by-transposed-view', inputs: [input(randomArray(rng, dtype, [3, 4]), dtype)], args: { value: dtype === 'bool' ? 1 : 2 } }],
  call: ([base], a) => {
    const view = base!.t();
    base!.fill_(a.value);
    return view;
  },
  reference: ([base], a, dtype) => ({ value: nd([base!.shape[1]!, base!.shape[0]!], () => roundTo(dtype, a.value)), dtype }),
};

export const VIEW_INFOS: OpInfo[] = [...VIEW_SPECS.map(readInfo), ...WRITE_SPECS.map(writeInfo), ALIAS];
