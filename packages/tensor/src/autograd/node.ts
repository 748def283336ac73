// A node of the autograd graph: the backward rule of one op, the tensors it saved, edges to the
// nodes (or leaf tensors) that produced its inputs, and the gradient hooks of its outputs.
import type { DType } from '../dtype/dtype.js';
import type { Device } from '../device/device.js';
import { TensorError } from '../errors/errors.js';
import { Tensor } from '../tensor/tensor.js';
import { sameShape } from '../tensor/shape.js';
import { captureSite } from '../tensor/site.js';
import { anomalyModeActive } from '../amp/anomaly.js';
import { isGradEnabled, isInferenceStorage } from './grad-mode.js';

/** Gradients of the inputs, aligned with them; null where an input needs none. */
export type BackwardFn = (grad: Tensor) => readonly (Tensor | null)[];

/** The rule of a node with several outputs (an autograd.Function's): one gradient per output, null where none arrived. */
export interface MultiOutputRule {
  /** How many outputs the node has. */
  readonly outputs: number;
  /** The inputs' gradients from the outputs' gradients. */
  readonly fn: (grads: readonly (Tensor | null)[]) => readonly (Tensor | null)[];
  /** The rule runs user code (autograd.Function), which may keep the gradients it sees. */
  readonly userCode?: boolean;
}

/** Where one input's gradient goes, and the shape/dtype/device it must arrive in. */
export interface Edge {
  readonly node: Node | null;
  /** Which of `node`'s outputs the input was (0, unless the node has several). */
  readonly output?: number;
  /** A leaf that requires grad: the gradient accumulates into its `.grad`. */
  readonly leaf: Tensor | null;
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly device: Device;
}

/** What `registerHook` takes: it sees a gradient and may return a replacement of the same shape, dtype and device. */
export type GradHookFn = (grad: Tensor) => Tensor | void | null | undefined;

/** A hook on one output of a node (or on a leaf, output 0). */
export interface GradHook {
  readonly output: number;
  /** The hook's name in error messages. */
  readonly name: string;
  readonly fn: GradHookFn;
  /** Set for the hook `retainGrad()` adds: the tensor whose `.grad` it fills. */
  readonly retains?: Tensor;
}

interface Saved {
  readonly tensor: Tensor;
  readonly version: number;
}

// Which output of its node a tensor is; only autograd.Function's nodes have more than one.
const outputNumbers = new WeakMap<Tensor, number>();

/** Which output of its gradFn `t` is (0 for single-output ops). */
export function outputNumber(t: Tensor): number {
  return outputNumbers.get(t) ?? 0;
}

/** Make `t` output `output` of `node`. */
export function setGradFn(t: Tensor, node: Node, output: number): void {
  t._setGradFn(node);
  if (output === 0) outputNumbers.delete(t);
  else outputNumbers.set(t, output);
}

/**
 * Gradient accumulation into `.grad` (OPT-2): created when null, else added. The new `.grad` is
 * always a copy: `g` may be shared (add's backward hands the same tensor to both inputs;
 * `backward(gradient)` passes the caller's tensor), and a later `add_` must not reach it. With
 * createGraph (grad mode on during backward) the sum is out of place, so it stays differentiable.
 */
export function accumulateGrad(t: Tensor, g: Tensor, owned = false): void {
  // PyTorch's AccumulateGrad keeps the incoming gradient itself when nothing else refers to it.
  if (t.grad === null) t.grad = owned ? g : g.clone();
  else if (isGradEnabled()) t.grad = t.grad.add(g);
  else t.grad.add_(g);
}

function checkedHookResult(hook: GradHook, g: Tensor, result: unknown): Tensor {
  if (!(result instanceof Tensor)) {
    throw new TypeError(`hook '${hook.name}' returned ${typeof result}; a gradient hook returns a Tensor (the new gradient) or nothing`);
  }
  const changed = (what: string, was: string, got: string) =>
    new TensorError(`hook '${hook.name}' has changed the ${what} of value (was ${was}, got ${got}): a hook must return a gradient like the one it was given`);
  if (!sameShape(result.shape, g.shape)) throw changed('size', `[${g.shape.join(', ')}]`, `[${result.shape.join(', ')}]`);
  if (result.dtype !== g.dtype) throw changed('type', g.dtype.name, result.dtype.name);
  if (!result.device.equals(g.device)) throw changed('device', String(g.device), String(result.device));
  return result;
}

/** Run the hooks of output `output` over its gradient, in registration order; each sees the previous one's result. */
export function runHooks(hooks: readonly GradHook[], output: number, grad: Tensor): Tensor {
  let g = grad;
  // A copy: a hook may remove itself.
  for (const hook of hooks.slice()) {
    if (hook.output !== output) continue;
    const result = hook.fn(g);
    if (result !== undefined && result !== null) g = checkedHookResult(hook, g, result);
  }
  return g;
}

export class Node {
  private fn: MultiOutputRule['fn'] | null;
  private saved: Saved[];
  /** How many outputs the op had (1 but for autograd.Function). */
  readonly outputs: number;
  /** Its backward runs user code (autograd.Function), which may keep the gradients it is given. */
  readonly userCode: boolean;
  /** Hooks on this node's outputs, `retainGrad()` included, in the order they were registered (PyTorch 1.13's order). */
  readonly hooks: GradHook[] = [];
  /** In anomaly mode: the user code that ran the forward op, for the error a failing backward raises. */
  readonly site: string | undefined = anomalyModeActive() ? captureSite() : undefined;

  constructor(
    /** The op's name, e.g. 'MulBackward'. */
    readonly name: string,
    /** One per input; null where the input does not require grad. */
    readonly edges: readonly (Edge | null)[],
    rule: BackwardFn | MultiOutputRule,
    saved: readonly Tensor[],
  ) {
    for (const t of saved) {
      if (isInferenceStorage(t._storage)) {
        throw new TensorError(
          `Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor and use it in autograd. (${name} needs a [${t.shape.join(', ')}] tensor made inside inferenceMode)`,
        );
      }
    }
    if (typeof rule === 'function') {
      this.outputs = 1;
      this.fn = (grads) => rule(grads[0]!);
      this.userCode = false;
    } else {
      this.outputs = rule.outputs;
      this.fn = rule.fn;
      this.userCode = rule.userCode === true;
    }
    this.saved = saved.map((tensor) => {
      tensor._savers++;
      return { tensor, version: tensor._storage.version };
    });
  }

  /** The first tensor `retainGrad()` was called on among this node's outputs. */
  get retained(): Tensor | null {
    return this.hooks.find((h) => h.retains)?.retains ?? null;
  }

  /** `retainGrad()`: the tensor's gradient is added to its `.grad` at this point of the hook order (once per tensor). */
  set retained(t: Tensor | null) {
    if (t === null || this.hooks.some((h) => h.retains === t)) return;
    this.hooks.push({ output: outputNumber(t), name: 'retainGrad', retains: t, fn: (g) => accumulateGrad(t, g) });
  }

  get released(): boolean {
    return this.fn === null;
  }

  /** The inputs' gradients from the outputs' (one per output; null where none arrived). */
  apply(grads: readonly (Tensor | null)[]): readonly (Tensor | null)[] {
    if (!this.fn) {
      throw new TensorError(
        `Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed) in ${this.name}. ` +
          'Saved intermediate values of the graph are freed when you call .backward(). ' +
          'Pass { retainGraph: true } to the first backward() if you need to backward through the graph a second time.',
      );
    }
    for (const s of this.saved) {
      if (s.tensor._storage.version !== s.version) {
        throw new TensorError(
          `one of the variables needed for gradient computation has been modified by an inplace operation: ` +
            `[${s.tensor.dtype.name} [${s.tensor.shape.join(', ')}]] is at version ${s.tensor._storage.version}; expected version ${s.version} instead (in ${this.name}). ` +
            'Use the out-of-place op (e.g. add instead of add_) or clone() the tensor first.',
        );
      }
    }
    return this.fn(grads);
  }

  /**
   * Drop the rule and the saved tensors so their memory can go (after backward without
   * retainGraph); an intermediate only the graph held (releaseWithGraph) is disposed as the last
   * node that saved it lets go, as PyTorch's reference counts free it.
   */
  release(): void {
    this.fn = null;
    for (const { tensor } of this.saved) if (--tensor._savers === 0 && tensor._releasesWithGraph) tensor.dispose();
    this.saved = [];
  }
}
