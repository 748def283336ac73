// A tiny training run: an MLP trained a few steps with raw ops and @core/optim on the backend's
// device, whose loss at every step must match the oracle's float64 run.
import { Adam, SGD } from '@core/optim';
import type { DTypeName } from '@core/tensor';
import { fmt } from '../check.js';
import { toDevice } from '../inputs.js';
import { nd } from '../oracle/ndarray.js';
import { trainReference, type TrainOptimizer } from '../oracle/mlp.js';
import type { Tolerance } from '../tolerance.js';
import { fail, type Case, type Env } from '../types.js';
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
      cases.push({
        id: `training/mlp-${run.id}/${dtype}`,
        category: 'training',
        op: 'training run',
        dtype,
        ...(missing ? { skip: `declared capabilities: the ${env.name} backend does not declare compute for ${missing}` } : {}),
        run: async () => {
          const { prob, params } = mlpSetup(`training/${run.id}/${dtype}`, dtype, { batch: 16, inputs: 6, hidden: 12, classes: 4 });
          const want = trainReference(params, prob, run.opt, STEPS);
          const dev = env.device;
          const p = {
            w1: toDevice(nd([prob.inputs, prob.hidden], params.w1), dtype, dev, true),
            b1: toDevice(nd([prob.hidden], params.b1), dtype, dev, true),
            w2: toDevice(nd([prob.hidden, prob.classes], params.w2), dtype, dev, true),
            b2: toDevice(nd([prob.classes], params.b2), dtype, dev, true),
          };
          const list = [p.w1, p.b1, p.w2, p.b2];
          const opt = run.opt.kind === 'sgd' ? new SGD(list, run.opt.options) : new Adam(list, run.opt.options);
          const x = toDevice(nd([prob.batch, prob.inputs], prob.x), dtype, dev);
          const y = toDevice(nd([prob.batch], prob.y), 'int32', dev);
          const tol = LOSS_TOL[dtype];
          let maxAbs = 0;
          let maxRel = 0;
          for (let step = 0; step < STEPS; step++) {
            opt.zeroGrad();
            const loss = mlpLoss(x, y, p);
            loss.backward();
            opt.step();
            const got = await loss.item();
            const err = Math.abs(got - want[step]!);
            maxAbs = Math.max(maxAbs, err);
            maxRel = Math.max(maxRel, err / Math.abs(want[step]!));
            if (!(err <= tol.atol + tol.rtol * Math.abs(want[step]!))) {
              fail(`training ${run.id} ${dtype}: loss at step ${step} is ${fmt(got)}, the oracle's is ${fmt(want[step]!)} (|err| ${fmt(err)}; losses so far ${want.slice(0, step + 1).map(fmt).join(', ')})`);
            }
          }
          if (!(want[STEPS - 1]! < want[0]!)) fail(`training ${run.id}: the oracle's loss did not decrease (${want.map(fmt).join(', ')})`);
          return { maxAbs, maxRel };
        },
      });
    }
  }
  return cases;
}
