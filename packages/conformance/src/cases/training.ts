// A tiny training run: an MLP trained a few steps with raw ops and @core/optim on the backend's
// device, whose loss at every step must match the oracle's float64 run.
import { Adam, SGD } from '@core/optim';
import { compile, type DTypeName, type Tensor } from '@core/tensor';
import { fmt } from '../check.js';
import { toDevice } from '../inputs.js';
import { nd } from '../oracle/ndarray.js';
import { trainReference, type TrainOptimizer } from '../oracle/mlp.js';
import type { Tolerance } from '../tolerance.js';
import { fail, type Case, type Env, type Measure } from '../types.js';
import { mlpLoss, mlpSetup } from './autograd.js';

const STEPS = 8;
const LOSS_TOL: Record<'float32' | 'float64', Tolerance> = {
  float64: { atol: 1e-10, rtol: 1e-9 },
  float32: { atol: 1e-5, rtol: 1e-4 },
};

const RUNS: Array<{ id: string; opt: TrainOptimizer }> = [
  { id: 'sgd-momentum', opt: { kind: 'sgd', options: { lr: 0.2, momentum: 0.9 } } },
  { id: 'adam', opt: { kind: 'adam', options: { lr: 0.05 } } },
];

export function trainingCases(env: Env): Case[] {
  const cases: Case[] = [];
  for (const run of RUNS) {
    for (const dtype of ['float32', 'float64'] as const) {
      const missing = ([dtype, 'int32'] as DTypeName[]).find((d) => !env.compute.has(d));
      const label = `training ${run.id} ${dtype}`;
      const { prob, params } = mlpSetup(`training/${run.id}/${dtype}`, dtype, { batch: 16, inputs: 6, hidden: 12, classes: 4 });
      const want = trainReference(params, prob, run.opt, STEPS);
      const tol = LOSS_TOL[dtype];

      /** The model, its optimizer, the batch, and one training step (as a loop writes it). */
      const setup = () => {
        const dev = env.device;
        const p = {
          w1: toDevice(nd([prob.inputs, prob.hidden], params.w1), dtype, dev, true),
          b1: toDevice(nd([prob.hidden], params.b1), dtype, dev, true),
          w2: toDevice(nd([prob.hidden, prob.classes], params.w2), dtype, dev, true),
          b2: toDevice(nd([prob.classes], params.b2), dtype, dev, true),
        };
        const list = [p.w1, p.b1, p.w2, p.b2];
        const opt = run.opt.kind === 'sgd' ? new SGD(list, run.opt.options) : new Adam(list, run.opt.options);
        const step = (x: Tensor, y: Tensor): Tensor => {
          opt.zeroGrad();
          const loss = mlpLoss(x, y, p);
          loss.backward();
          opt.step();
          return loss;
        };
        return { step, x: toDevice(nd([prob.batch, prob.inputs], prob.x), dtype, dev), y: toDevice(nd([prob.batch], prob.y), 'int32', dev) };
      };

      /** Each step's loss against the oracle's, within the loss tolerance. */
      const check = (losses: readonly number[], how: string): Measure => {
        if (!(want[STEPS - 1]! < want[0]!)) fail(`training ${run.id}: the oracle's loss did not decrease (${want.map(fmt).join(', ')})`);
        let maxAbs = 0;
        let maxRel = 0;
        losses.forEach((got, step) => {
          const err = Math.abs(got - want[step]!);
          maxAbs = Math.max(maxAbs, err);
          maxRel = Math.max(maxRel, err / Math.abs(want[step]!));
          if (!(err <= tol.atol + tol.rtol * Math.abs(want[step]!))) {
            fail(`${label}${how}: loss at step ${step} is ${fmt(got)}, the oracle's is ${fmt(want[step]!)} (|err| ${fmt(err)}; losses so far ${want.slice(0, step + 1).map(fmt).join(', ')})`);
          }
        });
        return { maxAbs, maxRel };
      };

      /** STEPS losses of `step` on the batch, read after each step. */
      const train = async (step: (x: Tensor, y: Tensor) => Tensor, x: Tensor, y: Tensor): Promise<number[]> => {
        const losses: number[] = [];
        for (let i = 0; i < STEPS; i++) losses.push(await step(x, y).item());
        return losses;
      };

      cases.push({
        id: `training/mlp-${run.id}/${dtype}`,
        category: 'training',
        op: 'training run',
        dtype,
        ...(missing ? { skip: `declared capabilities: the ${env.name} backend does not declare compute for ${missing}` } : {}),
        run: async () => {
          const { step, x, y } = setup();
          return check(await train(step, x, y), '');
        },
        // The step compiled: steps 1 and 2 trace (3 too when step 1 creates the optimizer's state and
        // the first .grads), the rest replay; every loss is eager's, bit for bit.
        compiled: async () => {
          const eager = setup();
          const expected = await train(eager.step, eager.x, eager.y);
          const { step, x, y } = setup();
          const compiled = compile(step);
          const losses = await train(compiled, x, y);
          const replays = compiled.explain().replays;
          if (replays < STEPS - 3) fail(`${label}: ${replays} of ${STEPS} steps replayed, expected at least ${STEPS - 3}:\n${compiled.explain().text}`);
          const measure = check(losses, ' (compiled)');
          const differs = losses.findIndex((l, i) => !Object.is(l, expected[i]));
          if (differs >= 0) fail(`${label}: the compiled loss at step ${differs} is ${fmt(losses[differs]!)}, eager's ${fmt(expected[differs]!)} (compared bit for bit on the same backend)`);
          return measure;
        },
      });
    }
  }
  return cases;
}
