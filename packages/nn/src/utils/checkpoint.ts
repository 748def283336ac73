// nn.utils.checkpoint (PyTorch's torch.utils.checkpoint.checkpoint): trade compute for memory.
// The forward runs without recording, so nothing fn computes inside is kept for backward, only
// its arguments; backward runs fn again with grad mode on, from the same random-number position
// and under the same autocast state, and backpropagates through that fresh graph.
import {
  autocast, autograd, defaultGenerator, enableGrad, getAutocastDtype, isAutocastCacheEnabled, isAutocastEnabled,
  isGradEnabled, listBackends, Tensor, TensorError, zeros, type AutocastOptions,
} from '@core/tensor';

/** What a checkpointed function returns. */
export type CheckpointOutput = Tensor | readonly Tensor[];

/** What the forward ran under, to run it again the same way. */
interface ForwardState {
  readonly fn: (...args: unknown[]) => CheckpointOutput;
  readonly rng: ReturnType<typeof defaultGenerator.getState>;
  readonly autocast: readonly AutocastOptions[];
}

function outputList(result: unknown): readonly Tensor[] {
  const list = result instanceof Tensor ? [result] : Array.isArray(result) ? (result as unknown[]) : null;
  if (!list || !list.every((o) => o instanceof Tensor)) {
    throw new TypeError(`checkpoint(fn, ...args): fn must return a Tensor or an array of Tensors, got ${Array.isArray(result) ? 'an array holding something else' : typeof result}`);
  }
  return list as Tensor[];
}

interface OutputMeta {
  readonly shape: readonly number[];
  readonly dtype: Tensor['dtype'];
}

const metaText = (m: OutputMeta): string => `[${m.shape.join(', ')}] ${m.dtype.name}`;

/** The second run must give what the first gave: the gradients of its outputs are those of the first's. */
function checkSameOutputs(outputs: readonly Tensor[], metas: readonly OutputMeta[]): void {
  const got = outputs.map(metaText);
  const expected = metas.map(metaText);
  if (got.join('; ') === expected.join('; ')) return;
  throw new TensorError(
    `checkpoint: recomputing fn in backward gave ${got.join(', ')} but the forward gave ${expected.join(', ')}: fn must compute the same ` +
      'shapes and dtypes both times (call backward() outside autocast regions, so that the second run is autocast like the first)',
  );
}

/** `fn()` from the random-number position and under the autocast regions of the forward; the current position is kept. */
function asInForward<T>(state: ForwardState, fn: () => T): T {
  const current = defaultGenerator.getState();
  defaultGenerator.setState(state.rng);
  try {
    return state.autocast.reduceRight<() => T>((inner, options) => () => autocast(options, inner), fn)();
  } finally {
    defaultGenerator.setState(current);
  }
}

/** One backward over several roots, each seeded with its gradient: a node whose backward hands them out. */
class SeedGradients extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, grads: readonly Tensor[], ...roots: Tensor[]): Tensor {
    ctx.grads = grads;
    return zeros([], { device: roots[0]!.device });
  }

  static backward(ctx: autograd.FunctionCtx): (Tensor | null)[] {
    return [null, ...(ctx.grads as readonly Tensor[])];
  }
}

class CheckpointFunction extends autograd.Function {
  static forward(ctx: autograd.FunctionCtx, state: ForwardState, _anchor: Tensor | null, ...args: unknown[]): Tensor | Tensor[] {
    ctx.state = state;
    ctx.args = args;
    ctx.saveForBackward(...args.filter((a): a is Tensor => a instanceof Tensor)); // an input changed in place before backward is an error
    const result = state.fn(...args);
    const outputs = outputList(result);
    ctx.metas = outputs.map((o) => ({ shape: o.shape, dtype: o.dtype }));
    return result instanceof Tensor ? result : [...outputs];
  }

  static backward(ctx: autograd.FunctionCtx, ...grads: Tensor[]): (Tensor | null)[] {
    const state = ctx.state as ForwardState;
    const createGraph = isGradEnabled(); // the outer backward records itself (createGraph)
    const inputs = (ctx.args as unknown[]).map((a) => (a instanceof Tensor ? a.detach().requiresGrad_(a.requiresGrad) : a));
    const outputs = outputList(asInForward(state, () => enableGrad(() => state.fn(...inputs))));
    checkSameOutputs(outputs, ctx.metas as readonly OutputMeta[]);
    const roots = outputs.flatMap((o, i) => (o.requiresGrad ? [{ root: o, grad: grads[i]! }] : []));
    if (roots.length > 0) {
      const seed = enableGrad(() => SeedGradients.apply(roots.map((r) => r.grad), ...roots.map((r) => r.root)));
      seed.backward(undefined, { createGraph });
    }
    return [null, null, ...inputs.map((t) => (t instanceof Tensor && t.requiresGrad ? t.grad : null))];
  }
}

/** A zero-element leaf that requires grad: it gives the checkpoint node an edge when no argument requires grad. */
let anchor: Tensor | null = null;

/**
 * `fn(...args)`, keeping only `args` for backward instead of everything fn computes (PyTorch's
 * `torch.utils.checkpoint.checkpoint` with `use_reentrant=False`'s results): backward runs fn a
 * second time with grad mode on and backpropagates through it. The second run starts from the
 * default generator's position of the first (so dropout draws the same mask; the position after
 * it is kept) and runs under the autocast regions the first ran under. fn must return a Tensor or
 * an array of Tensors, and compute the same shapes and dtypes both times.
 *
 * With grad mode on, the outputs require grad even when no argument does, since fn may read
 * parameters that do. The gradients of tensors fn reads without taking them as arguments (a
 * module's parameters) accumulate into their `.grad` when backward reaches the checkpoint, as the
 * second run's own backward computes them; `autograd.grad` therefore sees only the arguments'.
 * Call `backward()` outside autocast regions (as PyTorch advises), or the second run cannot be
 * autocast like the first. With grad mode off it is just `fn(...args)`.
 */
export function checkpoint<A extends unknown[], R extends CheckpointOutput>(fn: (...args: A) => R, ...args: A): R {
  if (typeof fn !== 'function') throw new TypeError(`checkpoint(fn, ...args): fn must be a function, got ${fn === null ? 'null' : typeof fn}`);
  if (!isGradEnabled()) return fn(...args);
  const state: ForwardState = {
    fn: fn as unknown as ForwardState['fn'],
    rng: defaultGenerator.getState(),
    autocast: listBackends()
      .filter((deviceType) => isAutocastEnabled(deviceType))
      .map((deviceType) => ({ deviceType, dtype: getAutocastDtype(deviceType), cacheEnabled: isAutocastCacheEnabled() })),
  };
  const needsAnchor = !args.some((a) => a instanceof Tensor && a.requiresGrad);
  const edge = needsAnchor ? (anchor ??= zeros([0]).requiresGrad_()) : null;
  return CheckpointFunction.apply(state, edge, ...args) as unknown as R;
}
