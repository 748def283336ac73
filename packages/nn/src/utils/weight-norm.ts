// nn.utils.weightNorm and nn.utils.spectralNorm, PyTorch 1.13's: a parameter is replaced by
// others it is computed from (g and v; or the original weight and the power-iteration vectors u
// and v), and a forward pre-hook recomputes it before every forward as a plain tensor field,
// so gradients flow to what replaced it. The remove functions make it a parameter again.
// Parameters are named by their registered names (MultiheadAttention's 'in_proj_weight', held in
// field inProjWeight), as in PyTorch.
import { noGrad, randn, TensorError, ValueError, type RemovableHandle, type Tensor } from '@core/tensor';
import { bindArgs, type Args } from '../internal/args.js';
import { normalize } from '../functional/normalization.js';
import { ConvTranspose1d, ConvTranspose2d } from '../layers/conv.js';
import { propertyOf, type AnyModule } from '../module.js';
import { isParameter, Parameter } from '../parameter.js';

type Kind = 'weightNorm' | 'spectralNorm';
type Fields = Record<string, unknown>;

interface Reparametrization {
  readonly kind: Kind;
  readonly name: string;
  readonly hook: RemovableHandle;
  /** The parameter's value from what replaced it, for the remove function. */
  readonly compute: () => Tensor;
  /** The registered names of what replaced the parameter. */
  readonly replacedBy: readonly string[];
}

const applied = new WeakMap<AnyModule, Reparametrization[]>();

/** Take parameter `name` out of `module` (checking it is one and is not reparametrized already by `kind`). */
function takeParameter(module: AnyModule, name: string, kind: Kind): Tensor {
  if (applied.get(module)?.some((r) => r.kind === kind && r.name === name)) {
    throw new TensorError(`Cannot register two ${kind} hooks on the same parameter ${name}`);
  }
  const fields = module as unknown as Fields;
  const field = propertyOf(module, name);
  const value = fields[field];
  if (!isParameter(value)) {
    throw new ValueError(`${kind}: ${module.constructor.name} has no parameter '${name}'${value === null ? ' (it is null)' : ''}`);
  }
  delete fields[field];
  return value;
}

/** Set `name`'s field to `initial` as a plain field, recompute it before every forward, and remember how to undo it. */
function reparametrize(module: AnyModule, kind: Kind, name: string, initial: Tensor, replacedBy: readonly string[], compute: (training: boolean) => Tensor): void {
  const fields = module as unknown as Fields;
  const field = propertyOf(module, name);
  fields[field] = initial;
  const hook = module.registerForwardPreHook(() => {
    fields[field] = compute(module.training);
  });
  const list = applied.get(module) ?? [];
  list.push({ kind, name, hook, compute: () => compute(false), replacedBy });
  applied.set(module, list);
}

/** Undo `kind` on parameter `name`: the parameter's current value becomes a parameter again. */
function removeReparametrization(module: AnyModule, kind: Kind, name: string): AnyModule {
  const list = applied.get(module) ?? [];
  const at = list.findIndex((r) => r.kind === kind && r.name === name);
  if (at < 0) throw new ValueError(`${kind} of '${name}' not found in ${module.toString()}`);
  const { hook, compute, replacedBy } = list[at]!;
  const weight = noGrad(compute);
  const fields = module as unknown as Fields;
  for (const registered of [name, ...replacedBy]) delete fields[propertyOf(module, registered)];
  module.registerParameter(name, Parameter(weight));
  hook.remove();
  list.splice(at, 1);
  return module;
}

/** `t` as a matrix with one row per index of `dim` (PyTorch's reshape_weight_to_matrix). */
function rowsAlong(t: Tensor, dim: number): Tensor {
  const front = dim === 0 ? t : t.permute([dim, ...t.shape.map((_, d) => d).filter((d) => d !== dim)]);
  return front.reshape([t.shape[dim]!, -1]);
}

/** The 2-norm over every dim but `dim`, kept as size-1 dims; over everything (a scalar) for -1 (PyTorch's norm_except_dim). */
function normExceptDim(v: Tensor, dim: number): Tensor {
  if (dim === -1) return v.norm();
  return rowsAlong(v, dim).norm(2, 1).reshape(v.shape.map((s, d) => (d === dim ? s : 1)));
}

function checkDim(dim: number, ndim: number, op: string, allowWhole: boolean): number {
  if (allowWhole && dim === -1) return -1;
  if (!Number.isInteger(dim) || dim < -ndim || dim >= ndim) {
    throw new ValueError(`${op}: dim ${dim} is out of range for a ${ndim}-dim parameter (expected an integer in [${-ndim}, ${ndim - 1}]${allowWhole ? ', or -1/null for the whole tensor' : ''})`);
  }
  return dim < 0 ? dim + ndim : dim;
}

/** weightNorm's parameters after the module, by name. */
export interface WeightNormOptions {
  /** The parameter to reparametrize, by its registered name (default 'weight'; MultiheadAttention's 'in_proj_weight'). */
  readonly name?: string;
  /** The dim whose slices each get their own magnitude g (default 0); null or -1: one magnitude for the whole tensor. */
  readonly dim?: number | null;
}

/**
 * Weight normalization (PyTorch's `torch.nn.utils.weight_norm`): parameter `name` is replaced by
 * `name_g` (its 2-norm over every dim but `dim`, the magnitudes) and `name_v` (its value, the
 * direction), and recomputed as `v · g / ‖v‖` before every forward. `dim` null or -1 gives one
 * magnitude for the whole tensor. State-dict keys become PyTorch's (`weight_g`, `weight_v`).
 * Returns the module.
 */
export function weightNorm<M extends AnyModule>(module: M, ...args: Args<[name: string, dim: number | null], WeightNormOptions>): M {
  const { name = 'weight', dim = 0 } = bindArgs<WeightNormOptions>('weightNorm', ['name', 'dim'], args);
  const weight = takeParameter(module, name, 'weightNorm');
  const d = checkDim(dim ?? -1, weight.ndim, 'weightNorm', true);
  const [gName, vName] = [`${name}_g`, `${name}_v`];
  module.registerParameter(gName, Parameter(noGrad(() => normExceptDim(weight, d))));
  module.registerParameter(vName, Parameter(weight));
  const fields = module as unknown as Fields;
  const compute = (): Tensor => {
    const [g, v] = [fields[gName] as Tensor, fields[vName] as Tensor];
    return v.mul(g.div(normExceptDim(v, d)));
  };
  reparametrize(module, 'weightNorm', name, compute(), [gName, vName], compute);
  return module;
}

/** Undo `weightNorm` on parameter `name` (default 'weight'): it becomes one parameter again, of its current value. Returns the module. */
export function removeWeightNorm<M extends AnyModule>(module: M, name = 'weight'): M {
  return removeReparametrization(module, 'weightNorm', name) as M;
}

/** spectralNorm's parameters after the module, by name. */
export interface SpectralNormOptions {
  /** The parameter to reparametrize, by its registered name (default 'weight'; MultiheadAttention's 'in_proj_weight'). */
  readonly name?: string;
  /** Power iterations per forward in training mode (default 1). */
  readonly nPowerIterations?: number;
  /** The smallest norm divided by when normalizing u and v (default 1e-12). */
  readonly eps?: number;
  /** The dim of the output rows (default, or null: 1 for transposed convolutions, whose weights are [in, out, …], else 0). */
  readonly dim?: number | null;
}

/**
 * Spectral normalization (PyTorch's `torch.nn.utils.spectral_norm`): parameter `name` is divided
 * by its largest singular value σ (of it as a matrix with one row per index of `dim`) before every
 * forward. σ = uᵀWv is estimated by power iteration: in training mode each forward first runs
 * `nPowerIterations` steps that update the buffers `name_u` and `name_v` in place; in eval mode
 * σ comes from them as they are. The parameter itself becomes `name_orig`. State-dict keys are
 * PyTorch's (`weight_orig`, `weight_u`, `weight_v`); u and v start as normalized draws from the
 * default generator. Returns the module.
 */
export function spectralNorm<M extends AnyModule>(
  module: M,
  ...args: Args<[name: string, nPowerIterations: number, eps: number, dim: number | null], SpectralNormOptions>
): M {
  const { name = 'weight', nPowerIterations = 1, eps = 1e-12, dim = null } =
    bindArgs<SpectralNormOptions>('spectralNorm', ['name', 'nPowerIterations', 'eps', 'dim'], args);
  if (!Number.isInteger(nPowerIterations) || nPowerIterations <= 0) {
    throw new ValueError(`Expected nPowerIterations to be positive, but got nPowerIterations=${nPowerIterations}`);
  }
  const weight = takeParameter(module, name, 'spectralNorm');
  const transposed = module instanceof ConvTranspose1d || module instanceof ConvTranspose2d;
  const d = checkDim(dim ?? (transposed ? 1 : 0), weight.ndim, 'spectralNorm', false);
  const [h, w] = rowsAlong(weight, d).shape as [number, number];
  const factory = { dtype: weight.dtype, device: weight.device };
  const [origName, uName, vName] = [`${name}_orig`, `${name}_u`, `${name}_v`];
  module.registerParameter(origName, weight);
  module.registerBuffer(uName, noGrad(() => normalize(randn([h], factory), 2, 0, eps)));
  module.registerBuffer(vName, noGrad(() => normalize(randn([w], factory), 2, 0, eps)));
  const fields = module as unknown as Fields;
  // Until the first forward, `name` holds the parameter's value as it is, as in PyTorch.
  reparametrize(module, 'spectralNorm', name, weight.detach(), [origName, uName, vName], (training) => {
    const mat = rowsAlong(fields[origName] as Tensor, d);
    let [u, v] = [fields[uName] as Tensor, fields[vName] as Tensor];
    if (training) {
      [u, v] = noGrad((): [Tensor, Tensor] => {
        for (let i = 0; i < nPowerIterations; i++) {
          v.copy_(normalize(mat.t().matmul(u), 2, 0, eps));
          u.copy_(normalize(mat.matmul(v), 2, 0, eps));
        }
        // Copies: σ's backward keeps them, and the next forward updates the buffers in place.
        return [u.clone(), v.clone()];
      });
    }
    return (fields[origName] as Tensor).div(u.matmul(mat.matmul(v)));
  });
  return module;
}

/** Undo `spectralNorm` on parameter `name` (default 'weight'): it becomes one parameter again, divided by σ from the current u and v. Returns the module. */
export function removeSpectralNorm<M extends AnyModule>(module: M, name = 'weight'): M {
  return removeReparametrization(module, 'spectralNorm', name) as M;
}
