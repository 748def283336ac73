// Adadelta and RMSprop through the backend's fused kernel and through their op-by-op decomposition
// give the same parameter and state bits, step after step, with every option combination, in
// float32 (native kernel for the large parameter where the addon is built) and float64; half types
// and fusion switched off take the decomposition.
import './helpers.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  bfloat16, float32, float64, fusedAdadeltaStep, fusedRMSpropStep, getBackend, manualSeed, randn, setFusedKernelsEnabled, zeros, type DType, type FusedKernels, type Tensor,
} from '@core/tensor';
import { Adadelta, RMSprop } from '../src/index.js';

/** The float bits of a tensor's elements (float32 or float64), every NaN as one NaN. */
function bits(t: Tensor): string {
  const data = Array.from(t.dataSync() as Float32Array | Float64Array, (x) => (Number.isNaN(x) ? NaN : x));
  return Array.from(new Uint32Array((t.dtype === float64 ? Float64Array.from(data) : Float32Array.from(data)).buffer)).join(',');
}

/** Every combination of the boolean options in `keys`. */
function combinations<K extends string>(keys: readonly K[]): Record<K, boolean>[] {
  return Array.from({ length: 2 ** keys.length }, (_, m) => Object.fromEntries(keys.map((k, i) => [k, ((m >> i) & 1) === 1])) as Record<K, boolean>);
}

type Opt = Adadelta | RMSprop;

/**
 * Four steps on a [3, 4] and a [64, 80] parameter of `dtype` (the same seeded values and
 * gradients each run), fused kernels on or off, lr changed before the third; the bits of the
 * parameters and of every state tensor after each step.
 */
function run(make: (params: Tensor[]) => Opt, dtype: DType, fused: boolean): string[] {
  manualSeed(3);
  const params = [randn([3, 4]), randn([64, 80])].map((p) => p.to(dtype).requiresGrad_());
  const opt = make(params);
  const seen: string[] = [];
  setFusedKernelsEnabled(fused);
  try {
    for (let step = 0; step < 4; step++) {
      if (step === 2) opt.paramGroups[0]!.lr *= 0.5;
      for (const p of params) p.grad = randn(p.shape).mul(step === 1 ? 0.01 : 1).to(dtype);
      opt.step();
      for (const p of params) {
        seen.push(bits(p));
        for (const [key, value] of Object.entries(opt.state.get(p)!)) if (typeof value !== 'number') seen.push(`${key}: ${bits(value as Tensor)}`);
      }
    }
  } finally {
    setFusedKernelsEnabled(true);
  }
  return seen;
}

/** The cpu backend's fused kernels, to spy on (it has adadelta and rmsprop). */
const cpuFused = () => getBackend('cpu').fused as Required<FusedKernels<unknown>>;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('Adadelta and RMSprop: the fused kernel and the decomposition give the same bits', () => {
  for (const dtype of [float32, float64]) {
    for (const o of combinations(['weightDecay', 'maximize'] as const)) {
      it(`Adadelta ${dtype.name} ${JSON.stringify(o)}: four steps, lr halved before the third`, () => {
        const make = (params: Tensor[]) => new Adadelta(params, { lr: 0.9, rho: 0.8, weightDecay: o.weightDecay ? 0.05 : 0, maximize: o.maximize });
        const kernel = vi.spyOn(cpuFused(), 'adadelta');
        const fused = run(make, dtype, true);
        expect(kernel).toHaveBeenCalledTimes(8); // both parameters, every step
        kernel.mockClear();
        const decomposed = run(make, dtype, false);
        expect(kernel).not.toHaveBeenCalled();
        expect(fused).toEqual(decomposed);
      });
    }
    for (const o of combinations(['weightDecay', 'maximize', 'momentum', 'centered'] as const)) {
      it(`RMSprop ${dtype.name} ${JSON.stringify(o)}: four steps, lr halved before the third`, () => {
        const make = (params: Tensor[]) => new RMSprop(params, {
          lr: 0.01, alpha: 0.9, weightDecay: o.weightDecay ? 0.05 : 0, momentum: o.momentum ? 0.8 : 0, centered: o.centered, maximize: o.maximize,
        });
        const kernel = vi.spyOn(cpuFused(), 'rmsprop');
        const fused = run(make, dtype, true);
        expect(kernel).toHaveBeenCalledTimes(8);
        kernel.mockClear();
        const decomposed = run(make, dtype, false);
        expect(kernel).not.toHaveBeenCalled();
        expect(fused).toEqual(decomposed);
      });
    }
  }

  it('bfloat16 parameters take the decomposition (the kernels take float32 and float64 only)', () => {
    const kernels = [vi.spyOn(cpuFused(), 'adadelta'), vi.spyOn(cpuFused(), 'rmsprop')];
    run((params) => new Adadelta(params), bfloat16, true);
    run((params) => new RMSprop(params, { momentum: 0.9, centered: true }), bfloat16, true);
    for (const k of kernels) expect(k).not.toHaveBeenCalled();
  });
});

describe('fusedAdadeltaStep and fusedRMSpropStep', () => {
  const spec = { lr: 0.1, rho: 0.9, eps: 1e-6, weightDecay: 0, maximize: false };
  const rmsSpec = { lr: 0.1, alpha: 0.99, eps: 1e-8, weightDecay: 0, momentum: 0, centered: false, maximize: false };

  it('return false and touch nothing when the kernel does not take the tensors: a strided state, mixed dtypes, fusion off', () => {
    const param = randn([4, 3]);
    const before = bits(param);
    const grad = randn([4, 3]);
    expect(fusedAdadeltaStep({ param, grad, squareAvg: zeros([3, 4]).t(), accDelta: zeros([4, 3]) }, spec)).toBe(false);
    expect(fusedAdadeltaStep({ param, grad, squareAvg: zeros([4, 3], { dtype: float64 }), accDelta: zeros([4, 3]) }, spec)).toBe(false);
    setFusedKernelsEnabled(false);
    try {
      expect(fusedRMSpropStep({ param, grad, squareAvg: zeros([4, 3]) }, rmsSpec)).toBe(false);
    } finally {
      setFusedKernelsEnabled(true);
    }
    expect(bits(param)).toBe(before);
  });

  it('fusedRMSpropStep: a momentum buffer or gradient average that the spec does not call for is a TypeError, before anything runs', () => {
    const param = randn([4, 3]);
    const before = bits(param);
    const buffer = zeros([4, 3]);
    expect(() => fusedRMSpropStep({ param, grad: randn([4, 3]), squareAvg: zeros([4, 3]), momentumBuffer: buffer }, rmsSpec)).toThrow(TypeError);
    expect(() => fusedRMSpropStep({ param, grad: randn([4, 3]), squareAvg: zeros([4, 3]) }, { ...rmsSpec, centered: true })).toThrow(/gradAvg exactly when spec.centered/);
    expect(bits(param)).toBe(before);
    expect(bits(buffer)).toBe(bits(zeros([4, 3])));
  });
});
