// Cases generated from the op table: primitives, composites and views (forward vs the oracle),
// their NaN/Inf samples (numerics), their gradients (autograd), and, for dtypes the backend does
// not declare, the check that core rejects them with a DTypeError (capabilities).
import { DTypeError, fusedKernelsEnabled, setFusedKernelsEnabled, type DTypeName, type Tensor } from '@core/tensor';
import { expectTensor, expectThrows } from '../check.js';
import { stored, toDevice, upload } from '../inputs.js';
import { bases, expectSameAsEager, replayed, replayedCall, underCompile, type EagerOnly } from './compiled.js';
import { isFloat, roundTo } from '../oracle/dtype.js';
import { numericGradients } from '../oracle/grad.js';
import { nd, type NdArray } from '../oracle/ndarray.js';
import { OPS } from '../ops/index.js';
import type { CallContext, OpInfo, Sample } from '../opinfo.js';
import { Rng } from '../rng.js';
import { GRAD, type Tolerance } from '../tolerance.js';
import { fail, type Case, type Env, type Measure } from '../types.js';

type Variant = 'fused' | 'decomposed' | undefined;

export function withFused<T>(variant: Variant, fn: () => T): T {
  if (variant === undefined) return fn();
  const before = fusedKernelsEnabled();
  setFusedKernelsEnabled(variant === 'fused');
  try {
    return fn();
  } finally {
    setFusedKernelsEnabled(before);
  }
}

/** The op's call as its cases make it: `callAsync` when it has one (a promise), else `call`. */
function call(info: OpInfo, xs: Tensor[], args: Readonly<Record<string, unknown>>, ctx: CallContext): Tensor | Promise<Tensor> {
  return info.callAsync ? info.callAsync(xs, args, ctx) : info.call(xs, args, ctx);
}

/** The op's result, fused or decomposed. */
async function resultOf(info: OpInfo, variant: Variant, xs: Tensor[], args: Readonly<Record<string, unknown>>, ctx: CallContext): Promise<Tensor> {
  return withFused(variant, () => call(info, xs, args, ctx));
}

/** How failure messages name a case: op, dtype, sample, and fused or decomposed. */
function labelOf(info: OpInfo, dtype: DTypeName, sample: Sample, variant: Variant): string {
  return `${info.name} ${dtype} ${sample.name}${variant ? ` (${variant})` : ''}`;
}

/** Why the op cannot run compiled on this backend, when it is listed as eager only. */
function eagerOnlyOf(env: Env, info: OpInfo): EagerOnly | undefined {
  const e = info.eagerOnly;
  return e?.withoutSyncRead && env.syncRead ? undefined : e;
}

/** Why the backend's declared capabilities rule out this op/dtype/sample, or null. */
function unmet(env: Env, info: OpInfo, dtype: DTypeName, sample: Sample | undefined): string | null {
  const need = info.needs ?? 'compute';
  const declared = need === 'compute' ? env.compute : env.storage;
  if (!declared.has(dtype)) return `the ${env.name} backend does not declare ${need} for ${dtype}`;
  for (const i of sample?.inputs ?? []) {
    if (!env.storage.has(i.dtype)) return `the ${env.name} backend does not declare storage for ${i.dtype}`;
  }
  const out = info.outDtype?.(dtype) ?? dtype;
  if (!env.storage.has(out)) return `the ${env.name} backend does not declare storage for ${out} (the result dtype)`;
  return null;
}

function overrideFor(info: OpInfo, dtype: DTypeName, sample: string): Tolerance | undefined {
  return info.overrides?.find((o) => (!o.dtypes || o.dtypes.includes(dtype)) && (!o.samples || o.samples.includes(sample)))?.tolerance;
}

function variantsOf(info: OpInfo): Variant[] {
  return info.fused ? ['fused', 'decomposed'] : [undefined];
}

function fusedSkip(env: Env, info: OpInfo, variant: Variant): string | undefined {
  if (variant !== 'fused' || env.fused.has(info.fused!)) return undefined;
  return `the ${env.name} backend registers no fused ${info.fused} kernel (the decomposition is checked by the /decomposed cases)`;
}

function forwardCase(env: Env, info: OpInfo, dtype: DTypeName, sample: Sample, variant: Variant, skip: string | undefined): Case {
  const category = sample.numerics ? 'numerics' : info.category;
  const id = `${category}/${info.name}/${dtype}/${sample.name}${variant ? `/${variant}` : ''}`;
  const numericsSkip = sample.numerics && !env.strictNumerics ? `the ${env.name} backend declares strictNumerics: false` : undefined;
  const reason = skip ?? fusedSkip(env, info, variant) ?? numericsSkip;
  const args = sample.args ?? {};
  const ctx = { device: env.device, dtype };
  const label = labelOf(info, dtype, sample, variant);
  const eager = () => resultOf(info, variant, sample.inputs.map((i) => upload(i, env.device)), args, ctx);
  const check = (y: Tensor, compiled: string): Promise<Measure> => expectTensor(y, info.reference(sample.inputs.map((i) => i.value), args, dtype), {
    label: `${label}${compiled}`,
    cls: info.tolerance,
    tolerance: overrideFor(info, dtype, sample.name),
    device: env.device,
    inputs: sample.inputs.map((i) => i.value),
  });
  return {
    id,
    category,
    op: info.name,
    dtype,
    ...(reason ? { skip: reason } : {}),
    run: async () => check(await eager(), ''),
    compiled: async () => {
      const expected = await eager();
      const y = await replayedCall(label, sample.inputs, env.device, (xs, generator) => call(info, xs, args, { ...ctx, generator }), (f) => withFused(variant, f), eagerOnlyOf(env, info));
      const measure = await check(y, ' (compiled replay)');
      await expectSameAsEager(label, y, expected);
      return measure;
    },
  };
}

/** Gradients of Σ w·op(inputs) for seeded weights w, against the oracle's numeric gradients. */
function gradCase(env: Env, info: OpInfo, dtype: 'float32' | 'float64', sample: Sample, variant: Variant, skip: string | undefined): Case {
  const id = `autograd/${info.name}/${dtype}/${sample.name}${variant ? `/${variant}` : ''}`;
  const reason = skip ?? fusedSkip(env, info, variant);
  const args = sample.args ?? {};
  const ctx = { device: env.device, dtype };
  const label = labelOf(info, dtype, sample, variant);
  const wrt = info.gradInputs ?? sample.inputs.flatMap((inp, k) => (isFloat(inp.dtype) ? [k] : []));
  const views = sample.inputs.map(stored);
  const leavesOf = () => bases(sample.inputs, env.device, (k) => wrt.includes(k));

  /** Eager forward and backward: the leaves (holding their .grad), the result, and the weights w. */
  const eager = async () => {
    const leaves = leavesOf();
    const y = await resultOf(info, variant, leaves.map((leaf, k) => views[k]!.view(leaf)), args, ctx);
    const rng = new Rng(`${id}/weights`);
    const weights = nd(y.shape, () => roundTo(y.dtype.name, rng.uniform(-1, 1)));
    const w = toDevice(weights, y.dtype.name, env.device);
    withFused(variant, () => y.backward(w));
    return { leaves, y, w, weights };
  };

  /** Each differentiable input's .grad against the oracle's numeric gradients of Σ w·op. */
  const check = async (leaves: readonly Tensor[], weights: NdArray, compiled: string): Promise<Measure> => {
    const values = sample.inputs.map((i) => i.value);
    const grads = numericGradients((ins) => info.reference(ins, args, 'float64').value, values, weights, values.map((_, k) => wrt.includes(k)));
    let maxAbs = 0;
    let maxRel = 0;
    for (const k of wrt) {
      const g = leaves[k]!.grad;
      if (!g) fail(`${label}${compiled}: input ${k} requires grad but got no .grad after backward()`);
      const m = await expectTensor(g, { value: views[k]!.baseGrad(grads[k]!), dtype }, {
        label: `∂/∂input${k} of ${label}${compiled}`,
        cls: 'approx',
        tolerance: GRAD[dtype],
        device: env.device,
      });
      maxAbs = Math.max(maxAbs, m.maxAbs ?? 0);
      maxRel = Math.max(maxRel, m.maxRel ?? 0);
    }
    return { maxAbs, maxRel };
  };

  return {
    id,
    category: 'autograd',
    op: info.name,
    dtype,
    ...(reason ? { skip: reason } : {}),
    run: async () => {
      const { leaves, weights } = await eager();
      return check(leaves, weights, '');
    },
    compiled: async () => {
      const expected = await eager();
      const leaves = leavesOf();
      const step = (...ls: Tensor[]) => {
        const y = call(info, ls.map((leaf, k) => views[k]!.view(leaf)), args, ctx);
        const backward = (r: Tensor) => {
          r.backward(expected.w);
          return r;
        };
        return y instanceof Promise ? y.then(backward) : backward(y);
      };
      const clearGrads = () => wrt.forEach((k) => (leaves[k]!.grad = null));
      const y = await underCompile(label, eagerOnlyOf(env, info), () => replayed(label, step, leaves, sample.inputs, (f) => withFused(variant, f), clearGrads));
      const measure = await check(leaves, expected.weights, ' (compiled replay)');
      await expectSameAsEager(label, y, expected.y);
      for (const k of wrt) await expectSameAsEager(`∂/∂input${k} of ${label}`, leaves[k]!.grad!, expected.leaves[k]!.grad!);
      return measure;
    },
  };
}

/** An op on a dtype the backend does not declare: core must raise a DTypeError before the backend is called. */
function rejectCase(env: Env, info: OpInfo, dtype: DTypeName, sample: Sample, reason: string): Case {
  return {
    id: `capabilities/${info.name}/${dtype}/rejects`,
    category: 'capabilities',
    op: info.name,
    dtype,
    run: () => {
      const label = `${info.name} on ${dtype} (${reason})`;
      const unstorable = sample.inputs.find((i) => !env.storage.has(i.dtype));
      if (unstorable) {
        expectThrows(`${label}: creating a ${unstorable.dtype} tensor`, () => upload(unstorable, env.device), DTypeError, unstorable.dtype);
        return;
      }
      const tensors = sample.inputs.map((i) => upload(i, env.device));
      expectThrows(label, () => info.call(tensors, sample.args ?? {}, { device: env.device, dtype }), DTypeError);
    },
  };
}

export function tableCases(env: Env): Case[] {
  const cases: Case[] = [];
  const rejected = new Set<string>(); // ops sharing a name (the write-through views) share one rejection case
  for (const info of OPS) {
    for (const dtype of info.dtypes) {
      const samples = info.samples(dtype, new Rng(`${info.name}/${dtype}`));
      const first = samples.find((s) => !s.numerics) ?? samples[0];
      const why = unmet(env, info, dtype, first);
      if (why && !rejected.has(`${info.name}/${dtype}`)) {
        rejected.add(`${info.name}/${dtype}`);
        cases.push(rejectCase(env, info, dtype, first!, why));
      }
      const skip = why ? `declared capabilities: ${why} (checked by capabilities/${info.name}/${dtype}/rejects)` : undefined;
      for (const sample of samples) {
        for (const variant of variantsOf(info)) cases.push(forwardCase(env, info, dtype, sample, variant, skip ?? sampleSkip(env, info, dtype, sample)));
      }
      if (info.differentiable && (dtype === 'float32' || dtype === 'float64')) {
        const gradSamples = info.gradSamples?.(dtype, new Rng(`grad/${info.name}/${dtype}`))
          ?? samples.filter((s) => !s.numerics && s.inputs.every((i) => i.value.data.length > 0)).slice(0, 2).map((s) => ({ ...s, name: `grad-${s.name}` }));
        for (const sample of gradSamples) {
          for (const variant of variantsOf(info)) cases.push(gradCase(env, info, dtype, sample, variant, skip));
        }
      }
    }
  }
  return cases;
}

/** A sample whose own inputs need a dtype the backend lacks (e.g. an int32 index) is skipped on its own. */
function sampleSkip(env: Env, info: OpInfo, dtype: DTypeName, sample: Sample): string | undefined {
  const why = unmet(env, info, dtype, sample);
  return why ? `declared capabilities: ${why}` : undefined;
}
