// A node of the autograd graph: the backward rule of one op, the tensors it saved, and edges to
// the nodes (or leaf tensors) that produced its inputs.
import type { DType } from '../dtype/dtype.js';
import type { Device } from '../device/device.js';
import { TensorError } from '../errors/errors.js';
import type { Tensor } from '../tensor/tensor.js';

/** Gradients of the inputs, aligned with them; null where an input needs none. */
export type BackwardFn = (grad: Tensor) => readonly (Tensor | null)[];

/** Where one input's gradient goes, and the shape/dtype/device it must arrive in. */
export interface Edge {
  readonly node: Node | null;
  /** A leaf that requires grad: the gradient accumulates into its `.grad`. */
  readonly leaf: Tensor | null;
  readonly shape: readonly number[];
  readonly dtype: DType;
  readonly device: Device;
}

interface Saved {
  readonly tensor: Tensor;
  readonly version: number;
}

export class Node {
  private fn: BackwardFn | null;
  private saved: Saved[];
  /** Set by `retainGrad()` on this node's output: its gradient is kept in `.grad`. */
  retained: Tensor | null = null;

  constructor(
    /** The op's name, e.g. 'MulBackward'. */
    readonly name: string,
    /** One per input; null where the input does not require grad. */
    readonly edges: readonly (Edge | null)[],
    fn: BackwardFn,
    saved: readonly Tensor[],
  ) {
    this.fn = fn;
    this.saved = saved.map((tensor) => ({ tensor, version: tensor._storage.version }));
  }

  get released(): boolean {
    return this.fn === null;
  }

  apply(grad: Tensor): readonly (Tensor | null)[] {
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
    return this.fn(grad);
  }

  /** Drop the rule and the saved tensors so their memory can go (after backward without retainGraph). */
  release(): void {
    this.fn = null;
    this.saved = [];
  }
}
