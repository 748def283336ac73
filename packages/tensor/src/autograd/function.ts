// User-defined differentiable ops, PyTorch's torch.autograd.Function: a class with static forward
// and backward methods, called through `apply`, which runs forward without recording and gives
// the outputs one node whose rule is the user's backward.
import { TensorError } from '../errors/errors.js';
import { Tensor } from '../tensor/tensor.js';
import { zeros } from '../ops/creation.js';
import { noGrad } from './grad-mode.js';
import { edgeOf, needsGrad } from './engine.js';
import { Node, setGradFn } from './node.js';

/** A gradient a backward returns for one input: null (or undefined) where it has none. */
export type InputGradient = Tensor | null | undefined;

/**
 * The `ctx` that forward and backward share (PyTorch's FunctionCtx): forward saves what backward
 * needs with `saveForBackward` and may keep other values (numbers, options) as its own properties
 * (`ctx.scale = k`).
 */
export class FunctionCtx {
  [key: string]: unknown;
  /** For each argument of forward: whether it is a tensor whose gradient is needed (backward may skip the others). */
  readonly needsInputGrad: readonly boolean[];
  /** @internal */ _saved: readonly (Tensor | null)[] = [];
  /** @internal */ readonly _nonDifferentiable = new Set<Tensor>();
  /** @internal */ readonly _dirty = new Set<Tensor>();

  /** @internal Made by `Function.apply`. */
  constructor(needsInputGrad: readonly boolean[]) {
    this.needsInputGrad = needsInputGrad;
  }

  /**
   * Keep tensors (inputs or outputs of forward) for backward, where `savedTensors` returns them.
   * Modifying one in place before backward is an error then, as for built-in ops.
   */
  saveForBackward(...tensors: readonly (Tensor | null | undefined)[]): void {
    tensors.forEach((t, i) => {
      if (t !== null && t !== undefined && !(t instanceof Tensor)) {
        throw new TypeError(`saveForBackward(): argument ${i} is ${typeof t}; only tensors (or null) can be saved; keep other values as properties of ctx`);
      }
    });
    this._saved = tensors.map((t) => t ?? null);
  }

  /** The tensors given to `saveForBackward`, in order. */
  get savedTensors(): readonly (Tensor | null)[] {
    return this._saved;
  }

  /** Outputs that have no gradient (indices, masks): they don't require grad, and backward gets zeros for them. */
  markNonDifferentiable(...tensors: readonly Tensor[]): void {
    for (const t of tensors) this._nonDifferentiable.add(t);
  }

  /** Inputs forward modified in place (and returns): they take this function as their history. */
  markDirty(...tensors: readonly Tensor[]): void {
    for (const t of tensors) this._dirty.add(t);
  }
}

/** What `Function.apply` needs of a subclass: its name and static forward and backward. */
export interface FunctionDefinition<A extends readonly unknown[], R extends Tensor | readonly Tensor[]> {
  /** The class name; its node is called name + 'Backward'. */
  readonly name: string;
  /** The computation, run without recording; `ctx` carries what backward needs. */
  forward(ctx: FunctionCtx, ...args: A): R;
  /** One gradient per argument of forward (null where there is none), from one gradient per output. */
  backward(ctx: FunctionCtx, ...grads: Tensor[]): InputGradient | readonly InputGradient[];
}

function outputsOf(name: string, result: unknown): readonly Tensor[] {
  const list = result instanceof Tensor ? [result] : Array.isArray(result) ? (result as unknown[]) : null;
  if (!list || !list.every((o) => o instanceof Tensor)) {
    throw new TypeError(`${name}.forward must return a Tensor or an array of Tensors`);
  }
  return list as Tensor[];
}

/** The user's backward with PyTorch's checks: the number of gradients and where they may be. */
function userBackward(def: FunctionDefinition<readonly unknown[], Tensor | readonly Tensor[]>, name: string, ctx: FunctionCtx, args: readonly unknown[], grads: readonly Tensor[]): (Tensor | null)[] {
  const returned = def.backward(ctx, ...grads);
  const list = Array.isArray(returned) ? (returned as readonly InputGradient[]) : [returned as InputGradient];
  // Extra trailing nulls are allowed, as in PyTorch.
  if (list.length < args.length || list.slice(args.length).some((g) => g !== null && g !== undefined)) {
    throw new TensorError(`function ${name} returned an incorrect number of gradients (expected ${args.length}, got ${list.length})`);
  }
  return args.map((arg, i) => {
    const g = list[i];
    if (g === null || g === undefined) return null;
    if (!(g instanceof Tensor)) throw new TypeError(`function ${name} returned ${typeof g} as gradient ${i}; expected a Tensor or null`);
    if (!(arg instanceof Tensor)) {
      throw new TensorError(`function ${name} returned a gradient different than None at position ${i + 1}, but the corresponding forward input was not a Variable (return null there)`);
    }
    return g;
  });
}

/**
 * A differentiable op defined by its forward and backward (PyTorch's `torch.autograd.Function`).
 * Subclass it with static methods and call `apply`:
 *
 * ```ts
 * class Exp extends autograd.Function {
 *   static forward(ctx: autograd.FunctionCtx, x: Tensor): Tensor {
 *     const y = x.exp();
 *     ctx.saveForBackward(y);
 *     return y;
 *   }
 *   static backward(ctx: autograd.FunctionCtx, g: Tensor): Tensor {
 *     const [y] = ctx.savedTensors;
 *     return g.mul(y!);
 *   }
 * }
 * const y = Exp.apply(x); // y.gradFn === 'ExpBackward'
 * ```
 *
 * forward runs without recording; backward runs with grad mode on under `createGraph`, so a
 * backward written with Tensor ops can be differentiated again. Outputs get zeros as their
 * gradient when none reaches them.
 */
export class Function {
  /** Run forward on `args` and attach backward to its outputs. */
  static apply<A extends readonly unknown[], R extends Tensor | readonly Tensor[]>(this: FunctionDefinition<A, R>, ...args: A): R {
    const def = this;
    if (typeof def.forward !== 'function' || typeof def.backward !== 'function') {
      throw new TypeError(`${def.name} must define static forward(ctx, ...args) and static backward(ctx, ...grads) to be applied`);
    }
    const recording = needsGrad(...args);
    const ctx = new FunctionCtx(args.map((a) => recording && a instanceof Tensor && a.requiresGrad));
    const result = noGrad(() => def.forward(ctx, ...args));
    const outputs = outputsOf(def.name, result);
    for (const t of ctx._dirty) {
      if (!outputs.includes(t)) {
        throw new TensorError('Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function.');
      }
    }
    if (!recording) return result;
    for (const t of ctx._dirty) {
      if (t.isLeaf && t.requiresGrad) throw new TensorError(`a leaf Variable that requires grad has been used in an in-place operation (${def.name} marked it dirty).`);
    }
    const name = `${def.name}Backward`;
    const edges = args.map(edgeOf);
    const metas = outputs.map((o) => ({ shape: o.shape, dtype: o.dtype, device: o.device }));
    const node = new Node(name, edges, {
      outputs: outputs.length,
      userCode: true,
      // PyTorch materializes a missing output gradient as zeros.
      fn: (grads) => userBackward(def, name, ctx, args, grads.map((g, i) => g ?? zeros(metas[i]!.shape, { dtype: metas[i]!.dtype, device: metas[i]!.device }))),
    }, ctx._saved.filter((t): t is Tensor => t !== null));
    // An input returned unchanged is returned as a new tensor over its memory: the input keeps its own history.
    const results = outputs.map((o) => (args.includes(o) && !ctx._dirty.has(o) ? o.detach() : o));
    results.forEach((o, i) => {
      if (o.dtype.isFloatingPoint && !ctx._nonDifferentiable.has(outputs[i]!)) setGradFn(o, node, i);
    });
    return (result instanceof Tensor ? results[0]! : results) as unknown as R;
  }
}
