// nn.utils.weightNorm / removeWeightNorm and nn.utils.spectralNorm / removeSpectralNorm against
// PyTorch 1.13 (float64): the parameters and buffers that replace the weight and their state-dict
// keys, the forward and the gradients of what replaced it, the power iteration from a given u and
// v (training only), removal, and the errors.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { float64, noGrad, TensorError, ValueError, type Tensor } from '@core/tensor';
import { nn } from '../src/index.js';
import { expectClose, values } from './helpers.js';
import { seq } from './sine-inputs.js';

/** reference/hooks-1.13.json, made by reference/hooks_reference.py (PyTorch 1.13, float64). */
const ref = JSON.parse(readFileSync(new URL('./reference/hooks-1.13.json', import.meta.url), 'utf8')) as Record<string, Record<string, number[]>>;

type Layer = nn.Linear | nn.Conv2d;
type Fields = Record<string, Tensor>;

/** The reference script's modules: weight ← seq(shape, 0.5, 0.5), bias ← seq(shape, 1.5, 0.5), float64. */
function filled<M extends Layer>(m: M): M {
  noGrad(() => {
    m.weight.copy_(seq(m.weight.shape, 0.5, 0.5, float64));
    m.bias!.copy_(seq(m.bias!.shape, 1.5, 0.5, float64));
  });
  return m;
}
const linear = (): nn.Linear => filled(new nn.Linear(3, 4, { dtype: float64 }));
const conv = (): nn.Conv2d => filled(new nn.Conv2d(2, 3, 2, { dtype: float64 }));
const linearInput = (): Tensor => seq([5, 3], 0.1, 1, float64);
const convInput = (): Tensor => seq([1, 2, 3, 3], 0.1, 1, float64);

const fields = (m: Layer): Fields => m as unknown as Fields;

describe('nn.utils.weightNorm', () => {
  const cases: Array<[string, () => Layer, () => Tensor, number | null]> = [
    ['wn-linear-dim0', linear, linearInput, 0],
    ['wn-linear-dim1', linear, linearInput, 1],
    ['wn-linear-dimNone', linear, linearInput, null],
    ['wn-conv-dim0', conv, convInput, 0],
  ];
  for (const [key, make, input, dim] of cases) {
    it(`${key}: weight_g and weight_v replace the weight; forward and their gradients match PyTorch`, () => {
      const expected = ref[key]!;
      const m = make();
      const weight = values(m.weight);
      expect(nn.utils.weightNorm(m, 'weight', dim)).toBe(m);
      expect(Object.keys(m.stateDict())).toEqual(expected.keys);
      expect(m.namedParameters().map(([n]) => n)).toEqual(expected.keys);
      const { weight_g: g, weight_v: v } = fields(m);
      expect(g!.shape).toEqual(expected.gShape);
      expectClose(g!, expected.g0!, 1e-12); // the norms of the weight
      expect(values(v!)).toEqual(weight); // the weight itself
      expectClose(m.weight, weight, 1e-12); // recomputed at once: v·g/‖v‖ = the weight
      noGrad(() => g!.copy_(seq(g!.shape, 3.0, 1, float64)));
      const y = m.forward(input());
      expectClose(y, expected.y!, 1e-12);
      expectClose(m.weight, expected.weight!, 1e-12); // recomputed before the forward from the new g
      y.backward(seq(y.shape, 2.0, 1, float64));
      expectClose(g!.grad!, expected.gGrad!, 1e-12);
      expectClose(v!.grad!, expected.vGrad!, 1e-12);
      expectClose(m.bias!.grad!, expected.biasGrad!, 1e-12);
    });
  }

  it('takes its arguments by name too, and loads a state dict with its keys', () => {
    const a = nn.utils.weightNorm(linear(), { dim: 1 });
    expect(fields(a).weight_g!.shape).toEqual([1, 3]);
    const b = nn.utils.weightNorm(new nn.Linear(3, 4, { dtype: float64 }), { dim: 1 });
    b.loadStateDict(a.stateDict());
    expect(values(b.forward(linearInput()))).toEqual(values(a.forward(linearInput())));
  });

  it('removeWeightNorm makes the weight one parameter again, of its current value, and takes the hook away', () => {
    const m = nn.utils.weightNorm(linear());
    noGrad(() => fields(m).weight_g!.copy_(seq([4, 1], 3.0, 1, float64)));
    expect(nn.utils.removeWeightNorm(m)).toBe(m);
    expect(Object.keys(m.stateDict())).toEqual(['bias', 'weight']); // PyTorch's order after removal
    expect(fields(m).weight_g).toBeUndefined();
    expect(nn.isParameter(m.weight)).toBe(true);
    expectClose(m.weight, ref['wn-linear-dim0']!.weight!, 1e-12);
    expect(Object.prototype.hasOwnProperty.call(m, 'forward')).toBe(false);
    const before = values(m.weight);
    noGrad(() => m.weight.mul_(2)); // a parameter again: forward uses it as it is
    expect(values(m.forward(linearInput()))).not.toEqual(values(linear().forward(linearInput())));
    expect(values(m.weight)).toEqual(before.map((w) => 2 * w));
  });

  it('errors: applied twice, a missing or null parameter, a bad dim, removing what is not there', () => {
    const m = nn.utils.weightNorm(linear());
    expect(() => nn.utils.weightNorm(m)).toThrow(TensorError);
    expect(() => nn.utils.weightNorm(m)).toThrow('Cannot register two weightNorm hooks on the same parameter weight');
    expect(() => nn.utils.weightNorm(new nn.Linear(3, 4, false), 'bias')).toThrow(ValueError);
    expect(() => nn.utils.weightNorm(new nn.Linear(3, 4, false), 'bias')).toThrow("weightNorm: Linear has no parameter 'bias' (it is null)");
    expect(() => nn.utils.weightNorm(linear(), 'nope')).toThrow("weightNorm: Linear has no parameter 'nope'");
    expect(() => nn.utils.weightNorm(linear(), 'weight', 2)).toThrow(/weightNorm: dim 2 is out of range for a 2-dim parameter/);
    const untouched = linear();
    expect(() => nn.utils.removeWeightNorm(untouched)).toThrow(ValueError);
    expect(() => nn.utils.removeWeightNorm(untouched)).toThrow("weightNorm of 'weight' not found in Linear(inFeatures=3, outFeatures=4, bias=true)");
    expect(Object.keys(untouched.stateDict())).toEqual(['weight', 'bias']); // a failed call changes nothing
  });
});

describe('nn.utils.spectralNorm', () => {
  /** Set u ← seq(u.shape, 0.2) and v ← seq(v.shape, 0.7), as the reference script does after applying. */
  function setUV(m: Layer): void {
    const { weight_u: u, weight_v: v } = fields(m);
    noGrad(() => {
      u!.copy_(seq(u!.shape, 0.2, 1, float64));
      v!.copy_(seq(v!.shape, 0.7, 1, float64));
    });
  }

  const cases: Array<[string, () => Layer, () => Tensor, number, number]> = [
    ['sn-linear', linear, linearInput, 1, 0],
    ['sn-linear-3iter', linear, linearInput, 3, 0],
    ['sn-conv-dim1', conv, convInput, 1, 1],
  ];
  for (const [key, make, input, n, dim] of cases) {
    it(`${key}: power iteration in training from a given u and v, σ from them as they are in eval; as in PyTorch`, () => {
      const expected = ref[key]!;
      const m = make();
      const original = m.weight;
      expect(nn.utils.spectralNorm(m, 'weight', n, 1e-12, dim)).toBe(m);
      expect(Object.keys(m.stateDict())).toEqual(expected.keys);
      expect(m.namedParameters().map(([name]) => name)).toEqual(['bias', 'weight_orig']);
      expect(m.namedBuffers().map(([name]) => name)).toEqual(['weight_u', 'weight_v']);
      expect(fields(m).weight_orig).toBe(original); // the same parameter object: optimizers holding it keep working
      setUV(m);
      const y = m.forward(input());
      expectClose(y, expected.y!, 1e-12);
      expectClose(m.weight, expected.weight!, 1e-12);
      expectClose(fields(m).weight_u!, expected.u!, 1e-12); // updated in place by the iteration
      expectClose(fields(m).weight_v!, expected.v!, 1e-12);
      y.backward(seq(y.shape, 2.0, 1, float64));
      expectClose(original.grad!, expected.origGrad!, 1e-12);
      expectClose(m.bias!.grad!, expected.biasGrad!, 1e-12);
      m.eval();
      setUV(m);
      expectClose(m.forward(input()), expected.yEval!, 1e-12);
      expect(values(fields(m).weight_u!)).toEqual(values(seq(fields(m).weight_u!.shape, 0.2, 1, float64))); // no iteration in eval
    });
  }

  it('takes dim 1 by default for a transposed convolution, whose weight is [in, out, …] (PyTorch: u [3] and v [8] here)', () => {
    const m = nn.utils.spectralNorm(new nn.ConvTranspose2d(2, 3, 2));
    expect(fields(m).weight_u!.shape).toEqual([3]);
    expect(fields(m).weight_v!.shape).toEqual([8]);
    expect(fields(nn.utils.spectralNorm(new nn.ConvTranspose2d(2, 3, 2), { dim: 0 })).weight_u!.shape).toEqual([2]);
  });

  it('keeps the weight as it is until the first forward, and starts from unit u and v', () => {
    const m = nn.utils.spectralNorm(linear());
    expect(values(m.weight)).toEqual(values(linear().weight));
    expect(nn.isParameter(m.weight)).toBe(false);
    for (const b of [fields(m).weight_u!, fields(m).weight_v!]) expect(Math.hypot(...values(b))).toBeCloseTo(1, 12);
    expect(fields(m).weight_u!.shape).toEqual([4]);
    expect(fields(m).weight_v!.shape).toEqual([3]);
  });

  it('removeSpectralNorm makes the weight one parameter again, divided by σ from the current u and v', () => {
    const m = nn.utils.spectralNorm(linear(), { nPowerIterations: 1 });
    setUV(m);
    m.forward(linearInput()); // one iteration: u and v as in the reference
    nn.utils.removeSpectralNorm(m);
    expect(Object.keys(m.stateDict())).toEqual(['bias', 'weight']);
    expect(m.namedBuffers()).toEqual([]);
    // W/σ with σ = uᵀWv from u and v as the iteration left them, without iterating again (PyTorch's remove)
    const sigma = (() => {
      const w = linear().weight;
      const [u, v] = [ref['sn-linear']!.u!, ref['sn-linear']!.v!];
      const wv = [0, 1, 2, 3].map((i) => [0, 1, 2].reduce((s, j) => s + values(w)[i * 3 + j]! * v[j]!, 0));
      return wv.reduce((s, x, i) => s + x * u[i]!, 0);
    })();
    expectClose(m.weight, values(linear().weight).map((w) => w / sigma), 1e-12);
    expect(nn.isParameter(m.weight)).toBe(true);
  });

  it('errors: nPowerIterations not positive, applied twice, removing what is not there', () => {
    expect(() => nn.utils.spectralNorm(linear(), 'weight', 0)).toThrow(ValueError);
    expect(() => nn.utils.spectralNorm(linear(), 'weight', 0)).toThrow('Expected nPowerIterations to be positive, but got nPowerIterations=0');
    const m = nn.utils.spectralNorm(linear());
    expect(() => nn.utils.spectralNorm(m)).toThrow('Cannot register two spectralNorm hooks on the same parameter weight');
    expect(() => nn.utils.removeSpectralNorm(linear())).toThrow("spectralNorm of 'weight' not found in Linear(inFeatures=3, outFeatures=4, bias=true)");
    expect(() => nn.utils.removeWeightNorm(m)).toThrow(ValueError); // a spectral norm is not a weight norm
    expect(() => nn.utils.spectralNorm(linear(), { dim: 2 })).toThrow(/spectralNorm: dim 2 is out of range/);
  });
});
