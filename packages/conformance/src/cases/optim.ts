// Optimizers (OPT-*) on the backend's device: PyTorch's worked values, multi-step runs against the
// oracle's float64 SGD/Adam/AdamW/Adadelta/RMSprop, zeroGrad and skipped-parameter rules, and option errors.
import { Adadelta, Adam, AdamW, RMSprop, SGD, type AdadeltaOptions, type AdamOptions, type RMSpropOptions, type SGDOptions } from '@core/optim';
import { compile, ValueError, type DTypeName, type Tensor } from '@core/tensor';
import { expectEqual, expectTensor, expectThrows, expectTrue, fmt } from '../check.js';
import { randomArray, toDevice } from '../inputs.js';
import { roundTo } from '../oracle/dtype.js';
import { nd, vector } from '../oracle/ndarray.js';
import {
  adadeltaStep, adamStep, newAdamState, newAveragesState, rmspropStep, sgdStep, type AdamOptions as RefAdam, type SgdOptions as RefSgd,
} from '../oracle/optim.js';
import { Rng } from '../rng.js';
import { expectSameAsEager } from './compiled.js';
import { withFused } from './table.js';
import type { Tolerance } from '../tolerance.js';
import { fail, type Case, type Env } from '../types.js';

/** Parameters drift from the oracle by a few roundings per step. */
const OPT_TOL: Record<'float32' | 'float64' | 'bfloat16' | 'float16', Tolerance> = {
  float64: { atol: 1e-12, rtol: 1e-10 },
  float32: { atol: 1e-5, rtol: 1e-4 },
  // Half parameters and moments are rounded on every store (PyTorch's semantics, not the oracle's
  // exact float64 run): about 5 steps × one rounding of p, plus moments whose rounding moves an
  // update of size ≤ lr by a few ulps.
  float16: { atol: 1e-3, rtol: 4e-3 },
  bfloat16: { atol: 8e-3, rtol: 3e-2 },
};

type Variant = 'fused' | 'decomposed' | undefined;

type Algo =
  | { kind: 'sgd'; options: Partial<SGDOptions> & { lr: number } }
  | { kind: 'adam' | 'adamw'; options: Partial<AdamOptions> & { lr: number } }
  | { kind: 'adadelta'; options: Partial<AdadeltaOptions> & { lr: number } }
  | { kind: 'rmsprop'; options: Partial<RMSpropOptions> & { lr: number } };

/** The backend's fused kernel each optimizer's update runs through, when it has one. */
const FUSED_KERNEL = { adam: 'adamw', adamw: 'adamw', adadelta: 'adadelta', rmsprop: 'rmsprop' } as const;

function makeOptimizer(algo: Algo, params: Tensor[]) {
  switch (algo.kind) {
    case 'sgd': return new SGD(params, algo.options);
    case 'adadelta': return new Adadelta(params, algo.options);
    case 'rmsprop': return new RMSprop(params, algo.options);
    default: return algo.kind === 'adam' ? new Adam(params, algo.options) : new AdamW(params, algo.options);
  }
}

/** The oracle's optimizer with the same options (AdamW's default weight decay is 1e-2, OPT-9). */
function referenceStepper(algo: Algo, n: number): (p: Float64Array, g: Float64Array) => void {
  if (algo.kind === 'sgd') {
    const state: { buf?: Float64Array } = {};
    return (p, g) => sgdStep(p, g, algo.options as RefSgd, state);
  }
  if (algo.kind === 'adadelta' || algo.kind === 'rmsprop') {
    const state = newAveragesState(n);
    const { options } = algo;
    return algo.kind === 'adadelta' ? (p, g) => adadeltaStep(p, g, options as AdadeltaOptions, state) : (p, g) => rmspropStep(p, g, options as RMSpropOptions, state);
  }
  const state = newAdamState(n);
  const o: RefAdam = { ...(algo.options as RefAdam), decoupled: algo.kind === 'adamw', weightDecay: algo.options.weightDecay ?? (algo.kind === 'adamw' ? 1e-2 : 0) };
  return (p, g) => adamStep(p, g, o, state);
}

export function optimizerCases(env: Env): Case[] {
  const cases: Case[] = [];
  const dev = env.device;
  const add = (id: string, op: string, dtype: DTypeName | '-', run: Case['run'], skip?: string, compiled?: Case['compiled']) =>
    cases.push({ id: `optimizers/${id}`, category: 'optimizers', op, dtype, run, ...(skip ? { skip } : {}), ...(compiled ? { compiled } : {}) });
  const needs = (d: DTypeName) => (env.compute.has(d) ? undefined : `declared capabilities: the ${env.name} backend does not declare compute for ${d}`);

  // OPT-6, OPT-9: p = 1, grad 0.5 every step, lr 0.1.
  const worked: Array<{ id: string; algo: Algo; want: number[] }> = [
    { id: 'OPT-6/sgd-momentum-wd', algo: { kind: 'sgd', options: { lr: 0.1, momentum: 0.9, weightDecay: 0.1 } }, want: [0.94, 0.8266] },
    { id: 'OPT-6/sgd-nesterov-wd', algo: { kind: 'sgd', options: { lr: 0.1, momentum: 0.9, weightDecay: 0.1, nesterov: true } }, want: [0.886] },
    { id: 'OPT-6/sgd-dampening', algo: { kind: 'sgd', options: { lr: 0.1, momentum: 0.9, dampening: 0.5 } }, want: [0.95, 0.88] },
    { id: 'OPT-9/adam', algo: { kind: 'adam', options: { lr: 0.1 } }, want: [0.900000002, 0.800000004] },
    { id: 'OPT-9/adam-wd', algo: { kind: 'adam', options: { lr: 0.1, weightDecay: 0.1 } }, want: [0.9000000017] },
    { id: 'OPT-9/adamw', algo: { kind: 'adamw', options: { lr: 0.1 } }, want: [0.899000002] },
  ];
  for (const w of worked) {
    for (const dtype of ['float32', 'float64'] as const) {
      add(`${w.id}/${dtype}`, w.algo.kind, dtype, async () => {
        const p = toDevice(vector([1]), dtype, dev, true);
        const opt = makeOptimizer(w.algo, [p]);
        const ref = referenceStepper(w.algo, 1);
        const rp = new Float64Array([1]);
        for (let step = 0; step < w.want.length; step++) {
          p.grad = toDevice(vector([0.5]), dtype, dev);
          opt.step();
          ref(rp, new Float64Array([0.5]));
          // The spec's printed value (10 significant digits), and the oracle's to full precision.
          if (Math.abs(rp[0]! - w.want[step]!) > 5e-10) fail(`oracle disagrees with ${w.id} step ${step + 1}: ${fmt(rp[0]!)} vs ${w.want[step]}`);
          await expectTensor(p.detach(), { value: vector([roundTo(dtype, rp[0]!)]), dtype }, { label: `${w.id} step ${step + 1} (PyTorch: ${w.want[step]})`, cls: 'approx', tolerance: OPT_TOL[dtype], device: dev });
        }
      }, needs(dtype));
    }
  }

  // Several steps on a 3x4 parameter with fresh random gradients each step.
  const runs: Array<{ id: string; algo: Algo }> = [
    { id: 'sgd', algo: { kind: 'sgd', options: { lr: 0.05 } } },
    { id: 'sgd-momentum-dampening', algo: { kind: 'sgd', options: { lr: 0.05, momentum: 0.8, dampening: 0.3 } } },
    { id: 'sgd-nesterov-wd', algo: { kind: 'sgd', options: { lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 0.01 } } },
    { id: 'sgd-maximize', algo: { kind: 'sgd', options: { lr: 0.05, momentum: 0.5, maximize: true } } },
    { id: 'adam', algo: { kind: 'adam', options: { lr: 0.01 } } },
    { id: 'adam-amsgrad', algo: { kind: 'adam', options: { lr: 0.01, amsgrad: true, betas: [0.8, 0.99] } } },
    { id: 'adam-wd', algo: { kind: 'adam', options: { lr: 0.01, weightDecay: 0.05 } } },
    { id: 'adamw', algo: { kind: 'adamw', options: { lr: 0.01 } } },
    { id: 'adam-maximize', algo: { kind: 'adam', options: { lr: 0.01, maximize: true, eps: 1e-6 } } },
    { id: 'adadelta', algo: { kind: 'adadelta', options: { lr: 1 } } },
    { id: 'adadelta-wd-maximize', algo: { kind: 'adadelta', options: { lr: 0.5, rho: 0.8, weightDecay: 0.05, maximize: true } } },
    { id: 'rmsprop', algo: { kind: 'rmsprop', options: { lr: 0.01 } } },
    { id: 'rmsprop-momentum-wd', algo: { kind: 'rmsprop', options: { lr: 0.01, momentum: 0.9, weightDecay: 0.05 } } },
    { id: 'rmsprop-centered-maximize', algo: { kind: 'rmsprop', options: { lr: 0.01, alpha: 0.9, centered: true, maximize: true } } },
    { id: 'rmsprop-centered-momentum', algo: { kind: 'rmsprop', options: { lr: 0.01, centered: true, momentum: 0.5 } } },
  ];
  // Adam's, Adadelta's and RMSprop's runs go through the backend's fused kernel and through the
  // decomposition; Adam's in half types too (their state is stored rounded every step, hence
  // OPT_TOL's wider half entries). Adadelta's and RMSprop's kernels take float32 and float64.
  const fusedSkip = (kind: Algo['kind'], variant: Variant) => {
    const kernel = kind === 'sgd' ? undefined : FUSED_KERNEL[kind];
    return variant === 'fused' && kernel && !env.fused.has(kernel)
      ? `the ${env.name} backend registers no fused ${kernel} kernel (the decomposition is checked by the /decomposed cases)`
      : undefined;
  };
  for (const r of runs) {
    const fusable = r.algo.kind !== 'sgd';
    const adam = r.algo.kind === 'adam' || r.algo.kind === 'adamw';
    const dtypes = adam ? (['float32', 'float64', 'bfloat16', 'float16'] as const) : (['float32', 'float64'] as const);
    for (const variant of fusable ? (['fused', 'decomposed'] as const) : [undefined]) {
      for (const dtype of dtypes) {
        add(`steps/${r.id}/${dtype}${variant ? `/${variant}` : ''}`, r.algo.kind, dtype, () => stepsRun(r, dtype, variant, false), needs(dtype) ?? fusedSkip(r.algo.kind, variant), () => stepsRun(r, dtype, variant, true));
      }
    }
  }

  /**
   * Five steps on a 3x4 parameter against the oracle, through the fused kernel or the decomposition.
   * Compiled, the step (`p.grad = g; opt.step()`) is compiled: steps 1 to 3 trace (step 1 creates
   * the optimizer's state), 4 and 5 replay, and the parameter must also be eager's, bit for bit.
   */
  async function stepsRun(r: { id: string; algo: Algo }, dtype: 'float32' | 'float64' | 'bfloat16' | 'float16', variant: Variant, compiled: boolean) {
    // PyTorch's eps of 1e-8 is 0 in float16, and a second moment below ~6e-8 underflows to 0 there
    // (in PyTorch too), which the float64 oracle does not model; float16 runs use eps 1e-2, which
    // dwarfs any underflowed sqrt(v) (< 3e-4), so the comparison measures the update itself.
    const algo = dtype === 'float16' && r.algo.kind !== 'sgd' ? ({ ...r.algo, options: { ...r.algo.options, eps: 1e-2 } } as Algo) : r.algo;
    const rng = new Rng(`opt/${r.id}/${dtype}`);
    const init = randomArray(rng, dtype, [3, 4]);
    const model = () => {
      const p = toDevice(init, dtype, dev, true);
      const opt = makeOptimizer(algo, [p]);
      return { p, step: (g: Tensor) => { p.grad = g; opt.step(); } };
    };
    const eager = model();
    const run = compiled ? model() : eager;
    const compiledStep = compiled ? compile(run.step) : undefined;
    const step = compiledStep ?? run.step;
    const ref = referenceStepper(algo, 12);
    const rp = Float64Array.from(init.data);
    const label = (n: number) => `${r.id} ${dtype} after step ${n}${variant ? ` (${variant})` : ''}${compiled ? ' (compiled)' : ''}`;
    let last = {};
    for (let n = 1; n <= 5; n++) {
      const g = randomArray(rng, dtype, [3, 4]);
      withFused(variant, () => step(toDevice(g, dtype, dev)));
      ref(rp, Float64Array.from(g.data));
      last = await expectTensor(run.p.detach(), { value: nd([3, 4], rp.map((v) => roundTo(dtype, v))), dtype }, { label: label(n), cls: 'approx', tolerance: OPT_TOL[dtype], device: dev });
      if (compiled) {
        withFused(variant, () => eager.step(toDevice(g, dtype, dev)));
        await expectSameAsEager(label(n), run.p.detach(), eager.p.detach());
      }
    }
    if (compiledStep && compiledStep.explain().replays < 1) fail(`${label(5)}: no step replayed:\n${compiledStep.explain().text}`);
    return last;
  }

  add('OPT-1/zeroGrad', 'zeroGrad', 'float32', async () => {
    const p = toDevice(vector([1, 2]), 'float32', dev, true);
    const opt = new SGD([p], { lr: 0.1 });
    p.grad = toDevice(vector([3, 4]), 'float32', dev);
    const g = p.grad;
    opt.zeroGrad({ setToNone: false });
    expectTrue('zeroGrad({ setToNone: false }) keeps the same grad tensor', p.grad === g);
    await expectTensor(p.grad!, { value: vector([0, 0]), dtype: 'float32' }, { label: 'zeroed grad', cls: 'exact', device: dev });
    opt.zeroGrad();
    expectEqual('zeroGrad() sets grad to null', p.grad, null);
  }, needs('float32'));
  add('OPT-3/skips-null-grads', 'step', 'float32', async () => {
    const a = toDevice(vector([1, 2]), 'float32', dev, true);
    const b = toDevice(vector([3, 4]), 'float32', dev, true);
    const opt = new Adam([a, b], { lr: 0.1, weightDecay: 0.1 });
    a.grad = toDevice(vector([0, 0]), 'float32', dev); // a zero grad still gets weight decay and moments
    opt.step();
    expectTrue('a parameter without a grad gets no state', !opt.state.has(b));
    expectTrue('a parameter with a zero grad gets state', opt.state.has(a));
    await expectTensor(b.detach(), { value: vector([3, 4]), dtype: 'float32' }, { label: 'parameter without a grad is untouched', cls: 'exact', device: dev });
  }, needs('float32'));
  const errors: Array<[string, () => unknown, string]> = [
    ['sgd-lr', () => new SGD([toDevice(vector([1]), 'float32', dev, true)], { lr: -1 }), 'Invalid learning rate: -1'],
    ['sgd-nesterov', () => new SGD([toDevice(vector([1]), 'float32', dev, true)], { lr: 0.1, nesterov: true }), 'Nesterov momentum requires a momentum and zero dampening'],
    ['adam-beta', () => new Adam([toDevice(vector([1]), 'float32', dev, true)], { betas: [1, 0.999] }), 'Invalid beta parameter at index 0: 1'],
    ['adam-eps', () => new Adam([toDevice(vector([1]), 'float32', dev, true)], { eps: -1 }), 'Invalid epsilon value: -1'],
  ];
  for (const [id, fn, message] of errors) {
    add(`OPT-4-7/${id}`, 'options', '-', () => { expectThrows(id, fn, ValueError, message); }, needs('float32'));
  }
  return cases;
}
