// autograd.grad (PyTorch's torch.autograd.grad): the gradients of outputs with respect to chosen
// inputs, returned instead of accumulated into `.grad`.
import { TensorError } from '../errors/errors.js';
import { Tensor } from '../tensor/tensor.js';
import { sameShape } from '../tensor/shape.js';
import { onesOf } from '../tensor/transfer.js';
import { bindArguments, boolArgument } from '../ops/arguments.js';
import { execute } from './engine.js';

/** One tensor or several. */
export type Tensors = Tensor | readonly Tensor[];
/** The gradients of the outputs (PyTorch's `grad_outputs`): one per output; null for a one-element output means 1. */
export type GradOutputs = Tensor | readonly (Tensor | null)[];

/** The flags of `autograd.grad` after `gradOutputs`. */
export interface GradFlags {
  /** Keep the graph for another backward pass; defaults to `createGraph`. */
  readonly retainGraph?: boolean | null;
  /** Record the backward pass, so that the returned gradients can be differentiated again. */
  readonly createGraph?: boolean;
  /** Return null for an input the outputs do not depend on, instead of throwing. */
  readonly allowUnused?: boolean;
}

/** The options of `autograd.grad`, every argument after `inputs` by name. */
export interface GradOptions extends GradFlags {
  /** The gradients of the outputs (default: 1 for each one-element output). */
  readonly gradOutputs?: GradOutputs | null;
}

const listOf = <T>(x: T | readonly T[]): readonly T[] => (Array.isArray(x) ? (x as readonly T[]) : [x as T]);

/**
 * The gradients of `outputs` with respect to `inputs` (PyTorch's `torch.autograd.grad`), one per
 * input, without touching any `.grad`. `gradOutputs` weighs each output (needed for outputs with
 * more than one element); with `createGraph` the result can be differentiated again (gradients of
 * gradients). Only the part of the graph between the outputs and the inputs runs. Arguments after
 * `inputs` may be given positionally in PyTorch's order (`gradOutputs`, `retainGraph`,
 * `createGraph`) or by name in a trailing options object.
 */
export function grad(outputs: Tensors, inputs: Tensors, options: GradOptions & { readonly allowUnused: true }): (Tensor | null)[];
export function grad(outputs: Tensors, inputs: Tensors, options?: GradOptions): Tensor[];
export function grad(outputs: Tensors, inputs: Tensors, gradOutputs: GradOutputs | null | undefined, options: GradFlags & { readonly allowUnused: true }): (Tensor | null)[];
export function grad(outputs: Tensors, inputs: Tensors, gradOutputs: GradOutputs | null | undefined, options?: GradFlags): Tensor[];
export function grad(
  outputs: Tensors, inputs: Tensors, gradOutputs: GradOutputs | null | undefined, retainGraph: boolean | null | undefined,
  createGraph?: boolean, options?: { readonly allowUnused?: boolean },
): (Tensor | null)[];
export function grad(...args: unknown[]): (Tensor | null)[] {
  const a = bindArguments('grad', args, ['outputs', 'inputs', 'gradOutputs', 'retainGraph', 'createGraph'], ['allowUnused']);
  const outs = tensorList('outputs', a.outputs);
  const ins = tensorList('inputs', a.inputs);
  const seeds = seedGradients(outs, a.gradOutputs);
  const allowUnused = boolArgument('grad', 'allowUnused', a.allowUnused, false);
  const createGraph = boolArgument('grad', 'createGraph', a.createGraph, false);
  const retainGraph = a.retainGraph === null ? createGraph : boolArgument('grad', 'retainGraph', a.retainGraph, createGraph);
  outs.forEach((o, i) => {
    if (!o.requiresGrad) {
      throw new TensorError(`element ${i} of tensors does not require grad and does not have a grad_fn: the outputs must be computed from tensors that require grad, with grad mode on`);
    }
  });
  if (ins.some((t) => !t.requiresGrad)) throw new TensorError('One of the differentiated Tensors does not require grad');
  const grads = execute(outs, seeds, { createGraph, retainGraph }, ins);
  if (!allowUnused && grads.some((g) => g === null)) {
    throw new TensorError(
      'One of the differentiated Tensors appears to not have been used in the graph. Set allowUnused: true if this is the desired behavior ' +
        '(its gradient is then null).',
    );
  }
  return grads;
}

function tensorList(name: string, value: unknown): readonly Tensor[] {
  if (value === undefined) throw new TypeError(`grad() missing required argument '${name}'`);
  const list = listOf(value);
  if (list.length === 0 || !list.every((t) => t instanceof Tensor)) {
    throw new TypeError(`grad(): '${name}' must be a Tensor or a non-empty array of Tensors`);
  }
  return list as readonly Tensor[];
}

/** The gradient each output starts from: the given one (same shape), or 1 for a one-element output. */
function seedGradients(outputs: readonly Tensor[], given: unknown): Tensor[] {
  const list = given === undefined || given === null ? [] : listOf(given);
  if (list.length > 0 && list.length !== outputs.length) {
    throw new TensorError(`grad(): got ${outputs.length} tensors and ${list.length} gradients: gradOutputs needs one per output (null for an implicit 1)`);
  }
  return outputs.map((o, i) => {
    const g = list[i];
    if (g === undefined || g === null) {
      if (o.numel() !== 1) throw new TensorError(`grad can be implicitly created only for scalar outputs (output ${i} has shape [${o.shape.join(', ')}]): pass gradOutputs`);
      return onesOf(o);
    }
    if (!(g instanceof Tensor)) throw new TypeError(`grad(): gradOutputs[${i}] must be a Tensor or null`);
    if (!sameShape(g.shape, o.shape)) {
      throw new TensorError(`Mismatch in shape: grad_output[${i}] has a shape of [${g.shape.join(', ')}] and output[${i}] has a shape of [${o.shape.join(', ')}].`);
    }
    return g;
  });
}
