// L-BFGS (PyTorch's torch.optim.LBFGS): a quasi-Newton method that re-evaluates the model through
// a closure within one step. Each iteration compares scalars read from tensors (the loss, gradient
// norms, curvature) to decide what to do next, so the algorithm is written once, as a generator
// that yields its reads and closure calls, and run by a synchronous driver (`step`, for backends
// that read synchronously) or an asynchronous one (`stepAsync`, for every backend).
import { cat, enableGrad, getBackend, Tensor, TensorError, ValueError, zeros } from '@core/tensor';
import { nonNegative, positiveInteger } from './checks.js';
import { Optimizer } from './optimizer.js';
import { givenOptions, type OptimizerArgs, type ParamGroup, type ParamGroupInput, type ParamsInput, withDefaults } from './param-groups.js';
import { up } from './opmath.js';
import { describeValue, listOf, numberField, type StateFields, tensorOfShape } from './state-fields.js';

/** LBFGS's hyperparameters (PyTorch's, in camelCase). */
export interface LBFGSOptions {
  /** Learning rate: the step length along each search direction (default 1). */
  lr: number;
  /** Iterations per `step()` at most (default 20). */
  maxIter: number;
  /** Closure evaluations per `step()` at most (default ⌊maxIter·5/4⌋). */
  maxEval: number;
  /** Stop when the largest gradient entry is at most this (default 1e-7). */
  toleranceGrad: number;
  /** Stop when the loss or the parameters change by less than this (default 1e-9). */
  toleranceChange: number;
  /** How many past updates approximate the inverse Hessian (default 100). */
  historySize: number;
  /** `'strong_wolfe'` for a line search with the strong Wolfe conditions, or null for fixed steps of `lr` (default null). */
  lineSearchFn: 'strong_wolfe' | null;
}

/**
 * LBFGS's state, kept under the first parameter (PyTorch's layout). Its vectors are flat: all the
 * parameters' elements, in order, on their device and in their dtype. Scalars are float64 numbers.
 * PyTorch also keeps its two-loop scratch list `al`, which is always written before it is read,
 * so it is not kept here.
 */
export type LBFGSState = {
  /** Closure evaluations so far, over all steps. */
  funcEvals: number;
  /** Iterations so far, over all steps. */
  nIter: number;
  /** The last search direction. */
  d?: Tensor;
  /** The last step length along `d`. */
  t?: number;
  /** Gradient differences y = g_{k+1} − g_k of the kept updates. */
  oldDirs?: Tensor[];
  /** Parameter differences s = t·d of the kept updates. */
  oldStps?: Tensor[];
  /** 1/(y·s) of each kept update. */
  ro?: number[];
  /** The initial inverse Hessian scale, (y·s)/(y·y) of the latest kept update. */
  hDiag?: number;
  /** The gradient at the start of the last iteration. */
  prevFlatGrad?: Tensor;
  /** The loss at the start of the last iteration. */
  prevLoss?: number;
};

/** LBFGS's defaults, PyTorch's. */
export const LBFGS_DEFAULTS: Readonly<LBFGSOptions> = Object.freeze({
  lr: 1, maxIter: 20, maxEval: 25, toleranceGrad: 1e-7, toleranceChange: 1e-9, historySize: 100, lineSearchFn: null,
});

/** What the algorithm asks its driver for: a closure call, or scalar reads of new tensors `of` makes (the driver frees them). */
type Request = { readonly kind: 'evaluate' } | { readonly kind: 'read'; readonly of: () => Tensor[] };
/** A closure call's result and the loss read from it. */
interface Evaluation {
  readonly result: unknown;
  readonly loss: number;
}
type Run<T> = Generator<Request, T, unknown>;

const EVALUATE: Request = { kind: 'evaluate' };

function* evaluate(): Run<Evaluation> {
  return (yield EVALUATE) as Evaluation;
}

function* read(of: () => Tensor): Run<number> {
  return ((yield { kind: 'read', of: () => [of()] }) as number[])[0]!;
}

function* readPair(of: () => [Tensor, Tensor]): Run<[number, number]> {
  return (yield { kind: 'read', of }) as [number, number];
}

/** A point of the line search: step length, loss, flat gradient, directional derivative. */
interface Point {
  readonly t: number;
  readonly f: number;
  readonly g: Tensor;
  readonly gtd: number;
}

/** Strong Wolfe line search constants (PyTorch's `_strong_wolfe` defaults; LBFGS passes none of its own). */
const WOLFE = { c1: 1e-4, c2: 0.9, toleranceChange: 1e-9, maxLs: 25 } as const;

/**
 * L-BFGS (PyTorch's `torch.optim.LBFGS`), with PyTorch's iteration, stopping rules and strong
 * Wolfe line search. One parameter group only. `step(closure)` runs up to `maxIter` iterations,
 * calling `closure` (which zeroes the grads, computes the loss, calls `backward()` and returns the
 * loss) whenever it needs the loss and gradient at new parameters, and returns the first loss.
 *
 * Each iteration reads a few scalars (the loss, gradient norms, curvature y·s) to decide what to
 * do next, as PyTorch does with `float()`. `step(closure)` reads synchronously, so it works on
 * backends that can (cpu); on others it throws before changing anything and
 * `await stepAsync(closure)`, which also accepts an async closure, runs the same algorithm.
 */
export class LBFGS extends Optimizer<LBFGSOptions, LBFGSState> {
  /**
   * PyTorch's `LBFGS(params, lr, max_iter, max_eval, tolerance_grad, tolerance_change, history_size, line_search_fn)`:
   * the hyperparameters by position in that order, or by name in a trailing options object.
   */
  constructor(
    params: ParamsInput<LBFGSOptions>,
    ...args: OptimizerArgs<
      [lr: number, maxIter: number, maxEval: number, toleranceGrad: number, toleranceChange: number, historySize: number, lineSearchFn: LBFGSOptions['lineSearchFn']],
      LBFGSOptions
    >
  ) {
    const given = givenOptions('LBFGS', LBFGS_DEFAULTS, ['lr', 'maxIter', 'maxEval', 'toleranceGrad', 'toleranceChange', 'historySize', 'lineSearchFn'], args);
    const maxEval = given.maxEval ?? Math.floor(((given.maxIter ?? LBFGS_DEFAULTS.maxIter) * 5) / 4);
    super(params, withDefaults(LBFGS_DEFAULTS, { ...given, maxEval }, 'LBFGS'));
  }

  /** LBFGS takes exactly one parameter group: a second one is a ValueError, as in PyTorch. */
  override addParamGroup(group: ParamGroupInput<LBFGSOptions>): void {
    if (this.paramGroups.length > 0) throw new ValueError("LBFGS doesn't support per-parameter options (parameter groups)");
    super.addParamGroup(group);
  }

  protected checkOptions(o: LBFGSOptions): void {
    nonNegative(o.lr, `Invalid learning rate: ${o.lr}`);
    positiveInteger(o.maxIter, `Invalid max_iter value: ${o.maxIter}`);
    positiveInteger(o.maxEval, `Invalid max_eval value: ${o.maxEval}`);
    nonNegative(o.toleranceGrad, `Invalid tolerance_grad value: ${o.toleranceGrad}`);
    nonNegative(o.toleranceChange, `Invalid tolerance_change value: ${o.toleranceChange}`);
    positiveInteger(o.historySize, `Invalid history_size value: ${o.historySize}`);
    if (o.lineSearchFn !== null && o.lineSearchFn !== 'strong_wolfe') {
      throw new ValueError(`Invalid line_search_fn value: ${describeValue(o.lineSearchFn)} (only 'strong_wolfe' or null is supported)`);
    }
  }

  protected stateFields(): StateFields {
    const n = this.numel();
    const flat = tensorOfShape(true, () => [n], () => `LBFGS keeps flat vectors of all ${n} parameter elements`);
    const positive = numberField(true, (v) => v > 0 && Number.isFinite(v), 'a positive finite number');
    const counter = numberField(true, (v) => Number.isSafeInteger(v) && v >= 0, 'a non-negative integer');
    return {
      funcEvals: counter,
      nIter: counter,
      d: { ...flat, required: false },
      t: numberField(false, Number.isFinite, 'a finite number'),
      oldDirs: listOf(false, flat),
      oldStps: listOf(false, flat),
      ro: listOf(false, positive),
      hDiag: { ...positive, required: false },
      prevFlatGrad: { ...flat, required: false },
      prevLoss: numberField(false, () => true, 'a number'),
    };
  }

  /**
   * Besides each key's own check: the state belongs to the first parameter, the history lists
   * are as long as each other and no longer than historySize, and after an iteration every
   * iteration key is there.
   */
  protected override checkLoadedState(where: string, param: Tensor, state: Readonly<Record<string, unknown>>, group: ParamGroup<LBFGSOptions>): void {
    super.checkLoadedState(where, param, state, group);
    if (param !== this.paramGroups[0]!.params[0]) throw new ValueError(`${where}: LBFGS keeps its state under its first parameter (index 0) only`);
    if ((state.nIter as number) > 0) {
      for (const key of ['d', 't', 'oldDirs', 'oldStps', 'ro', 'hDiag', 'prevFlatGrad', 'prevLoss']) {
        if (state[key] === undefined) throw new ValueError(`${where}: the state has no '${key}', which LBFGS keeps after its first iteration`);
      }
    }
    const lengths = ['oldDirs', 'oldStps', 'ro'].map((key) => (state[key] as unknown[] | undefined)?.length ?? 0);
    if (lengths[1] !== lengths[0] || lengths[2] !== lengths[0]) {
      throw new ValueError(`${where}: 'oldDirs', 'oldStps' and 'ro' must be as long as each other, got ${lengths.join(', ')}`);
    }
    if (lengths[0]! > group.historySize) {
      throw new ValueError(`${where}: the history holds ${lengths[0]} updates, more than historySize ${group.historySize}`);
    }
  }

  /**
   * Run up to `maxIter` iterations, calling `closure` (with grad enabled) for the loss and gradient
   * at new parameters; returns the closure's first result. Reads scalars synchronously: on a
   * backend that can't, it throws (before any change) and names {@link LBFGS.stepAsync}.
   */
  step<L>(closure: () => L): L {
    checkClosure(closure, 'step');
    for (const p of this.params) readsSynchronously(p);
    const run = this.iterate();
    let next = run.next();
    while (!next.done) {
      const request = next.value;
      if (request.kind === 'evaluate') {
        const result = enableGrad(closure);
        next = run.next({ result, loss: lossOf(result, readNow) });
      } else {
        next = run.next(this.compute(() => request.of().map(readNow)));
      }
    }
    return next.value as L;
  }

  /**
   * `step` for every backend: the same algorithm, awaiting each read (`item()`) and the closure,
   * which may be async. Grad modes can't span an await, so the closure runs in the caller's grad
   * mode (on by default) where `step` enables grad for it, as PyTorch does.
   */
  async stepAsync<L>(closure: () => L | Promise<L>): Promise<L> {
    checkClosure(closure, 'stepAsync');
    const run = this.iterate();
    let next = run.next();
    while (!next.done) {
      const request = next.value;
      if (request.kind === 'evaluate') {
        const result = await closure();
        next = run.next({ result, loss: lossOf(result, null) ?? (await (result as Tensor).item()) });
      } else {
        const scalars = this.compute(request.of);
        let values: number[];
        try {
          values = await Promise.all(scalars.map((s) => s.item()));
        } finally {
          for (const s of scalars) s.dispose();
        }
        next = run.next(values);
      }
    }
    return next.value as L;
  }

  private get params(): Tensor[] {
    return this.paramGroups[0]!.params;
  }

  private numel(): number {
    return this.params.reduce((n, p) => n + p.numel(), 0);
  }

  /** All gradients as one flat vector (zeros for a parameter without one), checked like other optimizers'. */
  private flatGrad(): Tensor {
    const withGrad = new Map(this.paramsWithGrad(this.paramGroups[0]!, 0).map(({ param, grad }) => [param, grad]));
    return this.compute(() => cat(this.params.map((p) => {
      const grad = withGrad.get(p);
      return grad === undefined ? zeros([p.numel()], { dtype: p.dtype, device: p.device }) : grad.reshape([p.numel()]);
    })));
  }

  /** p += t·d, each parameter taking its slice of the flat `d`. */
  private addGrad(t: number, d: Tensor): void {
    this.compute(() => {
      let offset = 0;
      for (const p of this.params) {
        const n = p.numel();
        p.copy_(up(p).add(up(d.narrow(0, offset, n).reshape(p.shape)), t));
        offset += n;
      }
    });
  }

  /** PyTorch's LBFGS.step, as a generator of reads and closure calls; returns the first closure result. */
  private *iterate(): Run<unknown> {
    const { lr, maxIter, maxEval, toleranceGrad, toleranceChange, historySize, lineSearchFn } = this.paramGroups[0]!;
    const state = this.stateFor(this.params[0]!, () => ({ funcEvals: 0, nIter: 0 }));
    const first = yield* evaluate();
    let loss = first.loss;
    let currentEvals = 1;
    state.funcEvals += 1;
    let flatGrad = this.flatGrad();
    let optCond = (yield* read(() => flatGrad.abs().max())) <= toleranceGrad;
    if (optCond) return first.result;

    // The history is copied: the state changes only when the step completes.
    let { d, t, prevFlatGrad, prevLoss } = state;
    let oldDirs = [...(state.oldDirs ?? [])];
    let oldStps = [...(state.oldStps ?? [])];
    let ro = [...(state.ro ?? [])];
    let hDiag = state.hDiag ?? 1;
    for (let nIter = 1; nIter <= maxIter; nIter++) {
      state.nIter += 1;
      if (state.nIter === 1) {
        d = this.compute(() => flatGrad.neg());
        [oldDirs, oldStps, ro, hDiag] = [[], [], [], 1];
      } else {
        const { y, s } = this.compute(() => ({ y: flatGrad.sub(prevFlatGrad!), s: d!.mul(t!) }));
        const [ys, yy] = yield* readPair(() => [y.mul(s).sum(), y.mul(y).sum()]);
        if (ys > 1e-10) {
          if (oldDirs.length === historySize) {
            oldDirs.shift();
            oldStps.shift();
            ro.shift();
          }
          oldDirs.push(y);
          oldStps.push(s);
          ro.push(1 / ys);
          hDiag = ys / yy;
        }
        d = this.compute(() => twoLoopDirection(flatGrad, oldDirs, oldStps, ro, hDiag));
      }
      const dir = d;
      // Flat gradients are never written in place, so the previous one is kept as it is.
      prevFlatGrad = flatGrad;
      prevLoss = loss;
      t = state.nIter === 1 ? Math.min(1, 1 / (yield* read(() => flatGrad.abs().sum()))) * lr : lr;
      const gtd = yield* read(() => flatGrad.mul(dir).sum());
      if (gtd > -toleranceChange) break;

      let lsFuncEvals = 0;
      if (lineSearchFn === 'strong_wolfe') {
        const x = this.compute(() => this.params.map((p) => p.clone()));
        const found = yield* this.strongWolfe(x, t, dir, { t: 0, f: loss, g: flatGrad, gtd });
        ({ f: loss, g: flatGrad, t } = found.point);
        lsFuncEvals = found.evals;
        this.addGrad(t, dir);
        optCond = (yield* read(() => flatGrad.abs().max())) <= toleranceGrad;
      } else {
        this.addGrad(t, dir);
        if (nIter !== maxIter) {
          loss = (yield* evaluate()).loss;
          flatGrad = this.flatGrad();
          optCond = (yield* read(() => flatGrad.abs().max())) <= toleranceGrad;
          lsFuncEvals = 1;
        }
      }
      currentEvals += lsFuncEvals;
      state.funcEvals += lsFuncEvals;
      if (nIter === maxIter || currentEvals >= maxEval || optCond) break;
      const stepLength = t;
      if ((yield* read(() => dir.mul(stepLength).abs().max())) <= toleranceChange) break;
      if (Math.abs(loss - prevLoss) < toleranceChange) break;
    }
    Object.assign(state, { d, t, oldDirs, oldStps, ro, hDiag, prevFlatGrad, prevLoss });
    return first.result;
  }

  /** The line-search point at `x + t·d` (loss, flat gradient, derivative along d); the parameters are `x` again afterwards. */
  private *probe(x: readonly Tensor[], t: number, d: Tensor): Run<Point> {
    this.addGrad(t, d);
    const { loss } = yield* evaluate();
    const g = this.flatGrad();
    this.compute(() => this.params.forEach((p, i) => p.copy_(x[i]!)));
    return { t, f: loss, g, gtd: yield* read(() => g.mul(d).sum()) };
  }

  /** A point along `d` from `x` with the strong Wolfe conditions (PyTorch's `_strong_wolfe`); `start` is t = 0. */
  private *strongWolfe(x: readonly Tensor[], t0: number, d: Tensor, start: Point): Run<{ point: Point; evals: number }> {
    const { c1, c2, toleranceChange, maxLs } = WOLFE;
    const { f, gtd } = start;
    const dNorm = yield* read(() => d.abs().max());
    const probe = (t: number) => this.probe(x, t, d);
    // Written as PyTorch compares, so that a NaN loss takes the same branches.
    const tooHigh = (p: Point) => p.f > f + c1 * p.t * gtd;
    const curvature = (p: Point) => Math.abs(p.gtd) <= -c2 * gtd;

    // Bracketing: find an interval that contains a point with the strong Wolfe conditions.
    let prev = start;
    let point = yield* probe(t0);
    let evals = 1;
    let lsIter = 0;
    let done = false;
    let bracket: Point[] = [];
    while (lsIter < maxLs) {
      if (tooHigh(point) || (lsIter > 1 && point.f >= prev.f)) {
        bracket = [prev, point];
        break;
      }
      if (curvature(point)) {
        bracket = [point];
        done = true;
        break;
      }
      if (point.gtd >= 0) {
        bracket = [prev, point];
        break;
      }
      const next = cubicInterpolate(prev, point, [point.t + 0.01 * (point.t - prev.t), point.t * 10]);
      prev = point;
      point = yield* probe(next);
      evals += 1;
      lsIter += 1;
    }
    if (lsIter === maxLs) bracket = [start, point];

    // Zoom: shrink the interval until a point meets the conditions or it gets too small.
    let insufficientProgress = false;
    let low = bracket.length === 1 || bracket[0]!.f <= bracket[1]!.f ? 0 : 1;
    while (!done && lsIter < maxLs) {
      const [a, b] = bracket as [Point, Point];
      if (Math.abs(b.t - a.t) * dNorm < toleranceChange) break;
      let t = cubicInterpolate(a, b);
      const hi = Math.max(a.t, b.t);
      const lo = Math.min(a.t, b.t);
      const eps = 0.1 * (hi - lo);
      // Too close to an end: move it eps inside, unless the last step made enough progress.
      if (Math.min(hi - t, t - lo) < eps) {
        if (insufficientProgress || t >= hi || t <= lo) {
          t = Math.abs(t - hi) < Math.abs(t - lo) ? hi - eps : lo + eps;
          insufficientProgress = false;
        } else {
          insufficientProgress = true;
        }
      } else {
        insufficientProgress = false;
      }
      const p = yield* probe(t);
      evals += 1;
      lsIter += 1;
      const high = 1 - low;
      if (tooHigh(p) || p.f >= bracket[low]!.f) {
        bracket[high] = p;
        low = bracket[0]!.f <= bracket[1]!.f ? 0 : 1;
      } else {
        if (curvature(p)) done = true;
        else if (p.gtd * (bracket[high]!.t - bracket[low]!.t) >= 0) bracket[high] = bracket[low]!;
        bracket[low] = p;
      }
    }
    return { point: bracket[low]!, evals };
  }
}

/**
 * The L-BFGS two-loop recursion: `−H·g` for the inverse Hessian H that the kept updates (y, s, ρ)
 * define from the initial scale `hDiag`. The weights stay 0-dim tensors, so no read is needed.
 */
function twoLoopDirection(flatGrad: Tensor, ys: readonly Tensor[], ss: readonly Tensor[], ro: readonly number[], hDiag: number): Tensor {
  let q = flatGrad.neg();
  const al: Tensor[] = [];
  for (let i = ys.length - 1; i >= 0; i--) {
    al[i] = ss[i]!.mul(q).sum().mul(ro[i]!);
    q = q.sub(ys[i]!.mul(al[i]!));
  }
  let r = q.mul(hDiag);
  for (let i = 0; i < ys.length; i++) {
    const be = ys[i]!.mul(r).sum().mul(ro[i]!);
    r = r.add(ss[i]!.mul(al[i]!.sub(be)));
  }
  return r;
}

/**
 * The minimizer of the cubic through two points (values and derivatives), clamped to `bounds`
 * (default: between the points); their midpoint when the cubic has no minimum.
 */
function cubicInterpolate(p1: Point, p2: Point, bounds?: [number, number]): number {
  const { t: x1, f: f1, gtd: g1 } = p1;
  const { t: x2, f: f2, gtd: g2 } = p2;
  const [lo, hi] = bounds ?? (x1 <= x2 ? [x1, x2] : [x2, x1]);
  const d1 = g1 + g2 - (3 * (f1 - f2)) / (x1 - x2);
  const d2Square = d1 ** 2 - g1 * g2;
  if (!(d2Square >= 0)) return (lo + hi) / 2;
  const d2 = Math.sqrt(d2Square);
  const minPos = x1 <= x2
    ? x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    : x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2));
  return Math.min(Math.max(minPos, lo), hi);
}

function checkClosure(closure: unknown, method: string): void {
  if (typeof closure !== 'function') {
    throw new TypeError(`LBFGS.${method}() needs a closure that re-evaluates the model and returns the loss, got ${describeValue(closure)}`);
  }
}

/** Throws unless `t`'s backend reads synchronously, naming the async step. */
function readsSynchronously(t: Tensor): void {
  if (!getBackend(t.device.type).readSync) {
    throw new TensorError(
      `LBFGS.step(closure) reads the loss and a few scalars on each iteration, and the ${t.device.type} backend ` +
        'cannot read synchronously: use `await optimizer.stepAsync(closure)`',
    );
  }
}

/** A one-element tensor's value, read now. */
function readNow(t: Tensor): number {
  readsSynchronously(t);
  return Number((t.device.type === 'cpu' ? t : t.to('cpu')).dataSync()[0]);
}

/**
 * The loss as a number (PyTorch's `float(closure())`): a number as it is, a one-element tensor
 * through `readTensor` (null: the caller reads it, asynchronously). Anything else is a TypeError.
 */
function lossOf(result: unknown, readTensor: ((t: Tensor) => number) | null): number | null {
  if (typeof result === 'number') return result;
  if (result instanceof Tensor && result.numel() === 1) return readTensor === null ? null : readTensor(result);
  throw new TypeError(`LBFGS: the closure must return the loss as a number or a one-element tensor, got ${describeValue(result)}`);
}
