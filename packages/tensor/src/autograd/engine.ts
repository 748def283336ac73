// Reverse-mode differentiation: record a node per differentiable op, then walk the graph from the
// output in reverse topological order, summing gradients that meet at a node.
import { TensorError } from '../errors/errors.js';
import type { Tensor } from '../tensor/tensor.js';
import { isGradEnabled, noGrad } from './grad-mode.js';
import { withoutAutocast } from '../amp/autocast.js';
import { withCreationSite } from '../tensor/site.js';
import { Node, type BackwardFn, type Edge } from './node.js';
import { sameShape } from '../tensor/shape.js';

/** Whether an op over these inputs records a node (grad mode on and some input requires grad). */
export function needsGrad(...inputs: readonly unknown[]): boolean {
  if (!isGradEnabled()) return false;
  for (const x of inputs) if (isTensorLike(x) && x.requiresGrad) return true;
  return false;
}

function isTensorLike(x: unknown): x is Tensor {
  return typeof x === 'object' && x !== null && '_storage' in x;
}

function edgeOf(x: unknown): Edge | null {
  if (!isTensorLike(x) || !x.requiresGrad) return null;
  const node = x._gradFn;
  return { node, leaf: node ? null : x, shape: x.shape, dtype: x.dtype, device: x.device };
}

/**
 * Attach a backward rule to `out`, an op's result over `inputs` (tensors or scalars). `saved` are
 * the tensors the rule reads; modifying one in place before backward is an error.
 */
export function record(name: string, out: Tensor, inputs: readonly unknown[], backward: BackwardFn, saved: readonly Tensor[] = []): Tensor {
  if (!out.dtype.isFloatingPoint || !needsGrad(...inputs)) return out; // int/bool results carry no gradient
  // PyTorch's naming: 'mulBackward' → 'MulBackward'.
  out._setGradFn(new Node(name.charAt(0).toUpperCase() + name.slice(1), inputs.map(edgeOf), backward, saved));
  return out;
}

/** Options of `Tensor.backward()`. */
export interface BackwardOptions {
  /** Keep the graph (and its saved tensors) for another backward pass. */
  readonly retainGraph?: boolean;
}

/** Nodes reachable from `root`, in an order where every node comes before the nodes it feeds. */
function topologicalOrder(root: Node): Node[] {
  const order: Node[] = [];
  const seen = new Set<Node>();
  // Iterative post-order DFS: deep graphs (long training loops) must not overflow the stack.
  const stack: Array<{ node: Node; next: number }> = [{ node: root, next: 0 }];
  seen.add(root);
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const edges = top.node.edges;
    if (top.next < edges.length) {
      const child = edges[top.next++]?.node;
      if (child && !seen.has(child)) {
        seen.add(child);
        stack.push({ node: child, next: 0 });
      }
    } else {
      order.push(top.node);
      stack.pop();
    }
  }
  return order.reverse();
}

/** Sum a gradient over the dims that broadcasting added or expanded, back to `shape`. */
export function sumToShape(g: Tensor, shape: readonly number[]): Tensor {
  if (sameShape(g.shape, shape)) return g;
  const lead = g.ndim - shape.length;
  const axes: number[] = [];
  for (let i = 0; i < g.ndim; i++) if (i < lead || (shape[i - lead] === 1 && g.shape[i] !== 1)) axes.push(i);
  const summed = axes.length > 0 ? g.sum(axes, true) : g;
  return summed.reshape(shape);
}

/** Bring a gradient to the shape, dtype and device its input had (PyTorch's validate_outputs). */
function conform(grad: Tensor, edge: Edge, nodeName: string): Tensor {
  let g = grad;
  if (!sameShape(g.shape, edge.shape)) {
    const broadcastable = g.ndim >= edge.shape.length &&
      edge.shape.every((s, i) => s === 1 || s === g.shape[g.ndim - edge.shape.length + i]);
    if (!broadcastable) {
      throw new TensorError(`${nodeName} returned a gradient of shape [${g.shape.join(', ')}] for an input of shape [${edge.shape.join(', ')}]`);
    }
    g = sumToShape(g, edge.shape);
  }
  if (!g.device.equals(edge.device)) {
    // Moving off a device means reading it; backward() is synchronous, so that device must read synchronously.
    if (!g._storage.backend.readSync) {
      throw new TensorError(
        `${nodeName}: the gradient has to move from ${g.device} back to ${edge.device}, where this op's input was, ` +
          `but ${g.device.type} tensors can only be read asynchronously and backward() is synchronous. ` +
          `Create (or move) the tensors that require grad on ${g.device} instead of moving them there inside the forward pass.`,
      );
    }
    g = g.to(edge.device);
  }
  if (g.dtype !== edge.dtype) g = g.to(edge.dtype);
  return g;
}

function accumulate(map: Map<Node, Tensor>, node: Node, g: Tensor): void {
  const prev = map.get(node);
  map.set(node, prev ? prev.add(g) : g);
}

/**
 * Gradient accumulation into a leaf's `.grad` (OPT-2): created when null, else added in place. The
 * new `.grad` is always a copy: `g` may be shared (add's backward hands the same tensor to both
 * inputs; `backward(gradient)` passes the caller's tensor), and a later `add_` must not reach it.
 */
function accumulateLeaf(leaf: Tensor, g: Tensor): void {
  if (leaf.grad === null) leaf.grad = g.clone();
  else leaf.grad.add_(g);
}

export function runBackward(root: Tensor, grad: Tensor, options: BackwardOptions = {}): void {
  const rootNode = root._gradFn;
  // Backward runs in the forward dtypes (AC-14), whatever autocast region it is called in. Every
  // tensor it creates (gradients) is created at the user's backward() call: captured once.
  withCreationSite(() => withoutAutocast(() => noGrad(() => {
    // The root's gradient in the root's dtype and on its device, like every other gradient.
    const rootGrad = conform(grad, { node: rootNode, leaf: null, shape: root.shape, dtype: root.dtype, device: root.device }, 'backward()');
    if (!rootNode) {
      accumulateLeaf(root, rootGrad);
      return;
    }
    const order = topologicalOrder(rootNode);
    const grads = new Map<Node, Tensor>([[rootNode, rootGrad]]);
    try {
      for (const node of order) {
        const g = grads.get(node);
        grads.delete(node);
        if (!g) continue; // no gradient reached this node
        if (node.retained) accumulateLeaf(node.retained, g);
        const inputGrads = node.apply(g);
        node.edges.forEach((edge, i) => {
          const ig = inputGrads[i];
          if (!edge || !ig) return;
          const conformed = conform(ig, edge, node.name);
          if (edge.node) accumulate(grads, edge.node, conformed);
          else if (edge.leaf) accumulateLeaf(edge.leaf, conformed);
        });
      }
    } finally {
      if (!options.retainGraph) for (const node of order) node.release();
    }
  })));
}
