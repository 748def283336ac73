// Autocast (AC-*) on the backend's device type, driven by its policy table (`autocastPolicy`):
// - per listed op the core has: lower-precision ops give the region dtype with the oracle's values
//   for inputs rounded into it (AC-8); fp32 and fp32-first-arg ops give float32 (AC-9, AC-10, and an
//   explicit dtype wins); promote ops take the widest eligible dtype or raise (AC-12); banned ops
//   raise (AC-13); unlisted ops behave exactly as outside a region (AC-7);
// - eligibility (AC-6), independence of device types (AC-5), nesting and enabled: false (AC-4),
//   region dtype checks (AC-2, AC-3), the weight-cast cache (AC-15) and backward dtypes (AC-14).
// A backend whose device type has no table (a third party that declared none) is tested with
// CUDA's lists and a float16 default, registered for the run as a GPU-like backend would
// (`autocast/policy/...` says which); region cases need compute in the region dtype, so a backend
// without float16/bfloat16 compute gets capability skips and the AC-3 refusal checks instead.
import {
  autocast, autocastOp, autocastPolicy, BINARY_OPS, cpu, device, DTYPES, DTypeError, float16, float32, getAutocastDtype,
  isAutocastEnabled, isAvailable, listBackends, OP_TABLE, registerAutocastPolicy, TensorError, UNARY_OPS, type OpName,
  type AutocastPolicyTable, type Device, type DType, type DTypeName, type Tensor,
} from '@core/tensor';
import { expectEqual, expectTensor, expectThrows, expectTrue, type Expected } from '../check.js';
import { stored, toDevice, upload, type Input } from '../inputs.js';
import { expectSameAsEager, replayedCall } from './compiled.js';
import { isFloat, roundTo } from '../oracle/dtype.js';
import { numericGradients } from '../oracle/grad.js';
import { map, nd, type NdArray } from '../oracle/ndarray.js';
import * as ref from '../oracle/ops.js';
import { OPS } from '../ops/index.js';
import type { OpInfo, Sample } from '../opinfo.js';
import { Rng } from '../rng.js';
import { APPROX, GRAD, type Tolerance } from '../tolerance.js';
import { cpuSkip, fail, type Case, type Env, type Measure } from '../types.js';

type Half = 'float16' | 'bfloat16';
type Policy = 'lowerPrecision' | 'fp32' | 'fp32FirstArg' | 'promote' | 'banned' | 'unlisted';

/**
 * The ops the cases check: every elementwise primitive (listed or not, AC-7) and every op the op
 * table gives an autocast class, whether core or @core/nn implements it (those with an OpInfo).
 */
const CORE_SITES: ReadonlySet<OpName> = new Set<OpName>([
  ...UNARY_OPS, ...BINARY_OPS, ...(Object.keys(OP_TABLE) as OpName[]).filter((op) => OP_TABLE[op].autocast !== undefined),
]);

/**
 * Unlisted ops whose PyTorch counterpart does not keep its input dtype under autocast, because
 * PyTorch implements them by calling a listed op: `square` is `pow(x, 2)`, so a table listing pow
 * as fp32 makes it float32 there. The library's square is `mul(x, x)`; neither is checked here.
 */
const UNLISTED_EXCLUDED = new Set(['square']);

/** Ops with a `dtype` option (AC-10: an explicit dtype is honoured and bypasses autocast). */
const WITH_DTYPE: Readonly<Record<string, (x: Tensor, a: Readonly<Record<string, any>>, dtype: DType) => Tensor>> = {
  sum: (x, a, dtype) => x.sum(a.dim, a.keepdim ?? false, { dtype }),
  prod: (x, a, dtype) => x.prod(a.dim ?? null, a.keepdim ?? false, { dtype }),
  softmax: (x, a, dtype) => x.softmax(a.dim, { dtype }),
  logSoftmax: (x, a, dtype) => x.logSoftmax(a.dim, { dtype }),
};

const INFOS = new Map<string, OpInfo>();
for (const info of OPS) if (!INFOS.has(info.name)) INFOS.set(info.name, info);

/** The class of `op` in `table`; an OpInfo name that is not an op of the table is unlisted. */
function policyOf(table: AutocastPolicyTable, name: string): Policy {
  const op = name as OpName;
  if (table.banned[op] !== undefined) return 'banned';
  if (table.lowerPrecision.includes(op)) return 'lowerPrecision';
  if (table.fp32.includes(op)) return 'fp32';
  if (table.fp32FirstArg.includes(op)) return 'fp32FirstArg';
  if (table.promote.includes(op)) return 'promote';
  return 'unlisted';
}

/** The table the cases use, and how it got there. */
interface PolicySource {
  readonly table: AutocastPolicyTable;
  /** 'declared' (built in or registered by the backend) or the built-in table it was derived from. */
  readonly source: 'declared' | 'cuda';
  /** Make sure the table is registered for the device type (a no-op when it was declared). */
  readonly ensure: () => void;
}

/** Tables this suite registered, so a second instantiation for the same device type keeps its case ids. */
const registeredBySuite = new Map<string, AutocastPolicyTable>();

function resolvePolicy(name: string): PolicySource | null {
  const own = autocastPolicy(name);
  if (own && registeredBySuite.get(name) === own) return { table: own, source: 'cuda', ensure: () => {} };
  if (own) return { table: own, source: 'declared', ensure: () => {} };
  const cuda = autocastPolicy('cuda');
  if (!cuda) return null;
  // A GPU-like third party with no table of its own: CUDA's lists, float16 by default.
  const table: AutocastPolicyTable = { ...cuda, defaultDtype: float16 };
  return {
    table,
    source: 'cuda',
    ensure: () => {
      if (autocastPolicy(name)) return;
      registerAutocastPolicy(name, table);
      registeredBySuite.set(name, table);
    },
  };
}

/** A tensor device of another type than the backend's, for AC-5/AC-6 (the cpu, or another registered backend). */
function otherDevice(env: Env): Device | null {
  if (env.cpu) return env.cpu;
  const other = listBackends().find((n) => n !== env.name && isAvailable(n));
  if (!other) return null;
  return other === 'cpu' ? cpu : device(other, 0);
}

function overrideFor(info: OpInfo, dtype: DTypeName, sample: string): Tolerance | undefined {
  return info.overrides?.find((o) => (!o.dtypes || o.dtypes.includes(dtype)) && (!o.samples || o.samples.includes(sample)))?.tolerance;
}

/** Inputs with their floating values stored as `dtype` (values must already be exact in it). */
function asDtype(inputs: readonly Input[], dtype: DTypeName, which: (k: number) => boolean = () => true): Input[] {
  return inputs.map((i, k) => (isFloat(i.dtype) && which(k) ? { ...i, dtype } : i));
}

/** The floating inputs' values rounded into `dtype` (what a cast to it stores). */
function roundedValues(inputs: readonly Input[], dtype: DTypeName): NdArray[] {
  return inputs.map((i) => (isFloat(i.dtype) ? map(i.value, (v) => roundTo(dtype, v)) : i.value));
}

function floatInputs(sample: Sample): number[] {
  return sample.inputs.flatMap((i, k) => (isFloat(i.dtype) ? [k] : []));
}

/** Samples for the autocast cases: the op's own, without NaN/Inf ones, seeded per op and dtype. */
function samplesOf(info: OpInfo, dtype: DTypeName, count = Infinity): Sample[] {
  return info.samples(dtype, new Rng(`autocast/${info.name}/${dtype}`)).filter((s) => !s.numerics && s.inputs.length > 0).slice(0, count);
}

function identity<A extends readonly unknown[]>(...args: A): A {
  return args;
}

export function autocastCases(env: Env): Case[] {
  const cases: Case[] = [];
  const dev = env.device;
  const add = (id: string, op: string, dtype: DTypeName | '-', run: Case['run'], skip?: string, compiled?: Case['compiled']) =>
    cases.push({ id: `autocast/${id}`, category: 'autocast', op, dtype, run, ...(skip ? { skip } : {}), ...(compiled ? { compiled } : {}) });

  const policy = resolvePolicy(env.name);
  if (!policy) {
    add('policy/none', 'policy', '-', () => {}, `no autocast policy for ${env.name} (and no built-in cuda table to derive one from)`);
    return cases;
  }
  const { table, ensure } = policy;
  const halves = table.allowedDtypes.map((d) => d.name).filter((d): d is Half => d === 'float16' || d === 'bfloat16');
  const computes = (d: DTypeName) => env.compute.has(d);
  /** Why a region in `d` cannot run on this backend (it is refused, AC-3), or undefined. */
  const regionSkip = (d: DTypeName, ...more: DTypeName[]): string | undefined => {
    if (!computes(d)) return `declared capabilities: the ${env.name} backend does not declare compute for ${d}, so ${d} autocast regions are refused (checked by autocast/AC-3/${d}/region)`;
    const missing = ['float32' as DTypeName, ...more].find((x) => !computes(x));
    return missing ? `declared capabilities: the ${env.name} backend does not declare compute for ${missing}` : undefined;
  };
  const region = (d: DTypeName) => ({ deviceType: env.name, dtype: DTYPES[d] });
  const inRegion = <T>(d: DTypeName, fn: () => T): T => {
    ensure();
    return autocast(region(d), fn);
  };
  const sites = [...CORE_SITES].filter((op) => INFOS.has(op));
  const listed = (p: Policy) => sites.filter((op) => policyOf(table, op) === p);
  const lowerOps = listed('lowerPrecision');
  // The op the region-level cases use: a matrix product the table runs in lower precision.
  const lowerOp = (['mm', 'matmul', 'bmm'] as const).find((op) => lowerOps.includes(op));
  const noLowerOp = lowerOp ? undefined : `the ${env.name} autocast policy lists none of mm, matmul, bmm as lower precision`;
  const mmCall = (a: Tensor, b: Tensor) => (lowerOp === 'bmm' ? a.unsqueeze(0).bmm(b.unsqueeze(0)).squeeze(0) : lowerOp === 'matmul' ? a.matmul(b) : a.mm(b));
  const mmExpected = (a: NdArray, b: NdArray, dtype: DTypeName): Expected => {
    const acc = ref.matmul(a, b);
    return { value: map(acc.value, (v) => roundTo(dtype, v)), dtype, bound: acc.magnitude.data.map((m) => (acc.length + 2) * 2 ** -24 * m) };
  };
  const rngArray = (seed: string, shape: number[], dtype: DTypeName = 'float32') => {
    const rng = new Rng(seed);
    return nd(shape, () => roundTo(dtype, rng.uniform(-2, 2)));
  };

  // ---- the table itself ----
  add(`policy/${policy.source === 'declared' ? 'declared' : 'cuda-lists-float16-registered-by-suite'}`, 'policy', '-', () => {
    ensure();
    const t = autocastPolicy(env.name);
    expectTrue(`autocastPolicy('${env.name}') is defined`, t !== undefined);
    expectTrue(`the default dtype ${t!.defaultDtype.name} is one of the allowed dtypes`, t!.allowedDtypes.includes(t!.defaultDtype));
    expectEqual(`getAutocastDtype('${env.name}') outside a region (AC-2)`, getAutocastDtype(env.name), t!.defaultDtype);
    expectEqual(`isAutocastEnabled('${env.name}') outside a region`, isAutocastEnabled(env.name), false);
  });

  // ---- AC-2/AC-3: which region dtypes the device accepts ----
  for (const d of halves) {
    add(`AC-3/${d}/region`, 'region', d, () => {
      ensure();
      if (computes(d)) {
        autocast(region(d), () => {
          expectEqual(`isAutocastEnabled('${env.name}') in a ${d} region`, isAutocastEnabled(env.name), true);
          expectEqual(`getAutocastDtype('${env.name}') in a ${d} region`, getAutocastDtype(env.name), DTYPES[d]);
        });
      } else {
        expectThrows(`a ${d} region on ${env.name}, which declares no ${d} compute`, () => autocast(region(d), () => {}), DTypeError, 'does not support', d);
      }
      expectEqual(`isAutocastEnabled('${env.name}') after the region`, isAutocastEnabled(env.name), false);
    });
  }
  add('AC-2/default-dtype', 'region', table.defaultDtype.name, () => {
    ensure();
    const d = table.defaultDtype.name;
    if (!computes(d)) {
      expectThrows(`a region with the default dtype ${d}`, () => autocast({ deviceType: env.name }, () => {}), DTypeError, 'does not support');
      return;
    }
    autocast({ deviceType: env.name }, () => expectEqual('the region dtype when none is given', getAutocastDtype(env.name), table.defaultDtype));
  });
  add('AC-3/float64-refused', 'region', 'float64', () => {
    ensure();
    if (env.name === 'cpu') {
      // cpu warns and disables the region (PyTorch's wording).
      const warnings: string[] = [];
      const warn = console.warn;
      console.warn = (...args: unknown[]) => { warnings.push(args.map(String).join(' ')); };
      try {
        autocast({ deviceType: 'cpu', dtype: DTYPES.float64 }, () => expectEqual('isAutocastEnabled in a refused cpu region', isAutocastEnabled('cpu'), false));
      } finally {
        console.warn = warn;
      }
      expectTrue('a cpu region in float64 warns "In CPU autocast, but the target dtype is not supported. Disabling autocast."',
        warnings.some((w) => w.startsWith('In CPU autocast, but the target dtype is not supported. Disabling autocast.')), `warnings: ${JSON.stringify(warnings)}`);
      return;
    }
    expectThrows(`a float64 region on ${env.name}`, () => autocast(region('float64'), () => {}), DTypeError, 'not supported');
  });

  // ---- AC-8: lower precision ----
  for (const op of lowerOps) {
    const info = INFOS.get(op)!;
    for (const d of halves) {
      const skip = regionSkip(d);
      for (const sample of samplesOf(info, 'float32')) {
        const args = sample.args ?? {};
        const label = `${op} of float32 inputs in a ${d} region (inputs rounded to ${d})`;
        const opCall = (xs: Tensor[]) => info.call(xs, args, { device: dev, dtype: d });
        const eager = () => inRegion(d, () => opCall(sample.inputs.map((i) => upload(i, dev))));
        const check = (y: Tensor, how: string) => expectTensor(y, info.reference(roundedValues(sample.inputs, d), args, d), {
          label: `${label}${how}`, cls: info.tolerance, tolerance: overrideFor(info, d, sample.name), device: dev,
        });
        // Compiled: the region is entered around each call (a guard of the program), the casts it
        // inserts are recorded and replayed.
        add(`AC-8/${op}/${d}/${sample.name}`, op, d, () => check(eager(), ''), skip, async () => {
          const expected = eager();
          const y = await replayedCall(label, sample.inputs, dev, opCall, (f) => inRegion(d, f));
          const measure = await check(y, ' (compiled replay)');
          await expectSameAsEager(label, y, expected);
          return measure;
        });
      }
      if (op === lowerOp) {
        add(`AC-8/${op}/${d}/inputs-rounded-first`, op, d, async () => {
          // [x, −1]·[1, 1]ᵀ with x = 1 + ¾ ulp: rounding x to d first gives 1 ulp, the unrounded
          // product ¾ ulp; any tolerance tells them apart.
          const ulp = d === 'float16' ? 2 ** -10 : 2 ** -7;
          const x = 1 + 0.75 * ulp;
          const y = inRegion(d, () => mmCall(toDevice(nd([1, 2], [x, -1]), 'float32', dev), toDevice(nd([2, 1], [1, 1]), 'float32', dev)));
          return expectTensor(y, { value: nd([1, 1], [ulp]), dtype: d }, { label: `${op} of float32 inputs in a ${d} region (x = 1 + ¾ ulp rounds to 1 + ulp before the product)`, cls: 'exact', device: dev });
        }, skip);
      }
      const first = samplesOf(info, d).find((s) => floatInputs(s).length >= 2);
      if (first) {
        add(`AC-8/${op}/${d}/mixed-${d}+float32`, op, d, async () => {
          // mm(f32, f16) → f16: the first operand already in the region dtype, the other float32.
          const [k0] = floatInputs(first);
          const inputs = asDtype(first.inputs, 'float32', (k) => k !== k0);
          const tensors = inputs.map((i) => upload(i, dev));
          const y = inRegion(d, () => info.call(tensors, first.args ?? {}, { device: dev, dtype: d }));
          return expectTensor(y, info.reference(roundedValues(first.inputs, d), first.args ?? {}, d), { label: `${op}(${d}, float32) in a ${d} region`, cls: info.tolerance, device: dev });
        }, skip);
      }
    }
  }

  // ---- AC-8: a product with a bias rounds once ----
  // PyTorch's linear, convolutions, addmm and baddbmm add the bias to the GEMM's f32 accumulator and round once.
  // The inputs are dyadic (m·2⁻⁶ and m·2⁻¹²) so that every f32 sum is exact: the expected value is
  // the exact result rounded once to d, compared bit for bit. Rounding the product before adding
  // the bias (a double rounding) is off by an ulp in a large share of the elements.
  // Input shapes per op; the bias (m·2⁻¹²) is the last input of linear and conv2d, the first of addmm/baddbmm.
  const ROUND_ONCE: Partial<Record<OpName, { shapes: number[][]; bias: number }>> = {
    linear: { shapes: [[5, 8], [6, 8], [6]], bias: 2 },
    conv2d: { shapes: [[2, 3, 5, 5], [4, 3, 3, 3], [4]], bias: 2 },
    addmm: { shapes: [[5, 6], [5, 8], [8, 6]], bias: 0 },
    baddbmm: { shapes: [[2, 5, 6], [2, 5, 8], [2, 8, 6]], bias: 0 },
  };
  for (const [op, { shapes, bias }] of Object.entries(ROUND_ONCE) as [OpName, { shapes: number[][]; bias: number }][]) {
    const info = INFOS.get(op);
    if (!info || !lowerOps.includes(op)) continue;
    for (const d of halves) {
      add(`AC-8/${op}/${d}/bias-rounds-once`, op, d, async () => {
        const rng = new Rng(`autocast/round-once/${op}/${d}`);
        const dyadic = (shape: number[], bits: number, scale: number) => nd(shape, () => Math.round(rng.uniform(-1, 1) * 2 ** bits) * scale);
        const values = shapes.map((shape, k) => (k === bias ? dyadic(shape, 8, 2 ** -12) : dyadic(shape, 6, 2 ** -6)));
        const y = inRegion(d, () => info.call(values.map((v) => toDevice(v, 'float32', dev)), {}, { device: dev, dtype: d }));
        const exact = info.reference(values, {}, 'float64');
        return expectTensor(y, { value: map(exact.value, (v) => roundTo(d, v)), dtype: d }, { label: `${op} with a bias in a ${d} region (the f32 accumulator plus the bias, rounded once to ${d})`, cls: 'exact', device: dev });
      }, regionSkip(d));
    }
  }

  // ---- AC-9 / AC-10: float32 ops ----
  for (const kind of ['fp32', 'fp32FirstArg'] as const) {
    const spec = kind === 'fp32' ? 'AC-9' : 'AC-10';
    for (const op of listed(kind)) {
      const info = INFOS.get(op)!;
      for (const d of halves) {
        const skip = regionSkip(d);
        const samples = samplesOf(info, d, 5);
        for (const sample of samples) {
          add(`${spec}/${op}/${d}/${sample.name}`, op, d, async () => {
            const args = sample.args ?? {};
            const tensors = sample.inputs.map((i) => upload(i, dev));
            const y = inRegion(d, () => info.call(tensors, args, { device: dev, dtype: d }));
            // The op runs in float32 on the (exactly widened) inputs and returns float32.
            const out = info.outDtype?.('float32') ?? 'float32';
            return expectTensor(y, info.reference(sample.inputs.map((i) => i.value), args, out), { label: `${op} of ${d} inputs in a ${d} region`, cls: info.tolerance, tolerance: overrideFor(info, 'float32', sample.name), device: dev });
          }, skip);
        }
        const call = WITH_DTYPE[op];
        if (kind === 'fp32FirstArg' && call && samples[0]) {
          const sample = samples[0];
          for (const explicit of [d, 'float64'] as const) {
            add(`AC-10/${op}/${d}/explicit-dtype-${explicit}`, op, d, async () => {
              const args = sample.args ?? {};
              const [x] = sample.inputs.map((i) => upload(i, dev));
              const y = inRegion(d, () => call(x!, args, DTYPES[explicit]));
              return expectTensor(y, info.reference(sample.inputs.map((i) => i.value), args, explicit), { label: `${op}(x, { dtype: ${explicit} }) in a ${d} region (the explicit dtype wins)`, cls: info.tolerance, device: dev });
            }, skip ?? regionSkip(d, explicit));
          }
        }
      }
    }
  }

  // ---- AC-12: promote ----
  for (const op of listed('promote')) {
    const info = INFOS.get(op)!;
    for (const d of halves) {
      const skip = regionSkip(d);
      const samples = samplesOf(info, d, 4);
      for (const sample of samples) {
        add(`AC-12/${op}/${d}/all-${d}/${sample.name}`, op, d, async () => {
          const args = sample.args ?? {};
          const tensors = sample.inputs.map((i) => upload(i, dev));
          const y = inRegion(d, () => info.call(tensors, args, { device: dev, dtype: d }));
          return expectTensor(y, info.reference(sample.inputs.map((i) => i.value), args, d), { label: `${op} of ${d} inputs in a ${d} region stays ${d}`, cls: info.tolerance, device: dev });
        }, skip);
      }
      const mixed = samples.find((s) => floatInputs(s).length >= 2);
      if (!mixed) continue;
      const [k0] = floatInputs(mixed);
      add(`AC-12/${op}/${d}/mixed-${d}+float32/${mixed.name}`, op, d, async () => {
        const args = mixed.args ?? {};
        const tensors = asDtype(mixed.inputs, 'float32', (k) => k !== k0).map((i) => upload(i, dev));
        const y = inRegion(d, () => info.call(tensors, args, { device: dev, dtype: d }));
        return expectTensor(y, info.reference(mixed.inputs.map((i) => i.value), args, 'float32'), { label: `${op} of ${d} and float32 inputs in a ${d} region promotes to float32`, cls: info.tolerance, device: dev });
      }, skip);
      const other: Half = d === 'float16' ? 'bfloat16' : 'float16';
      add(`AC-12/${op}/${d}/prioritize-error-${other}`, op, d, () => {
        const tensors = asDtype(mixed.inputs, other, (k) => k !== k0).map((i) => upload(i, dev));
        inRegion(d, () => expectThrows(`${op} of ${d} and ${other} in a ${d} region`, () => info.call(tensors, mixed.args ?? {}, { device: dev, dtype: d }), TensorError, 'Unexpected floating ScalarType in at::autocast::prioritize'));
      }, skip ?? (env.storage.has(other) ? undefined : `declared capabilities: the ${env.name} backend does not declare storage for ${other}`));
    }
  }

  // ---- AC-13: banned ops (checked at the dispatch step: the core may have no such op) ----
  for (const [op, message] of Object.entries(table.banned) as [OpName, string][]) {
    for (const d of halves) {
      add(`AC-13/${op}/${d}`, op, d, () => {
        const x = toDevice(nd([3], [0.25, 0.5, 0.75]), 'float32', dev);
        const run = () => autocastOp(op, [x, x] as const, (a: Tensor, _b: Tensor) => a);
        expectTrue(`autocastOp('${op}') outside a region runs`, run() === x);
        inRegion(d, () => {
          const e = expectThrows(`${op} in a ${d} region`, run, TensorError);
          expectEqual(`${op}'s error message`, e.message, message);
        });
        autocast({ deviceType: env.name, dtype: DTYPES[d], enabled: false }, () => expectTrue(`autocastOp('${op}') in a disabled region runs`, run() === x));
      }, regionSkip(d));
    }
  }

  // ---- AC-7: unlisted ops behave as outside a region ----
  for (const d of halves) {
    const skip = regionSkip(d);
    for (const info of OPS) {
      if (info.category === 'views' || !info.dtypes.includes(d) || UNLISTED_EXCLUDED.has(info.name)) continue;
      if (policyOf(table, info.name) !== 'unlisted') continue;
      // An op that reads values (callAsync) runs its synchronous call in the region: where reads are synchronous.
      if (info.callAsync && !env.syncRead) continue;
      const sample = samplesOf(info, d, 1)[0];
      if (!sample || sample.inputs.some((i) => !env.storage.has(i.dtype))) continue;
      // A result dtype the backend cannot store (a cast to float64 on webgpu) is a capability gap, not AC-7's business.
      if (info.outDtype && !env.storage.has(info.outDtype(d))) continue;
      add(`AC-7/unlisted/${info.name}/${d}/${sample.name}`, info.name, d, async () => {
        const args = sample.args ?? {};
        const tensors = sample.inputs.map((i) => upload(i, dev));
        const y = inRegion(d, () => info.call(tensors, args, { device: dev, dtype: d }));
        return expectTensor(y, info.reference(sample.inputs.map((i) => i.value), args, d), { label: `${info.name} (unlisted) of ${d} inputs in a ${d} region`, cls: info.tolerance, tolerance: overrideFor(info, d, sample.name), device: dev });
      }, skip);
    }
    for (const op of BINARY_OPS) {
      const info = INFOS.get(op);
      if (!info || policyOf(table, op) !== 'unlisted' || !info.dtypes.includes(d) || info.needs === 'storage') continue;
      const sample = samplesOf(info, d).find((s) => floatInputs(s).length === 2);
      if (!sample) continue;
      add(`AC-7/promotion/${op}/${d}+float32`, op, d, async () => {
        // add(f16, f32) → f32 by normal promotion (TP-*), not by autocast.
        const tensors = asDtype(sample.inputs, 'float32', (k) => k === 1).map((i) => upload(i, dev));
        const y = inRegion(d, () => info.call(tensors, sample.args ?? {}, { device: dev, dtype: d }));
        return expectTensor(y, info.reference(sample.inputs.map((i) => i.value), sample.args ?? {}, 'float32'), { label: `${op}(${d}, float32) in a ${d} region`, cls: info.tolerance, device: dev });
      }, skip);
    }
    add(`AC-7/in-place-not-autocast/${d}`, 'mul_', d, async () => {
      // In-place ops run inside regions but are not autocast: float32 stays float32, unrounded.
      const a = [1 + 2 ** -12, -3 + 2 ** -13, 0.1];
      const b = [1 + 2 ** -12, 1.0009765625, 7.3];
      const t = toDevice(nd([3], a.map(Math.fround)), 'float32', dev);
      const u = toDevice(nd([3], b.map(Math.fround)), 'float32', dev);
      inRegion(d, () => t.mul_(u));
      return expectTensor(t, { value: nd([3], a.map((v, i) => Math.fround(Math.fround(v) * Math.fround(b[i]!)))), dtype: 'float32' }, { label: `t.mul_(u) on float32 tensors in a ${d} region`, cls: 'exact', device: dev });
    }, skip);
    if (lowerOp) {
      add(`AC-7/linear-bias-add/${d}`, 'matmul+add', d, async () => {
        // "linear" through core ops: the product is lower precision (AC-8), the bias add is unlisted
        // and promotes with the float32 bias (AC-7); a fused F.linear would give the region dtype.
        const x = rngArray(`linear/x/${d}`, [3, 4]);
        const w = rngArray(`linear/w/${d}`, [5, 4]);
        const b = rngArray(`linear/b/${d}`, [5]);
        const [xt, wt, bt] = [toDevice(x, 'float32', dev), toDevice(w, 'float32', dev), toDevice(b, 'float32', dev)];
        let z!: Tensor;
        const y = inRegion(d, () => {
          z = mmCall(xt, wt.t());
          return z.add(bt);
        });
        expectEqual(`x @ wᵀ in a ${d} region`, z.dtype.name, d);
        const rd = (a: NdArray) => map(a, (v) => roundTo(d, v));
        const prod = ref.matmul(rd(x), transposeOf(rd(w)));
        const zv = map(prod.value, (v) => roundTo(d, v));
        const value = nd([3, 5], (i) => Math.fround(zv.data[i]! + b.data[i % 5]!));
        // One rounding of the product into d (which a different accumulation order may move by an
        // ulp of d) plus the float32 accumulation: bounded per element.
        const u = d === 'float16' ? 2 ** -11 : 2 ** -8;
        const bound = prod.magnitude.data.map((m, i) => 2 * u * Math.abs(zv.data[i]!) + (prod.length + 2) * 2 ** -24 * m);
        return expectTensor(y, { value, dtype: 'float32', bound }, { label: `(x @ wᵀ) + b in a ${d} region`, cls: 'accumulated', device: dev });
      }, skip ?? noLowerOp);
    }
  }

  // ---- AC-6 / AC-5: eligibility ----
  const other = otherDevice(env);
  for (const d of halves) {
    const skip = regionSkip(d) ?? noLowerOp;
    add(`AC-6/pass-through/${d}`, lowerOp ?? 'mm', d, () => {
      const f = toDevice(nd([2, 2], [1, 2, 3, 4]), 'float32', dev);
      const h = toDevice(nd([2, 2], [1, 2, 3, 4]), d, dev);
      const i = env.storage.has('int32') ? toDevice(nd([2], [1, 2]), 'int32', dev) : null;
      const w = env.storage.has('float64') ? toDevice(nd([2], [1, 2]), 'float64', dev) : null;
      const o = other ? toDevice(nd([2], [1, 2]), 'float32', other) : null;
      inRegion(d, () => {
        const [f2, h2, i2, w2, o2] = autocastOp(lowerOp!, [f, h, i, w, o] as const, identity);
        expectEqual(`a float32 ${env.name} tensor becomes`, f2.dtype.name, d);
        expectTrue(`a ${d} tensor is passed through as the same object`, h2 === h);
        expectTrue('an int32 tensor is passed through as the same object', i2 === i);
        expectTrue('a float64 tensor is passed through as the same object', w2 === w);
        expectTrue(`a float32 tensor on ${other} is passed through as the same object`, o2 === o);
      });
    }, skip);
    for (const [dt, why] of [['float64', 'float64 ops stay float64'], ['int32', 'integer ops are untouched']] as const) {
      const info = lowerOp ? INFOS.get(lowerOp)! : undefined;
      const sample = info?.dtypes.includes(dt) ? samplesOf(info, dt, 1)[0] : undefined;
      if (!info || !sample) continue;
      add(`AC-6/${dt}-${lowerOp}/${d}`, lowerOp!, d, async () => {
        const tensors = sample.inputs.map((i) => upload(i, dev));
        const y = inRegion(d, () => info.call(tensors, sample.args ?? {}, { device: dev, dtype: dt }));
        return expectTensor(y, info.reference(sample.inputs.map((i) => i.value), sample.args ?? {}, dt), { label: `${lowerOp} of ${dt} inputs in a ${d} region (${why})`, cls: info.tolerance, device: dev });
      }, skip ?? (computes(dt) && env.storage.has(dt) ? undefined : `declared capabilities: the ${env.name} backend does not declare compute for ${dt}`));
    }
    const fp32Op = [...listed('fp32'), ...listed('fp32FirstArg')][0];
    if (fp32Op) {
      const info = INFOS.get(fp32Op)!;
      const sample = samplesOf(info, 'float64', 1)[0];
      if (sample) {
        add(`AC-6/float64-${fp32Op}/${d}`, fp32Op, d, async () => {
          const tensors = sample.inputs.map((i) => upload(i, dev));
          const y = inRegion(d, () => info.call(tensors, sample.args ?? {}, { device: dev, dtype: 'float64' }));
          return expectTensor(y, info.reference(sample.inputs.map((i) => i.value), sample.args ?? {}, 'float64'), { label: `${fp32Op} of float64 inputs in a ${d} region stays float64`, cls: info.tolerance, device: dev });
        }, regionSkip(d, 'float64'));
      }
    }
    add(`AC-5/other-device-type/${d}`, lowerOp ?? 'mm', d, async () => {
      // A region for this device type leaves tensors of another type alone.
      const a = rngArray(`other/a/${d}`, [3, 4]);
      const b = rngArray(`other/b/${d}`, [4, 2]);
      const y = inRegion(d, () => toDevice(a, 'float32', other!).mm(toDevice(b, 'float32', other!)));
      return expectTensor(y, mmExpected(a, b, 'float32'), { label: `mm on ${other} in a ${env.name} ${d} region`, cls: 'accumulated', device: other! });
    }, skip ?? (other ? undefined : `no second device type: only the ${env.name} backend is registered`));
  }
  // A cpu 0-dim tensor may be the first operand of a binary op with device tensors (SD-3). The
  // region still applies: PyTorch dispatches autocast on the keys of all arguments, so pow(cpu
  // scalar, f16 device tensor) in a device region is an fp32 op and returns float32.
  const fp32Binary = listed('fp32').find((op) => (BINARY_OPS as readonly string[]).includes(op));
  for (const d of halves) {
    if (!fp32Binary || env.name === 'cpu' || (!env.cpu && env.cpuPresence !== 'absent')) continue;
    const info = INFOS.get(fp32Binary)!;
    add(`AC-5/cpu-scalar-first/${fp32Binary}/${d}`, fp32Binary, d, async () => {
      const sv = 1.75;
      const hv = [0.5, 1.25, -1.5].map((v) => roundTo(d, v));
      const s = toDevice(nd([], [sv]), 'float32', cpu);
      const h = toDevice(nd([3], hv), d, dev);
      const y = inRegion(d, () => info.call([s, h], {}, { device: dev, dtype: d }));
      return expectTensor(y, info.reference([nd([], [sv]), nd([3], hv)], {}, 'float32'), { label: `${fp32Binary}(cpu 0-dim float32, ${d} on ${env.name}) in a ${d} region (an fp32 op)`, cls: info.tolerance, device: dev });
    }, cpuSkip(env, regionSkip(d)));
  }
  if (env.name !== 'cpu' && (env.cpu || env.cpuPresence === 'absent') && autocastPolicy('cpu')) {
    add('AC-5/cpu-region-leaves-this-device-alone', lowerOp ?? 'mm', '-', async () => {
      const a = rngArray('cpu-region/a', [3, 4]);
      const b = rngArray('cpu-region/b', [4, 2]);
      const [y, z] = autocast({ deviceType: 'cpu' }, () => [toDevice(a, 'float32', dev).mm(toDevice(b, 'float32', dev)), toDevice(a, 'float32', cpu).mm(toDevice(b, 'float32', cpu))]);
      expectEqual('mm of cpu tensors in a cpu region (the cpu table lists mm)', z!.dtype, autocastPolicy('cpu')!.lowerPrecision.includes('mm') ? autocastPolicy('cpu')!.defaultDtype : float32);
      return expectTensor(y!, mmExpected(a, b, 'float32'), { label: `mm on ${env.name} in a cpu region`, cls: 'accumulated', device: dev });
    }, cpuSkip(env));
  }

  // ---- AC-4: nesting, enabled: false, restoring the state ----
  for (const d of halves) {
    const skip = regionSkip(d) ?? noLowerOp;
    const a = rngArray(`nest/a/${d}`, [2, 3]);
    const b = rngArray(`nest/b/${d}`, [3, 2]);
    const rd = (x: NdArray) => map(x, (v) => roundTo(d, v));
    const product = () => mmCall(toDevice(a, 'float32', dev), toDevice(b, 'float32', dev));
    add(`AC-4/enabled-false-inside/${d}`, 'region', d, async () => {
      let inner!: Tensor;
      const [before, after] = inRegion(d, () => {
        const y1 = product();
        inner = autocast({ deviceType: env.name, enabled: false }, () => {
          expectEqual('isAutocastEnabled in an inner enabled: false region', isAutocastEnabled(env.name), false);
          return product();
        });
        expectEqual('isAutocastEnabled after the inner region', isAutocastEnabled(env.name), true);
        return [y1, product()];
      });
      expectEqual('isAutocastEnabled after the outer region', isAutocastEnabled(env.name), false);
      await expectTensor(before, mmExpected(rd(a), rd(b), d), { label: `${lowerOp} in the outer ${d} region`, cls: 'accumulated', device: dev });
      await expectTensor(after, mmExpected(rd(a), rd(b), d), { label: `${lowerOp} after the inner enabled: false region`, cls: 'accumulated', device: dev });
      await expectTensor(product(), mmExpected(a, b, 'float32'), { label: `${lowerOp} after the outer region`, cls: 'accumulated', device: dev });
      return expectTensor(inner, mmExpected(a, b, 'float32'), { label: `${lowerOp} in the inner enabled: false region (float32, unrounded inputs)`, cls: 'accumulated', device: dev });
    }, skip);
    const o = halves.find((x) => x !== d && computes(x));
    add(`AC-4/inner-dtype/${d}`, 'region', d, async () => {
      const [y1, y2, y3] = inRegion(d, () => {
        const outer = product();
        const inner = autocast(region(o!), () => {
          expectEqual('getAutocastDtype in the inner region', getAutocastDtype(env.name), DTYPES[o!]);
          return product();
        });
        expectEqual('getAutocastDtype back in the outer region', getAutocastDtype(env.name), DTYPES[d]);
        return [outer, inner, product()];
      });
      await expectTensor(y1!, mmExpected(rd(a), rd(b), d), { label: `outer ${d} region`, cls: 'accumulated', device: dev });
      const ro = (x: NdArray) => map(x, (v) => roundTo(o!, v));
      await expectTensor(y2!, mmExpected(ro(a), ro(b), o!), { label: `inner ${o} region`, cls: 'accumulated', device: dev });
      return expectTensor(y3!, mmExpected(rd(a), rd(b), d), { label: `outer ${d} region after the inner ${o} region`, cls: 'accumulated', device: dev });
    }, skip ?? (o ? undefined : `declared capabilities: the ${env.name} backend computes no other allowed autocast dtype than ${d}`));
    add(`AC-4/inner-enabled-in-disabled/${d}`, 'region', d, () => {
      ensure();
      autocast({ deviceType: env.name, dtype: DTYPES[d], enabled: false }, () => {
        expectEqual('mm in a disabled region', product().dtype, float32);
        expectEqual('mm in an enabled region nested in a disabled one', autocast(region(d), () => product()).dtype.name, d);
        expectEqual('mm after the inner region', product().dtype, float32);
      });
    }, skip);
    add(`AC-4/restored-on-throw/${d}`, 'region', d, () => {
      const boom = new Error('thrown inside the region');
      expectThrows('an error thrown inside autocast(options, fn)', () => inRegion(d, () => { product(); throw boom; }), Error, boom.message);
      expectEqual('isAutocastEnabled after a region that threw', isAutocastEnabled(env.name), false);
      expectEqual('mm after a region that threw', product().dtype, float32);
    }, skip);
    add(`AC-4/using-form/${d}`, 'region', d, () => {
      ensure();
      const r = autocast(region(d));
      let y: Tensor;
      try {
        y = product();
      } finally {
        r[Symbol.dispose]();
      }
      expectEqual('mm inside a `using` region', y.dtype.name, d);
      expectEqual('isAutocastEnabled after [Symbol.dispose]()', isAutocastEnabled(env.name), false);
      expectEqual('mm after the region was disposed', product().dtype, float32);
    }, skip);
  }

  // ---- AC-15: the cast cache ----
  for (const d of halves) {
    const skip = regionSkip(d) ?? noLowerOp;
    const castOf = (t: Tensor, op: OpName = lowerOp!): Tensor => autocastOp(op, [t] as const, identity)[0];
    add(`AC-15/identity/${d}`, 'cache', d, async () => {
      const wv = rngArray(`cache/w/${d}`, [3, 2]);
      const w = toDevice(wv, 'float32', dev, true);
      let c1!: Tensor;
      inRegion(d, () => {
        c1 = castOf(w);
        expectTrue(`a second cast of the same float32 leaf weight returns the cached ${d} tensor`, castOf(w) === c1);
        autocast(region(d), () => expectTrue('a nested region sees the same cache entry', castOf(w) === c1));
        expectTrue('leaving the nested region keeps the cache (only the outermost exit clears it)', castOf(w) === c1);
        for (const op of lowerOps.filter((x) => x !== lowerOp).slice(0, 1)) expectTrue(`a cast for another lower-precision op (${op}) shares the entry`, castOf(w, op) === c1);
      });
      const c2 = inRegion(d, () => castOf(w));
      expectTrue('a new region casts afresh (the cache was cleared on exit)', c2 !== c1);
      return expectTensor(c1, { value: map(wv, (v) => roundTo(d, v)), dtype: d }, { label: `cached ${d} cast of the weight`, cls: 'exact', device: dev });
    }, skip);
    add(`AC-15/stale-after-in-place/${d}`, 'cache', d, async () => {
      const xv = rngArray(`stale/x/${d}`, [2, 3]);
      const wv = rngArray(`stale/w/${d}`, [3, 2]);
      const x = toDevice(xv, 'float32', dev);
      const w = toDevice(wv, 'float32', dev, true);
      const [y1, y2] = inRegion(d, () => {
        const first = mmCall(x, w);
        w.detach().mul_(2); // an in-place edit of the source, exact in float32
        return [first, mmCall(x, w)];
      });
      const y3 = inRegion(d, () => mmCall(x, w));
      const rd = (t: NdArray) => map(t, (v) => roundTo(d, v));
      await expectTensor(y1!, mmExpected(rd(xv), rd(wv), d), { label: 'before the in-place edit', cls: 'accumulated', device: dev });
      const old = Array.from(await y1!.data());
      const stale = await expectTensor(y2!, { value: nd(y1!.shape, old), dtype: d }, { label: 'after the in-place edit, in the same region (the cached cast is stale, AC-15)', cls: 'exact', device: dev });
      await expectTensor(y3, mmExpected(rd(xv), rd(map(wv, (v) => 2 * v)), d), { label: 'in a new region (the cast sees the edit)', cls: 'accumulated', device: dev });
      return stale;
    }, skip);
    add(`AC-15/not-cached/${d}`, 'cache', d, () => {
      const leaf = toDevice(nd([2], [0.1, 0.2]), 'float32', dev, true);
      const plain = toDevice(nd([2], [0.1, 0.2]), 'float32', dev);
      const half = toDevice(nd([2], [0.5, 0.25]), d, dev, true);
      const fp32Name = table.fp32[0] ?? table.fp32FirstArg[0];
      inRegion(d, () => {
        const nonLeaf = leaf.mul(1);
        expectTrue('a non-leaf float32 tensor is cast afresh each time', castOf(nonLeaf) !== castOf(nonLeaf));
        expectTrue('a float32 tensor that does not require grad is cast afresh each time', castOf(plain) !== castOf(plain));
        const view = leaf.view([2]);
        expectTrue('a view of a leaf weight is cast afresh each time', castOf(view) !== castOf(view));
        if (fp32Name) {
          const c = autocastOp(fp32Name, [half] as const, identity)[0];
          expectTrue(`a cast to float32 (${fp32Name}) of a ${d} leaf is not cached`, c !== autocastOp(fp32Name, [half] as const, identity)[0]);
          expectEqual(`the ${fp32Name} cast`, c.dtype, float32);
        }
      });
      const [c1, c2] = autocast({ ...region(d), cacheEnabled: false }, () => [castOf(leaf), castOf(leaf)]);
      expectTrue('cacheEnabled: false turns the cache off for the region', c1 !== c2);
    }, skip);
  }

  // ---- AC-14: backward in the forward dtypes ----
  for (const d of halves) {
    const skip = regionSkip(d);
    for (const op of [...lowerOps, ...listed('fp32'), ...listed('fp32FirstArg')]) {
      const info = INFOS.get(op)!;
      if (!info.differentiable) continue;
      const lower = policyOf(table, op) === 'lowerPrecision';
      const leafDtype: DTypeName = lower ? 'float32' : d;
      const sample = (info.gradSamples?.(leafDtype, new Rng(`autocast-grad/${op}/${d}`)) ?? samplesOf(info, leafDtype, 1))[0];
      if (!sample) continue;
      add(`AC-14/${op}/${d}/${sample.name}`, op, d, async (): Promise<Measure> => {
        const args = sample.args ?? {};
        const wrt = info.gradInputs ?? floatInputs(sample);
        const stores = sample.inputs.map(stored);
        const leaves = sample.inputs.map((inp, k) => toDevice(stores[k]!.base, isFloat(inp.dtype) ? leafDtype : inp.dtype, dev, wrt.includes(k)));
        const y = inRegion(d, () => info.call(leaves.map((l, k) => stores[k]!.view(l)), args, { device: dev, dtype: d }));
        const outDtype: DTypeName = lower ? d : 'float32';
        expectEqual(`${op}'s output dtype in a ${d} region`, y.dtype.name, outDtype);
        const rng = new Rng(`autocast-grad/${op}/${d}/weights`);
        const w = nd(y.shape, () => roundTo(outDtype, rng.uniform(-1, 1)));
        y.backward(toDevice(w, outDtype, dev)); // outside the region: autograd recorded the casts
        // The gradient of the op at the inputs it really saw (rounded to d for lower-precision ops),
        // computed in d (lower precision) or float32 and cast back to d (fp32 ops): rounded to d.
        const seen = sample.inputs.map((i) => (lower && isFloat(i.dtype) ? map(i.value, (v) => roundTo(d, v)) : i.value));
        const grads = numericGradients((ins) => info.reference(ins, args, 'float64').value, seen, w, seen.map((_, k) => wrt.includes(k)));
        const own = overrideFor(info, d, sample.name) ?? APPROX[d];
        const tol: Tolerance = { atol: own.atol + GRAD.float32.atol, rtol: own.rtol + GRAD.float32.rtol };
        let maxAbs = 0;
        let maxRel = 0;
        for (const k of wrt) {
          const g = leaves[k]!.grad;
          if (!g) fail(`${op} in a ${d} region: input ${k} requires grad but got no .grad`);
          const value = map(stores[k]!.baseGrad(grads[k]!), (v) => roundTo(d, v));
          const m = await expectTensor(g, { value, dtype: leafDtype }, { label: `∂/∂input${k} of ${op} in a ${d} region (a ${leafDtype} leaf gets a ${leafDtype} grad)`, cls: 'approx', tolerance: tol, device: dev });
          maxAbs = Math.max(maxAbs, m.maxAbs ?? 0);
          maxRel = Math.max(maxRel, m.maxRel ?? 0);
        }
        expectEqual(`${op}'s output dtype after the region`, y.dtype.name, outDtype);
        return { maxAbs, maxRel };
      }, skip);
    }
  }
  return cases;
}

function transposeOf(a: NdArray): NdArray {
  const [r, c] = a.shape as [number, number];
  return nd([c, r], (i) => a.data[(i % r) * c + Math.floor(i / r)]!);
}
