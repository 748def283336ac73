// Reverse-mode differentiation: record a node per differentiable op, then walk the graph from the
// outputs in reverse topological order, summing gradients that meet at a node. With createGraph
// the walk runs with grad mode on, so the gradient formulas (Tensor methods) are recorded in turn
// and gradients of gradients work.
import { TensorError } from '../errors/errors.js';
import type { Tensor } from '../tensor/tensor.js';
import { enableGrad, isRecording, noGrad } from './grad-mode.js';
import { withoutAutocast } from '../amp/autocast.js';
import { AnomalyError, anomalyModeActive } from '../amp/anomaly.js';
import { withSite } from '../tensor/site.js';
import { nextStorageSerial, type Storage } from '../tensor/storage.js';
import { accumulateGrad, Node, outputNumber, runHooks, type BackwardFn, type Edge } from './node.js';
import { leafHooks } from './hooks.js';
import { isContiguous, sameShape } from '../tensor/shape.js';
import { valuesNow } from '../tensor/host-data.js';
import { freeingTemporaries } from '../tensor/temporaries.js';

/** Whether an op over these inputs records a node (grad mode on, not in inference mode, and some input requires grad). */
export function needsGrad(...inputs: readonly unknown[]): boolean {
  if (!isRecording()) return false;
  for (const x of inputs) if (isTensorLike(x) && x.requiresGrad) return true;
  return false;
}

function isTensorLike(x: unknown): x is Tensor {
  return typeof x === 'object' && x !== null && '_storage' in x;
}

/** The edge to `x` from a node that takes it as an input; null unless it requires grad. */
export function edgeOf(x: unknown): Edge | null {
  if (!isTensorLike(x) || !x.requiresGrad) return null;
  const node = x._gradFn;
  return { node, output: node ? outputNumber(x) : 0, leaf: node ? null : x, shape: x.shape, dtype: x.dtype, device: x.device };
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
  /** Keep the graph (and its saved tensors) for another backward pass; defaults to `createGraph`. */
  readonly retainGraph?: boolean;
  /**
   * Record the backward pass itself, so that the gradients can be differentiated again (higher-order
   * derivatives); `.grad` then has a gradFn.
   */
  readonly createGraph?: boolean;
}

/** Nodes reachable from `roots`, in an order where every node comes before the nodes it feeds. */
function topologicalOrder(roots: readonly Node[]): Node[] {
  const order: Node[] = [];
  const seen = new Set<Node>();
  for (const root of roots) {
    if (seen.has(root)) continue;
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
  }
  return order.reverse();
}

/**
 * autograd.grad runs only the nodes on a path to one of its inputs (PyTorch's exec_info). `order`
 * lists parents first, so walking it backwards decides every child before its parents.
 */
function nodesToRun(order: readonly Node[], leafInputs: ReadonlyMap<Tensor, unknown>, nodeInputs: ReadonlyMap<Node, unknown>): Set<Node> {
  const reaches = new Set<Node>();
  const runs = new Set<Node>();
  for (let k = order.length - 1; k >= 0; k--) {
    const node = order[k]!;
    if (node.edges.some((e) => e !== null && (e.node ? reaches.has(e.node) : e.leaf !== null && leafInputs.has(e.leaf)))) runs.add(node);
    if (runs.has(node) || nodeInputs.has(node)) reaches.add(node);
  }
  return runs;
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

/** Bring input `index`'s gradient from `nodeName` to the shape, dtype and device the input had (PyTorch's validate_outputs). */
function conform(grad: Tensor, edge: Edge, nodeName: string, index: number): Tensor {
  let g = grad;
  if (!sameShape(g.shape, edge.shape)) {
    const broadcastable = g.ndim >= edge.shape.length &&
      edge.shape.every((s, i) => s === 1 || s === g.shape[g.ndim - edge.shape.length + i]);
    if (!broadcastable) {
      throw new TensorError(
        `Function ${nodeName} returned an invalid gradient at index ${index} - got [${g.shape.join(', ')}] but expected shape compatible with [${edge.shape.join(', ')}]`,
      );
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

/**
 * A gradient computed outside autograd (raw kernels, noGrad, values read back) from a gradient that
 * requires grad: under createGraph it gets a node that raises when a second backward reaches it,
 * instead of silently acting as a constant (PyTorch's DelayedError). Its edges lead to everything
 * the gradient may depend on: the incoming gradients and the op's own inputs.
 */
function notDifferentiableTwice(g: Tensor, node: Node, grads: readonly (Tensor | null)[]): Tensor {
  const out = g.detach();
  out._setGradFn(new Node(`${node.name}Backward`, [...grads.map(edgeOf), ...node.edges], () => {
    throw new TensorError(
      `the backward of ${node.name} is not differentiable twice: it computed its gradient outside autograd (raw kernels, noGrad or values read back), ` +
        'so a second backward through it cannot know how that gradient depends on its inputs. Write the backward with differentiable Tensor ops to differentiate it again.',
    );
  }, []));
  return out;
}

/**
 * PyTorch's anomaly-mode check of a backward's results: the first NaN gradient names the node. The
 * count is read by the gradient's own backend, which reads synchronously: detectAnomaly refuses a
 * backend without readSync at its first kernel, `g.ne(g)` here included.
 */
function checkNoNaN(node: Node, grads: readonly (Tensor | null)[]): void {
  grads.forEach((g, i) => {
    if (!g || !g.dtype.isFloatingPoint) return;
    const nans = valuesNow(noGrad(() => g.ne(g).sum()))![0]!;
    if (nans > 0) {
      throw new TensorError(`Function '${node.name}' returned nan values in its ${i}th output.` + (node.site ? ` Its forward op ran at ${node.site}.` : ''));
    }
  });
}

function applyNode(node: Node, grads: readonly (Tensor | null)[], createGraph: boolean): readonly (Tensor | null)[] {
  let out: readonly (Tensor | null)[];
  try {
    out = node.apply(grads);
  } catch (e) {
    throw e instanceof AnomalyError && e.backward === undefined ? e.inBackward(node.name, node.site) : e;
  }
  if (anomalyModeActive()) checkNoNaN(node, out);
  if (!createGraph || !grads.some((g) => g?.requiresGrad)) return out;
  return out.map((g) => (g && !g.requiresGrad ? notDifferentiableTwice(g, node, grads) : g));
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Backward from `roots`, seeded with `rootGrads` (already of the roots' shapes). Without `inputs`
 * the gradients accumulate into the leaves' `.grad`, through their hooks (Tensor.backward). With
 * `inputs` they are returned instead, one per input (null where none arrived), only the nodes on a
 * path to an input run, and no leaf's `.grad` changes (autograd.grad).
 */
export function execute(roots: readonly Tensor[], rootGrads: readonly Tensor[], options: BackwardOptions, inputs?: readonly Tensor[]): (Tensor | null)[] {
  const createGraph = options.createGraph === true;
  const retainGraph = options.retainGraph ?? createGraph;
  const results: (Tensor | null)[] = (inputs ?? []).map(() => null);
  // Where each input's gradient is read: as it reaches the leaf, or the node's output (before the
  // output's hooks, as PyTorch 1.13 captures it).
  const leafInputs = new Map<Tensor, number[]>();
  const nodeInputs = new Map<Node, Array<readonly [output: number, input: number]>>();
  inputs?.forEach((t, i) => (t._gradFn ? push(nodeInputs, t._gradFn, [outputNumber(t), i] as const) : push(leafInputs, t, i)));
  const take = (i: number, g: Tensor) => {
    const prev = results[i];
    results[i] = prev ? prev.add(g) : g;
  };
  // A leaf's gradients are summed over the pass; its hooks then see the sum, once (PyTorch's AccumulateGrad).
  const leafGrads = new Map<Tensor, Tensor>();
  // Set once the nodes are known, for a plain backward whose gradients only the pass refers to.
  let made: PassGradients | null = null;
  const toLeaf = (leaf: Tensor, g: Tensor) => {
    if (inputs) leafInputs.get(leaf)?.forEach((i) => take(i, g));
    else {
      const prev = leafGrads.get(leaf);
      const sum = prev ? prev.add(g) : g;
      leafGrads.set(leaf, sum);
      made?.hold(sum); // for good: it reaches .grad
    }
  };
  // Backward runs in the forward dtypes (AC-14), whatever autocast region it is called in. The
  // tensors it creates (gradients) inherit the first root's creation site, as an op's results
  // inherit its first input's: no stack capture per backward.
  withSite(roots[0]?._site, () => withoutAutocast(() => (createGraph ? enableGrad : noGrad)(() => {
    const grads = new Map<Node, (Tensor | null)[]>();
    const arrive = (node: Node, output: number, g: Tensor) => {
      let slots = grads.get(node);
      if (!slots) grads.set(node, (slots = new Array<Tensor | null>(node.outputs).fill(null)));
      const prev = slots[output];
      const sum = prev ? prev.add(g) : g;
      slots[output] = sum;
      made?.hold(sum);
      if (prev) made?.letGo(prev);
    };
    roots.forEach((root, i) => {
      // Each root's gradient in the root's dtype and on its device, like every other gradient.
      const g = conform(rootGrads[i]!, { node: null, leaf: null, shape: root.shape, dtype: root.dtype, device: root.device }, 'backward()', i);
      if (root._gradFn) arrive(root._gradFn, outputNumber(root), g);
      else toLeaf(root, g);
    });
    const order = topologicalOrder(roots.flatMap((r) => (r._gradFn ? [r._gradFn] : [])));
    // The gradients this pass allocates are referred to by nothing but the pass itself, until user
    // code (a hook, an autograd.Function) sees them: only then must a leaf's new .grad be a copy.
    const firstSerial = nextStorageSerial();
    let userCodeSaw = createGraph || order.some((node) => node.userCode || node.hooks.length > 0);
    const runs = inputs ? nodesToRun(order, leafInputs, nodeInputs) : null;
    // Only a plain backward's gradients are the pass's own: user code, autograd.grad's results and
    // a recorded backward may keep any of them.
    if (!userCodeSaw && !inputs) made = new PassGradients(firstSerial);
    try {
      for (const node of order) {
        const slots = grads.get(node);
        grads.delete(node);
        if (!slots) continue; // no gradient reached this node
        nodeInputs.get(node)?.forEach(([output, i]) => {
          const g = slots[output];
          if (g) take(i, g);
        });
        if (runs && !runs.has(node)) continue;
        const hooked = node.hooks.length === 0 ? slots : slots.map((g, output) => g && runHooks(node.hooks, output, g));
        const propagate = () => {
          const inputGrads = applyNode(node, hooked, createGraph);
          node.edges.forEach((edge, i) => {
            const ig = inputGrads[i];
            if (!edge || !ig) return;
            const conformed = conform(ig, edge, node.name, i);
            if (edge.node) arrive(edge.node, edge.output ?? 0, conformed);
            else if (edge.leaf) toLeaf(edge.leaf, conformed);
          });
        };
        if (made) {
          // What the node's formula and the placing made but no slot holds (an op's base tensor
          // behind the view it returned, a gradient before sumToShape) is freed at once.
          const pass = made;
          freeingTemporaries(propagate, (t) => pass.holds(t));
          for (const g of slots) if (g) pass.letGo(g);
          pass.sweep();
        } else propagate();
      }
      for (const leaf of leafGrads.keys()) if (leafHooks(leaf).length > 0) userCodeSaw = true;
      const kept = new Set<Storage>();
      const owned = (g: Tensor) => {
        const storage = g._storage;
        if (userCodeSaw || storage.serial < firstSerial || storage.userCount !== 1 || kept.has(storage) || !ownsWholeStorage(g)) return false;
        kept.add(storage);
        return true;
      };
      for (const [leaf, g] of leafGrads) {
        const hooked = runHooks(leafHooks(leaf), 0, g);
        accumulateGrad(leaf, hooked, owned(hooked));
      }
    } finally {
      if (!retainGraph) for (const node of order) if (!runs || runs.has(node)) node.release();
    }
  })));
  return results;
}

/**
 * The gradients one plain backward pass makes, freed as soon as no gradient slot holds them any
 * more (PyTorch frees them by reference count) instead of piling up until the garbage collector
 * finds them: a training step's backward then reuses its own memory. One tensor may sit in several
 * slots (a node may return it for several inputs), so slots are counted.
 */
class PassGradients {
  private readonly slots = new Map<Tensor, number>();
  private readonly released: Tensor[] = [];

  /** `firstSerial`: storages from this serial on were allocated by the pass. */
  constructor(private readonly firstSerial: number) {}

  /** A slot (or a leaf's sum, for good) now holds `g`. */
  hold(g: Tensor): void {
    this.slots.set(g, (this.slots.get(g) ?? 0) + 1);
  }

  holds(g: Tensor): boolean {
    return this.slots.has(g);
  }

  /** A slot let go of `g`: it is freed at the next sweep unless a slot holds it by then. */
  letGo(g: Tensor): void {
    const n = (this.slots.get(g) ?? 1) - 1;
    if (n > 0) this.slots.set(g, n);
    else this.slots.delete(g);
    this.released.push(g);
  }

  /** Disposes the released gradients that no slot holds and that this pass allocated. */
  sweep(): void {
    for (const g of this.released) if (!this.slots.has(g) && g._storage.serial >= this.firstSerial) g.dispose();
    this.released.length = 0;
  }
}

/** Whether `g` is a dense view of all of its storage, from its first element. */
function ownsWholeStorage(g: Tensor): boolean {
  return g._offset === 0 && g.numel() === g._storage.numel && isContiguous(g.shape, g._strides);
}

/** `root.backward(grad, options)`: gradients accumulate into the leaves' `.grad`. */
export function runBackward(root: Tensor, grad: Tensor, options: BackwardOptions = {}): void {
  execute([root], [grad], options);
}
