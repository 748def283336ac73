// nn.init: PyTorch's initialisers. Each writes into its tensor in place under noGrad and returns
// it. Random values come from the generator given (default: the global one `manualSeed` seeds),
// drawn in float32 (float64 for float64 tensors) and cast on copy.
import { float64, float32, noGrad, rand, randn, ValueError, type Generator, type Tensor } from '@core/tensor';
import { checkTensor } from './internal/args.js';

/** Options every random initialiser takes. */
export interface InitOptions {
  /** The generator to draw from (default: the global one `manualSeed` seeds). */
  readonly generator?: Generator;
}

/** The activation after a layer, which sets `calculateGain` (PyTorch's names, camelCase or snake_case). */
export type Nonlinearity =
  | 'linear' | 'conv1d' | 'conv2d' | 'conv3d' | 'convTranspose1d' | 'convTranspose2d' | 'convTranspose3d'
  | 'sigmoid' | 'tanh' | 'relu' | 'leakyRelu' | 'selu'
  | 'conv_transpose1d' | 'conv_transpose2d' | 'conv_transpose3d' | 'leaky_relu';

/** Which fan Kaiming initialisation preserves the variance of: fanIn (forward pass) or fanOut (backward pass). */
export type FanMode = 'fanIn' | 'fanOut' | 'fan_in' | 'fan_out';

function drawDType(t: Tensor) {
  return t.dtype === float64 ? float64 : float32;
}

function generatorOf(options: InitOptions): InitOptions {
  return options.generator ? { generator: options.generator } : {};
}

function write(t: Tensor, values: () => Tensor): Tensor {
  return noGrad(() => t.copy_(values()));
}

/** The recommended gain for a nonlinearity (PyTorch's `calculate_gain`). */
export function calculateGain(nonlinearity: Nonlinearity, param?: number): number {
  switch (nonlinearity) {
    case 'linear': case 'conv1d': case 'conv2d': case 'conv3d': case 'sigmoid':
    case 'convTranspose1d': case 'convTranspose2d': case 'convTranspose3d':
    case 'conv_transpose1d': case 'conv_transpose2d': case 'conv_transpose3d':
      return 1;
    case 'tanh': return 5 / 3;
    case 'relu': return Math.SQRT2;
    case 'leakyRelu': case 'leaky_relu': {
      const slope = param ?? 0.01;
      if (typeof slope !== 'number' || !Number.isFinite(slope)) throw new ValueError(`negative_slope ${slope} not a valid number`);
      return Math.sqrt(2 / (1 + slope ** 2));
    }
    case 'selu': return 3 / 4;
    default: throw new ValueError(`Unsupported nonlinearity ${String(nonlinearity satisfies never)}`);
  }
}

/** fan_in = size(1)·receptive field, fan_out = size(0)·receptive field (weights are [out, in, …]). */
export function calculateFanInAndFanOut(t: Tensor): {
  /** Inputs feeding each output: size(1) × the receptive field. */
  fanIn: number;
  /** Outputs each input feeds: size(0) × the receptive field. */
  fanOut: number;
} {
  checkTensor(t, 'tensor', 'calculateFanInAndFanOut');
  if (t.ndim < 2) throw new ValueError('Fan in and fan out can not be computed for tensor with fewer than 2 dimensions');
  const receptive = t.shape.slice(2).reduce((a, b) => a * b, 1);
  return { fanIn: t.shape[1]! * receptive, fanOut: t.shape[0]! * receptive };
}

function fanOf(t: Tensor, mode: FanMode): number {
  const { fanIn, fanOut } = calculateFanInAndFanOut(t);
  switch (mode) {
    case 'fanIn': case 'fan_in': return fanIn;
    case 'fanOut': case 'fan_out': return fanOut;
    default: throw new ValueError(`Mode ${String(mode satisfies never)} not supported, please use one of fanIn, fanOut`);
  }
}

/** U(a, b). */
export function uniform_(t: Tensor, a = 0, b = 1, options: InitOptions = {}): Tensor {
  checkTensor(t, 'tensor', 'uniform_');
  if (!(a <= b)) throw new ValueError(`uniform_ expects to return a [from, to) range, but found from=${a} > to=${b}`);
  return write(t, () => rand(t.shape, { dtype: drawDType(t), device: t.device, ...generatorOf(options) }).mul(b - a).add(a));
}

/** N(mean, std²). */
export function normal_(t: Tensor, mean = 0, std = 1, options: InitOptions = {}): Tensor {
  checkTensor(t, 'tensor', 'normal_');
  if (!(std >= 0)) throw new ValueError(`normal_ expects std >= 0.0, but found std ${std}`);
  return write(t, () => randn(t.shape, { dtype: drawDType(t), device: t.device, ...generatorOf(options) }).mul(std).add(mean));
}

/** Fill `t` with `value` in place (no gradient recorded); returns `t`. */
export function constant_(t: Tensor, value: number): Tensor {
  checkTensor(t, 'tensor', 'constant_');
  return noGrad(() => t.fill_(value));
}

/** Fill `t` with 0 in place; returns `t`. */
export function zeros_(t: Tensor): Tensor {
  return constant_(t, 0);
}

/** Fill `t` with 1 in place; returns `t`. */
export function ones_(t: Tensor): Tensor {
  return constant_(t, 1);
}

/** U(−a, a) with a = gain·√(6 / (fan_in + fan_out)) (Glorot & Bengio). */
export function xavierUniform_(t: Tensor, gain = 1, options: InitOptions = {}): Tensor {
  const { fanIn, fanOut } = calculateFanInAndFanOut(t);
  const bound = gain * Math.sqrt(6 / (fanIn + fanOut));
  return uniform_(t, -bound, bound, options);
}

/** N(0, std²) with std = gain·√(2 / (fan_in + fan_out)). */
export function xavierNormal_(t: Tensor, gain = 1, options: InitOptions = {}): Tensor {
  const { fanIn, fanOut } = calculateFanInAndFanOut(t);
  return normal_(t, 0, gain * Math.sqrt(2 / (fanIn + fanOut)), options);
}

/** Kaiming initialisers' options, as an object instead of PyTorch's positional arguments. */
export interface KaimingOptions extends InitOptions {
  /** The negative slope of the rectifier after this layer (leakyRelu only). */
  readonly a?: number;
  /** The fan to preserve (default fanIn). */
  readonly mode?: FanMode;
  /** The activation after the layer (default leakyRelu). */
  readonly nonlinearity?: Nonlinearity;
}

/** Either PyTorch's positional `(tensor, a, mode, nonlinearity)` or `(tensor, { a, mode, nonlinearity, generator })`. */
function kaimingArgs(a: number | KaimingOptions, mode: FanMode, nonlinearity: Nonlinearity, options: InitOptions): Required<Omit<KaimingOptions, 'generator'>> & InitOptions {
  if (typeof a === 'object') return { a: a.a ?? 0, mode: a.mode ?? 'fanIn', nonlinearity: a.nonlinearity ?? 'leakyRelu', ...(a.generator ? { generator: a.generator } : {}) };
  return { a, mode, nonlinearity, ...options };
}

function kaimingStd(t: Tensor, args: Required<Omit<KaimingOptions, 'generator'>>): number {
  const fan = fanOf(t, args.mode);
  const gain = calculateGain(args.nonlinearity, args.a);
  return fan === 0 ? 0 : gain / Math.sqrt(fan);
}

/** U(−bound, bound) with bound = gain·√(3 / fan) (He et al.). PyTorch's default layer init uses a = √5. */
export function kaimingUniform_(t: Tensor, a: number | KaimingOptions = 0, mode: FanMode = 'fanIn', nonlinearity: Nonlinearity = 'leakyRelu', options: InitOptions = {}): Tensor {
  checkTensor(t, 'tensor', 'kaimingUniform_');
  if (t.numel() === 0) return t; // PyTorch warns "Initializing zero-element tensors is a no-op"
  const args = kaimingArgs(a, mode, nonlinearity, options);
  const bound = Math.sqrt(3) * kaimingStd(t, args);
  return uniform_(t, -bound, bound, args);
}

/** N(0, std²) with std = gain / √fan. */
export function kaimingNormal_(t: Tensor, a: number | KaimingOptions = 0, mode: FanMode = 'fanIn', nonlinearity: Nonlinearity = 'leakyRelu', options: InitOptions = {}): Tensor {
  checkTensor(t, 'tensor', 'kaimingNormal_');
  if (t.numel() === 0) return t;
  const args = kaimingArgs(a, mode, nonlinearity, options);
  return normal_(t, 0, kaimingStd(t, args), args);
}
