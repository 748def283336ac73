// nn.utils: clipGradNorm_ against PyTorch 1.13 (norm types 2, 1, ∞, 3 and 0.5), its
// errorIfNonfinite check (sync and async), clipping after GradScaler.unscale_, clipGradValue_,
// and parametersToVector / vectorToParameters.
import { describe, expect, it } from 'vitest';
import { DeviceMismatchError, float32, float64, GradScaler, ones, ShapeError, tensor, TensorError, zeros, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectClose, FAKE, torchRef, values } from './helpers.js';

/** Three parameters; the first two have PyTorch's reference gradients, the third none. */
function withGrads(): Tensor[] {
  const a = nn.Parameter(zeros([2, 2], { dtype: float64 }));
  const b = nn.Parameter(zeros([3], { dtype: float64 }));
  const c = nn.Parameter(zeros([1], { dtype: float64 }));
  a.grad = tensor([[1, -2], [0.5, 3]], { dtype: float64 });
  b.grad = tensor([-4, 0.25, 1], { dtype: float64 });
  return [a, b, c];
}

describe('nn.utils.clipGradNorm_ against PyTorch 1.13 (float64)', () => {
  const cases: Array<[number, number, string]> = [[2, 1, 'clip-2-1.0'], [1, 5, 'clip-1-5.0'], [Infinity, 2, 'clip-inf-2.0'], [3, 100, 'clip-3-100.0'], [0.5, 10, 'clip-0.5-10.0']];
  for (const [normType, maxNorm, key] of cases) {
    it(`normType ${normType}, maxNorm ${maxNorm}: the total norm of all gradients, and the gradients scaled in place`, async () => {
      const ref = torchRef(key);
      const [a, b, c] = withGrads();
      const gradA = a!.grad!;
      const total = nn.utils.clipGradNorm_([a!, b!, c!], maxNorm, normType);
      expect(total.shape).toEqual([]);
      expect(total.dtype).toBe(float64);
      expect(await total.item()).toBeCloseTo(ref.total as unknown as number, 12);
      expect(a!.grad).toBe(gradA); // the same gradient tensor, scaled in place
      expectClose(a!.grad!, ref.a!, 1e-12);
      expectClose(b!.grad!, ref.b!, 1e-12);
      expect(c!.grad).toBeNull();
    });
  }

  it('takes a single tensor or any iterable (a module\'s parameters), and keyword options', async () => {
    const model = new nn.Linear(3, 2);
    F.mseLoss(model.forward(ones([4, 3])), zeros([4, 2])).backward();
    const before = values(model.weight.grad!);
    const norm = Math.hypot(...before, ...values(model.bias!.grad!));
    const total = nn.utils.clipGradNorm_(model.parameters(), 1e-3, { normType: 2 });
    expect(await total.item()).toBeCloseTo(norm, 5);
    expectClose(model.weight.grad!, before.map((v) => v * Math.min(1, 1e-3 / (norm + 1e-6))), 1e-6);
    const single = nn.Parameter(zeros([2]));
    single.grad = tensor([3, 4]);
    expect(await nn.utils.clipGradNorm_(single, 10).item()).toBe(5);
    expect(values(single.grad)).toEqual([3, 4]); // under maxNorm: multiplied by 1, unchanged
  });

  it('no gradients: a 0 total and nothing touched', async () => {
    const p = nn.Parameter(ones([2]));
    const total = nn.utils.clipGradNorm_([p], 1);
    expect(await total.item()).toBe(0);
    expect(total.dtype).toBe(float32);
  });

  it('a non-finite total: scaled by it (NaN gradients) by default, PyTorch\'s error with errorIfNonfinite, gradients untouched', async () => {
    const bad = () => {
      const p = nn.Parameter(zeros([2]));
      p.grad = tensor([Infinity, 1]);
      return p;
    };
    const p = bad();
    expect(() => nn.utils.clipGradNorm_([p], 1, 2, true)).toThrow(TensorError);
    expect(() => nn.utils.clipGradNorm_([p], 1, { errorIfNonfinite: true })).toThrow(
      'The total norm of order 2 for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set `errorIfNonfinite: false`',
    );
    expect(values(p.grad!)).toEqual([Infinity, 1]);
    await expect(nn.utils.clipGradNormAsync_([p], 1, 2, { errorIfNonfinite: true })).rejects.toThrow('is non-finite, so it cannot be clipped');
    const q = bad();
    expect(await nn.utils.clipGradNorm_([q], 1).item()).toBe(Infinity);
    expect(values(q.grad!)).toEqual([NaN, 0]);
  });

  it('clipGradNormAsync_ clips like the sync form', async () => {
    const [a, b] = withGrads();
    const total = await nn.utils.clipGradNormAsync_([a!, b!], 1, { errorIfNonfinite: true });
    expect(await total.item()).toBeCloseTo(torchRef('clip-2-1.0').total as unknown as number, 12);
    expectClose(b!.grad!, torchRef('clip-2-1.0').b!, 1e-12);
  });

  it('after scaler.unscale_(optimizer) it clips the unscaled gradients (PyTorch\'s AMP recipe)', async () => {
    const w = nn.Parameter(tensor([1, 2]));
    const optimizer = { paramGroups: [{ params: [w] }], step: () => undefined };
    const scaler = new GradScaler('cpu', { initScale: 1024 });
    scaler.scale(w.mul(tensor([3, 4])).sum()).backward();
    expect(values(w.grad!)).toEqual([3 * 1024, 4 * 1024]);
    scaler.unscale_(optimizer);
    const total = nn.utils.clipGradNorm_([w], 1);
    expect(await total.item()).toBe(5);
    expectClose(w.grad!, [3 / (5 + 1e-6), 4 / (5 + 1e-6)], 1e-6);
  });

  it('bad arguments are TypeErrors or ValueErrors naming them', () => {
    const [a] = withGrads();
    expect(() => nn.utils.clipGradNorm_([a!], 1, { norm: 2 } as never)).toThrow("clipGradNorm_() got an unexpected keyword argument 'norm'");
    expect(() => nn.utils.clipGradNorm_([a!], 1, 2, { normType: 1 })).toThrow("clipGradNorm_() got multiple values for argument 'normType'");
    expect(() => nn.utils.clipGradNorm_([a!, 3 as never], 1)).toThrow('clipGradNorm_(): parameters[1] is number, not a Tensor');
    expect(() => nn.utils.clipGradNorm_(a!, Number.NaN)).toThrow('maxNorm must be a number');
  });
});

describe('nn.utils.clipGradValue_', () => {
  it('clamps every gradient to [−clipValue, clipValue] in place', () => {
    const [a, b, c] = withGrads();
    nn.utils.clipGradValue_([a!, b!, c!], 1.5);
    expect(values(a!.grad!)).toEqual([1, -1.5, 0.5, 1.5]);
    expect(values(b!.grad!)).toEqual([-1.5, 0.25, 1]);
    expect(c!.grad).toBeNull();
  });
});

describe('nn.utils.parametersToVector / vectorToParameters', () => {
  it('flatten in order, differentiably; and back, sharing the vector\'s memory as PyTorch\'s param.data = …', () => {
    const model = new nn.Linear(3, 2, { dtype: float64 });
    const params = model.parameters();
    const vec = nn.utils.parametersToVector(params);
    expect(vec.shape).toEqual([8]);
    expect(values(vec)).toEqual([...values(model.weight), ...values(model.bias!)]);
    vec.sum().backward();
    expect(values(model.weight.grad!)).toEqual(new Array(6).fill(1));
    const fresh = tensor([1, 2, 3, 4, 5, 6, 7, 8, 9], { dtype: float64 });
    nn.utils.vectorToParameters(fresh, model.parameters());
    expect(model.parameters()).toEqual(params); // the same objects
    expect(model.weight.shape).toEqual([2, 3]);
    expect(values(model.weight)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(values(model.bias!)).toEqual([7, 8]);
    fresh.fill_(0);
    expect(values(model.bias!)).toEqual([0, 0]);
    expect(model.weight.requiresGrad).toBe(true);
  });

  it('errors: a short vector, a non-tensor, parameters on two devices', () => {
    const model = new nn.Linear(3, 2);
    expect(() => nn.utils.vectorToParameters(tensor([1, 2]), model.parameters())).toThrow(ShapeError);
    expect(() => nn.utils.vectorToParameters(tensor([1, 2]), model.parameters())).toThrow('vec must be 1-D with at least 8 elements');
    expect(() => nn.utils.vectorToParameters([1, 2] as never, model.parameters())).toThrow('expected a Tensor, but got: object');
    expect(() => nn.utils.parametersToVector([ones([2]), ones([2], { device: FAKE })])).toThrow(DeviceMismatchError);
  });
});
