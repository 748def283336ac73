// Autograd behaviour beyond per-op gradients (which the op table generates): accumulation (OPT-2),
// retained and detached gradients, gradient dtypes through casts, gradients across devices, and a
// small network's parameter gradients against the oracle's hand-written backward pass.
import { cat, noGrad, TensorError, type DTypeName, type Tensor } from '@core/tensor';
import { expectEqual, expectTensor, expectThrows, expectTrue } from '../check.js';
import { dtypeObject, randomArray, toDevice } from '../inputs.js';
import { nd, vector } from '../oracle/ndarray.js';
import { mlpLossAndGrads, type MlpParams, type MlpProblem } from '../oracle/mlp.js';
import { Rng } from '../rng.js';
import { GRAD } from '../tolerance.js';
import { cpuSkip, fail, type Case, type Env } from '../types.js';

/** A small classification problem and parameters, from a seed; values exact in `dtype`. */
export function mlpSetup(seed: string, dtype: DTypeName, sizes = { batch: 8, inputs: 5, hidden: 7, classes: 3 }): { prob: MlpProblem; params: MlpParams } {
  const rng = new Rng(seed);
  const r = (n: number, scale: number) => Float64Array.from(randomArray(rng, dtype, [n], { lo: -scale, hi: scale }).data);
  const { batch, inputs, hidden, classes } = sizes;
  const prob: MlpProblem = { batch, inputs, hidden, classes, x: r(batch * inputs, 2), y: Int32Array.from({ length: batch }, () => rng.int(0, classes)) };
  const params: MlpParams = { w1: r(inputs * hidden, 0.6), b1: r(hidden, 0.2), w2: r(hidden * classes, 0.6), b2: r(classes, 0.2) };
  return { prob, params };
}

/** The library's forward pass for the oracle's MLP: mean cross-entropy through logSoftmax and gather. */
export function mlpLoss(x: Tensor, y: Tensor, p: Record<keyof MlpParams, Tensor>): Tensor {
  const h = x.matmul(p.w1).add(p.b1).relu();
  const z = h.matmul(p.w2).add(p.b2);
  return z.logSoftmax(1).gather(1, y.unsqueeze(1)).mean().neg();
}

export function autogradCases(env: Env): Case[] {
  const cases: Case[] = [];
  const dev = env.device;
  const add = (id: string, op: string, dtype: DTypeName | '-', run: Case['run'], skip?: string) =>
    cases.push({ id: `autograd/${id}`, category: 'autograd', op, dtype, run, ...(skip ? { skip } : {}) });
  const needs = (...ds: DTypeName[]) => {
    const missing = ds.find((d) => !env.compute.has(d));
    return missing ? `declared capabilities: the ${env.name} backend does not declare compute for ${missing}` : undefined;
  };
  const leaf = (values: number[], dtype: DTypeName = 'float32') => toDevice(vector(values), dtype, dev, true);

  add('OPT-2/accumulates', 'backward', 'float32', async () => {
    const x = leaf([1, 2, 3]);
    x.mul(2).sum().backward();
    const first = x.grad;
    x.mul(x).sum().backward();
    expectTrue('the second backward() adds into the same .grad tensor', x.grad === first);
    return expectTensor(x.grad!, { value: vector([4, 6, 8]), dtype: 'float32' }, { label: '2 + 2x', cls: 'exact', device: dev });
  });
  add('retainGrad', 'backward', 'float32', async () => {
    const x = leaf([1, -2]);
    const h = x.mul(3).retainGrad();
    h.square().sum().backward();
    await expectTensor(h.grad!, { value: vector([6, -12]), dtype: 'float32' }, { label: 'retained grad of h = 3x', cls: 'exact', device: dev });
    return expectTensor(x.grad!, { value: vector([18, -36]), dtype: 'float32' }, { label: 'x.grad', cls: 'exact', device: dev });
  });
  add('detach-and-noGrad', 'backward', 'float32', async () => {
    const x = leaf([1, 2]);
    const d = x.mul(5).detach();
    expectEqual('detach().requiresGrad', d.requiresGrad, false);
    const n = noGrad(() => x.mul(2));
    expectEqual('a result under noGrad requiresGrad', n.requiresGrad, false);
    x.mul(d).sum().backward();
    return expectTensor(x.grad!, { value: vector([5, 10]), dtype: 'float32' }, { label: 'no gradient flows through detach()', cls: 'exact', device: dev });
  });
  add('errors', 'backward', 'float32', () => {
    const x = leaf([1, 2]);
    expectThrows('backward() of a non-scalar without a gradient', () => x.mul(2).backward(), TensorError, 'grad can be implicitly created only for scalar outputs');
    expectThrows('backward() of a tensor that does not require grad', () => toDevice(vector([1]), 'float32', dev).sum().backward(), TensorError, 'does not require grad');
    expectThrows('in-place on a leaf that requires grad', () => x.add_(1), TensorError, 'leaf Variable that requires grad');
  });
  add('grad-dtype/half-leaf', 'backward', 'float16', async () => {
    const x = leaf([0.5, -1.5], 'float16');
    x.mul(x).sum().backward();
    return expectTensor(x.grad!, { value: vector([1, -3]), dtype: 'float16' }, { label: 'an f16 leaf gets an f16 grad', cls: 'exact', device: dev });
  }, needs('float16'));
  add('grad-dtype/through-cast', 'backward', 'float32', async () => {
    // A float32 master weight used in float16 gets a float32 gradient (the cast is recorded).
    const w = leaf([0.1, 3]);
    w.to(dtypeObject('float16')).mul(2).sum().backward();
    return expectTensor(w.grad!, { value: vector([2, 2]), dtype: 'float32' }, { label: 'grad through .to(float16)', cls: 'exact', device: dev });
  }, needs('float16', 'float32'));
  add('shared-input', 'backward', 'float32', async () => {
    const x = leaf([1, 2]);
    cat([x, x.mul(3), x]).sum().backward();
    return expectTensor(x.grad!, { value: vector([5, 5]), dtype: 'float32' }, { label: 'x used three times', cls: 'exact', device: dev });
  });
  // A leaf on the host, moved to this device in the forward pass; its gradient must come back.
  const other = env.cpu ?? (env.syncRead ? env.peer : null);
  add('across-devices', 'backward', 'float32', async () => {
    const x = toDevice(vector([1, 2, 3]), 'float32', other!, true);
    const y = x.to(dev).square().sum();
    if (!env.syncRead) {
      expectThrows('backward() that must read this device synchronously', () => y.backward(), TensorError, 'asynchronously');
      return;
    }
    y.backward();
    return expectTensor(x.grad!, { value: vector([2, 4, 6]), dtype: 'float32' }, { label: `grad of a leaf on ${other} used on ${dev}`, cls: 'exact', device: other! });
  }, other ? undefined : cpuSkip(env, `no second device: the ${env.name} backend has one device and is the cpu`));

  for (const dtype of ['float32', 'float64'] as const) {
    add(`mlp-gradients/${dtype}`, 'mlp', dtype, async () => {
      const { prob, params } = mlpSetup(`autograd-mlp/${dtype}`, dtype);
      const { grads } = mlpLossAndGrads(params, prob);
      const p = {
        w1: toDevice(nd([prob.inputs, prob.hidden], params.w1), dtype, dev, true),
        b1: toDevice(nd([prob.hidden], params.b1), dtype, dev, true),
        w2: toDevice(nd([prob.hidden, prob.classes], params.w2), dtype, dev, true),
        b2: toDevice(nd([prob.classes], params.b2), dtype, dev, true),
      };
      const x = toDevice(nd([prob.batch, prob.inputs], prob.x), dtype, dev);
      const y = toDevice(nd([prob.batch], prob.y), 'int32', dev);
      mlpLoss(x, y, p).backward();
      let maxAbs = 0;
      let maxRel = 0;
      for (const name of ['w1', 'b1', 'w2', 'b2'] as const) {
        const g = p[name].grad;
        if (!g) fail(`mlp ${dtype}: ${name} got no gradient`);
        const m = await expectTensor(g, { value: nd(p[name].shape, grads[name]), dtype }, { label: `∂loss/∂${name} (${dtype})`, cls: 'approx', tolerance: GRAD[dtype], device: dev });
        maxAbs = Math.max(maxAbs, m.maxAbs ?? 0);
        maxRel = Math.max(maxRel, m.maxRel ?? 0);
      }
      return { maxAbs, maxRel };
    }, needs(dtype, 'int32'));
  }
  return cases;
}
