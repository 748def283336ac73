// The op table's entry type (PyTorch's OpInfo, reduced to what this library needs): one entry per
// op, with the dtypes it is defined for, sample inputs per dtype, the library call, the oracle, the
// tolerance class and whether it is differentiable. The primitives, composites, views, numerics,
// autograd and capabilities categories are all generated from the table.
import type { Device, DTypeName, Generator, Tensor } from '@core/tensor';
import type { EagerOnly } from './cases/compiled.js';
import type { Expected } from './check.js';
import type { Input } from './inputs.js';
import type { NdArray } from './oracle/ndarray.js';
import type { Rng } from './rng.js';
import type { Override, ToleranceClass } from './tolerance.js';

/** One set of inputs for an op: a case per sample and dtype. */
export interface Sample {
  /** Part of the case id: short, stable, describes the inputs (e.g. 'broadcast-2x1x4+3x1'). */
  readonly name: string;
  /** The tensor inputs, described so that the backend and the oracle get the same values. */
  readonly inputs: readonly Input[];
  /** Non-tensor arguments (dims, scalars, padding…), passed to both call and reference. */
  readonly args?: Readonly<Record<string, unknown>>;
  /** NaN/Inf inputs or results: these cases belong to the numerics category. */
  readonly numerics?: boolean;
}

/** Where an op's call runs: the device, the column dtype, and (for random ops) the generator to draw from. */
export interface CallContext {
  /** The device under test. */
  readonly device: Device;
  /** The case's column dtype. */
  readonly dtype: DTypeName;
  /**
   * The Generator a random op draws from, seeded with `seed` (default: a new Generator(seed)). A
   * compiled run passes one generator made outside the compiled function and seeds it before every
   * call, as a training loop does: a replay draws from it without running the call.
   */
  readonly generator?: (seed: number) => Generator;
}

/**
 * One op's entry in the table (PyTorch's OpInfo, reduced): dtypes, samples, the library call, the float64 oracle and the tolerance class. The primitives, composites, views, numerics, autograd and capabilities cases are generated from it.
 */
export interface OpInfo {
  /** Row of the support matrix and part of case ids. */
  readonly name: string;
  /** The report category of its forward cases. */
  readonly category: 'primitives' | 'composites' | 'views';
  /** The dtypes the op is defined for by core's dtype rules (before the backend's capabilities). */
  readonly dtypes: readonly DTypeName[];
  /**
   * What the backend must declare for the column dtype: 'compute' (default) for ops that reach
   * compute primitives, 'storage' for data movement (views, copy_, fill_, cat, stack, pad, casts),
   * which the contract requires for every stored dtype.
   */
  readonly needs?: 'storage' | 'compute';
  /** The result dtype for a column dtype (default: the same), for the capability check. */
  readonly outDtype?: (dtype: DTypeName) => DTypeName;
  /** How closely results must match the oracle. */
  readonly tolerance: ToleranceClass;
  /** Generate float32/float64 autograd cases against the oracle's numeric gradients. */
  readonly differentiable: boolean;
  /** Sample inputs for one dtype (the case's column). */
  readonly samples: (dtype: DTypeName, rng: Rng) => Sample[];
  /** Inputs for autograd cases (values away from kinks and poles); defaults to the first samples. */
  readonly gradSamples?: (dtype: DTypeName, rng: Rng) => Sample[];
  /** Which inputs are differentiable (default: every floating input). */
  readonly gradInputs?: readonly number[];
  /** The library call under test (inputs are already on `ctx.device`). */
  readonly call: (inputs: Tensor[], args: Readonly<Record<string, any>>, ctx: CallContext) => Tensor;
  /**
   * For ops that read values on the host (data-dependent shapes, value checks, async forms): the
   * call the forward and autograd cases await instead of `call` (the capabilities cases still use
   * `call`, which must refuse an unsupported dtype before it reads anything).
   */
  readonly callAsync?: (inputs: Tensor[], args: Readonly<Record<string, any>>, ctx: CallContext) => Promise<Tensor>;
  /** The float64 oracle: exact result rounded into the result dtype (and an error bound when accumulated). */
  readonly reference: (inputs: NdArray[], args: Readonly<Record<string, any>>, dtype: DTypeName) => Expected;
  /** Name of the fused kernel that implements this composite op: its cases run fused and decomposed. */
  readonly fused?: 'softmax' | 'logSoftmax' | 'crossEntropy' | 'addcmul' | 'attention' | 'maxPool2d' | 'matmulToFloat32' | 'matmulRounded' | 'matmulStridedSum';
  /**
   * The op cannot run compiled by design (it reads values on the host, or its result's shape depends
   * on them): a compiled run requires compile() to refuse it with this CompileError code and reports
   * its cases as "eager only: <reason>".
   */
  readonly eagerOnly?: EagerOnly;
  /** Per-sample tolerance changes, each with its reason. */
  readonly overrides?: readonly Override[];
}
