// matmulInFloat32: the product that nn's 16-bit convolutions and linears keep in float32 (AC-8's
// round-once rule), run by the cpu's fused matmulToFloat32 kernel (16-bit GEMMs) and by the widened
// float32 matmul it falls back to. Operands hold small integers or short binary fractions, so every
// sum is exact and both paths are compared bit for bit.
import '@core/backend-cpu';
import type { CpuBackend } from '@core/backend-cpu';
import {
  autograd, bfloat16, DTypeError, float16, float32, float64, getBackend, int32, matmulInFloat32, setFusedKernelsEnabled, ShapeError, tensor, type Tensor,
} from '@core/tensor';
import { afterEach, describe, expect, it } from 'vitest';

const cpuHasKernel = typeof getBackend('cpu').fused?.matmulToFloat32 === 'function';

/** Runs `fn` with the backends' fused kernels on ('fused') or off ('widened'). */
function withPath<T>(path: 'fused' | 'widened', fn: () => T): T {
  setFusedKernelsEnabled(path === 'fused');
  try {
    return fn();
  } finally {
    setFusedKernelsEnabled(true);
  }
}

/** Integers in [-4, 4] of `shape`, as `dtype`. */
function integers(shape: number[], seed: number, dtype = bfloat16): Tensor {
  const n = shape.reduce((a, b) => a * b, 1);
  return tensor(Array.from({ length: n }, (_, i) => ((i * 7 + seed * 13) % 9) - 4)).reshape(shape).to(dtype);
}

/** Seeded fractions in [-2, 2] of `shape`, as `dtype`: products and sums that round. */
function fractions(shape: number[], seed: number, dtype = bfloat16): Tensor {
  let s = seed >>> 0;
  const n = shape.reduce((a, b) => a * b, 1);
  const values = Array.from({ length: n }, () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) % 4097) / 1024 - 2);
  return tensor(values).reshape(shape).to(dtype);
}

/** The bit patterns of a tensor's elements (16-bit ones widened exactly), so that −0 and NaN payloads compare. */
function bitsOf(t: Tensor): number[] {
  return Array.from(new Uint32Array(Float32Array.from(t.float().dataSync()).buffer));
}

afterEach(() => setFusedKernelsEnabled(true));

describe('matmulInFloat32: 16-bit products summed and returned in float32', () => {
  it('the cpu backend with its native addon offers the fused matmulToFloat32 kernel', () => {
    expect((getBackend('cpu') as CpuBackend).native?.loaded, 'the native addon must load for the fused path to be tested').toBe(true);
    expect(cpuHasKernel).toBe(true);
  });

  for (const path of ['fused', 'widened'] as const) {
    it(`${path}: bf16 products of 256 and 1 sum to 257 in float32 (a bfloat16 result would round to 256)`, () => {
      for (const dtype of [bfloat16, float16]) {
        const y = withPath(path, () => matmulInFloat32(tensor([[256, 1]], { dtype }), tensor([[1], [1]], { dtype }), dtype));
        expect(y.dtype).toBe(float32);
        expect(Array.from(y.dataSync())).toEqual([257]);
      }
    });

    it(`${path}: equals the float32 matmul of the widened operands, broadcast batches and transposed views included`, () => {
      const cases: Array<[Tensor, Tensor]> = [
        [integers([5, 7], 1), integers([7, 3], 2)],
        [integers([2, 3, 5, 4], 3), integers([4, 6], 4)],
        [integers([6, 4], 5).t(), integers([3, 5, 6], 6).transpose(1, 2)],
        [integers([4, 40], 7, float16), integers([40, 33], 8, float16)],
      ];
      for (const [a, b] of cases) {
        const y = withPath(path, () => matmulInFloat32(a, b, a.dtype));
        const want = a.float().matmul(b.float());
        expect(y.shape).toEqual(want.shape);
        expect(Array.from(y.dataSync())).toEqual(Array.from(want.dataSync()));
      }
    });

    it(`${path}: a broadcast 16-bit operand's gradient is summed over the batch in float32 and rounded once`, () => {
      // grad a = (1 + 2⁻⁷)(1 + 2⁻³) − (1 + 2⁻³) = 2⁻⁷ + 2⁻¹⁰: rounding the first batch's product to
      // bfloat16 on its own (1 + 2⁻³ + 2⁻⁷) would leave 2⁻⁷.
      const a = tensor([[1]], { dtype: bfloat16, requiresGrad: true });
      const b = tensor([[[1.125]], [[1.125]]], { dtype: bfloat16, requiresGrad: true });
      withPath(path, () => matmulInFloat32(a, b, bfloat16).backward(tensor([[[1 + 2 ** -7]], [[-1]]])));
      expect(a.grad!.dtype).toBe(bfloat16);
      expect(Array.from(a.grad!.dataSync())).toEqual([2 ** -7 + 2 ** -10]);
      expect(Array.from(b.grad!.dataSync())).toEqual([1 + 2 ** -7, -1]);
    });

    it(`${path}: a float32 operand holding bfloat16 values gets its gradient in float32, unrounded`, () => {
      const a = tensor([[1.125]], { requiresGrad: true });
      const b = tensor([[1 + 2 ** -7]], { dtype: bfloat16 });
      withPath(path, () => matmulInFloat32(a, b, bfloat16).backward(tensor([[1 + 2 ** -7]])));
      expect(a.grad!.dtype).toBe(float32);
      expect(Array.from(a.grad!.dataSync())).toEqual([Math.fround((1 + 2 ** -7) ** 2)]);
    });

    it(`${path}: a linear's weight.t() operand gets its gradient with the row-major product's values${path === 'fused' ? ', in the weight\'s layout' : ''}`, () => {
      const x = integers([5, 6], 11);
      const w = integers([3, 6], 12).requiresGrad_();
      const g = integers([5, 3], 13, float32);
      // The weight's own [3, 6] layout: a gradient made as xᵀg ([6, 3], row-major) would reach it
      // transposed (the hook sees it before it is stored as .grad).
      let contiguous: boolean | null = null;
      w.registerHook((grad) => void (contiguous = grad.isContiguous()));
      withPath(path, () => matmulInFloat32(x, w.t(), bfloat16).backward(g));
      // (The widened path is the float32 matmul's own backward, which does not.)
      if (path === 'fused') expect(contiguous).toBe(true);
      expect(Array.from(w.grad!.dataSync())).toEqual(Array.from(g.t().matmul(x.float()).dataSync()));
    });

    it(`${path}: otherShape multiplies a strided view as its reshape would, gradients in the view's shape included`, () => {
      // A convolution's windows: [1, 2, 3, 3] → 2×2 windows [1, 2, 2, 2, 2, 2] as columns [1, 1, 8, 4].
      const image = integers([1, 2, 3, 3], 14, float32).requiresGrad_();
      const windowsOf = (x: Tensor) => x.asStrided([1, 2, 2, 2, 2, 2], [18, 9, 3, 1, 3, 1]);
      const w = integers([1, 3, 8], 15).requiresGrad_();
      const g = integers([1, 1, 3, 4], 16, float32);
      const viaShape = withPath(path, () => matmulInFloat32(w, windowsOf(image), bfloat16, { otherShape: [1, 1, 8, 4] }));
      viaShape.backward(g);
      const [gImage, gw] = [image.grad!, w.grad!];
      image.grad = null;
      w.grad = null;
      const viaReshape = withPath(path, () => matmulInFloat32(w, windowsOf(image).reshape([1, 1, 8, 4]), bfloat16));
      viaReshape.backward(g);
      expect(viaShape.shape).toEqual([1, 1, 3, 4]);
      expect(Array.from(viaShape.dataSync())).toEqual(Array.from(viaReshape.dataSync()));
      expect(gImage.dtype).toBe(float32);
      expect(Array.from(gImage.dataSync())).toEqual(Array.from(image.grad!.dataSync()));
      expect(Array.from(gw.dataSync())).toEqual(Array.from(w.grad!.dataSync()));
    });

    it(`${path}: bias and round give the float32 sums plus the bias, rounded once (PyTorch's half addmm), with every gradient`, () => {
      // 257 + 1 rounds once to 258 in bfloat16; rounding the sum 257 first (to 256, the even neighbour) and then adding the bias would give 256.
      const a = tensor([[256, 1], [3, 5]], { dtype: bfloat16, requiresGrad: true });
      const b = tensor([[1, 2], [1, 4]], { dtype: bfloat16, requiresGrad: true });
      const bias = tensor([1, 0.5], { dtype: bfloat16, requiresGrad: true });
      const y = withPath(path, () => matmulInFloat32(a, b, bfloat16, { bias, round: true }));
      expect(y.dtype).toBe(bfloat16);
      const sums = a.float().matmul(b.float()).add(bias.float());
      expect(Array.from(y.dataSync())).toEqual(Array.from(sums.to(bfloat16).dataSync()));
      expect(Array.from(y.dataSync())).toEqual([258, 516, 9, 26.5]);
      const g = tensor([[1, 2], [3, 0.5]], { dtype: bfloat16 });
      y.backward(g);
      expect(bias.grad!.dtype).toBe(bfloat16);
      expect(Array.from(bias.grad!.dataSync())).toEqual([4, 2.5]); // the gradient summed over the rows it was broadcast to
      // The operands' gradients: float32 sums rounded once (aᵀg holds 265 and 513.5, which round to 264 and 512).
      expect(Array.from(a.grad!.dataSync())).toEqual(Array.from(g.float().matmul(b.float().t()).to(bfloat16).dataSync()));
      expect(Array.from(b.grad!.dataSync())).toEqual([264, 512, 16, 4.5]);
      // Without round, the biased sums stay float32 (516.5 kept).
      const unrounded = withPath(path, () => matmulInFloat32(a, b, bfloat16, { bias: bias.float() }));
      expect(unrounded.dtype).toBe(float32);
      expect(Array.from(unrounded.dataSync())).toEqual(Array.from(sums.dataSync()));
    });

    it(`${path}: a rounded product's gradient goes to the 16-bit GEMMs as it arrives: no float32 copy of it, nor a cast back`, () => {
      // A convolution's shape: the bias [O, 1] broadcast over the batch and the pixels.
      const w = integers([4, 6], 21).requiresGrad_();
      const columns = integers([3, 6, 10], 22).requiresGrad_();
      const bias = integers([4, 1], 23).requiresGrad_();
      const y = withPath(path, () => matmulInFloat32(w, columns, bfloat16, { bias, round: true }));
      const grad = integers([3, 4, 10], 24);
      const backend = getBackend('cpu');
      const casts: string[] = [];
      const { cast } = backend.kernels;
      backend.kernels.cast = (x, out) => { casts.push(`${x.dtype}->${out.dtype} ×${out.shape.reduce((p, q) => p * q, 1)}`); cast.call(backend.kernels, x, out); };
      try {
        y.backward(grad);
      } finally {
        backend.kernels.cast = cast;
      }
      // The widened path casts the operands' gradients back to bfloat16; the fused one casts nothing the size of the output (120).
      if (path === 'fused') expect(casts.filter((c) => c.endsWith('×120'))).toEqual([]);
      const g = integers([3, 4, 10], 24, float32);
      expect(Array.from(bias.grad!.dataSync())).toEqual(Array.from(g.sum([0, 2]).reshape([4, 1]).dataSync()));
      expect(Array.from(w.grad!.dataSync())).toEqual(Array.from(g.matmul(columns.float().transpose(1, 2)).sum(0).to(bfloat16).dataSync()));
    });

    it(`${path}: otherView multiplies b's windows; b's gradient is the float32 sums summed into place (col2im) and rounded once, the same bits as b.float()'s windows give`, () => {
      // Fractional values: the sums round, so the bits show each rounding. Batches of 3 (the cpu's
      // native kernel, a batch per thread) and of 1 (its three-step fallback); 3×3 windows that overlap.
      for (const dtype of [bfloat16, float16]) {
        for (const n of [3, 1]) {
          const [C, H, W, O] = [3, 6, 7, 4];
          const size = [n, C, 3, 3, H - 2, W - 2];
          const stride = [C * H * W, H * W, W, 1, W, 1];
          const otherShape = [n, 1, C * 9, (H - 2) * (W - 2)];
          const image = fractions([n, C, H, W], 30, dtype);
          const weight = fractions([1, O, C * 9], 31, dtype);
          const g = fractions([n, 1, O, otherShape[3]!], 32, dtype).float();
          const [x1, w1] = [image.detach().requiresGrad_(), weight.detach().requiresGrad_()];
          const y1 = withPath(path, () => matmulInFloat32(w1, x1, dtype, { otherShape, otherView: { size, stride } }));
          withPath(path, () => y1.backward(g));
          const [x2, w2] = [image.detach().requiresGrad_(), weight.detach().requiresGrad_()];
          const y2 = withPath(path, () => matmulInFloat32(w2, x2.float().asStrided(size, stride), dtype, { otherShape }));
          withPath(path, () => y2.backward(g));
          const label = `${dtype.name}, batch ${n}`;
          expect(x1.grad!.dtype).toBe(dtype);
          expect(bitsOf(y1), label).toEqual(bitsOf(y2));
          expect(bitsOf(x1.grad!), label).toEqual(bitsOf(x2.grad!));
          expect(bitsOf(w1.grad!), label).toEqual(bitsOf(w2.grad!));
        }
      }
    });

    it(`${path}: a recorded backward pass through otherView (createGraph) can be differentiated again, as through b's windows`, () => {
      const size = [2, 2, 2, 2, 3, 3], stride = [32, 16, 4, 1, 4, 1], otherShape = [2, 1, 8, 9];
      const secondOrder = (windowed: boolean): number[] => {
        const image = integers([2, 2, 4, 4], 33, float32).requiresGrad_();
        const weight = integers([1, 3, 8], 34).requiresGrad_();
        const y = withPath(path, () => (windowed
          ? matmulInFloat32(weight, image, bfloat16, { otherShape, otherView: { size, stride } })
          : matmulInFloat32(weight, image.asStrided(size, stride), bfloat16, { otherShape })));
        const [gx] = withPath(path, () => autograd.grad(y.mul(y).sum(), [image], { createGraph: true }));
        const [gw] = withPath(path, () => autograd.grad(gx!.mul(gx!).sum(), [weight]));
        return Array.from(gw!.float().dataSync());
      };
      const want = secondOrder(false);
      expect(want.some((v) => v !== 0)).toBe(true);
      expect(secondOrder(true)).toEqual(want);
    });

    it(`${path}: a recorded backward pass (createGraph) can be differentiated again`, () => {
      const a = integers([3, 4], 9, float32).requiresGrad_();
      const b = integers([4, 2], 10, float32).requiresGrad_();
      const [ga] = withPath(path, () => autograd.grad(matmulInFloat32(a, b, bfloat16).sum(), [a], { createGraph: true }));
      const [gb] = withPath(path, () => autograd.grad(ga!.sum(), [b]));
      // Σ ga = Σ_i Σ_k Σ_j b[k, j]: each b[k, j] counts once per row of a.
      expect(Array.from(gb!.dataSync())).toEqual(new Array(8).fill(3));
    });
  }

  it('refuses dtypes other than float16 and bfloat16, and operands of other dtypes, with a DTypeError', () => {
    const x = tensor([[1, 2]]);
    const y = tensor([[1], [2]]);
    expect(() => matmulInFloat32(x, y, float32)).toThrow(DTypeError);
    expect(() => matmulInFloat32(x, y, float32)).toThrow(/dtype must be float16 or bfloat16, got float32/);
    expect(() => matmulInFloat32(x.to(float64), y, bfloat16)).toThrow(/operands must be bfloat16 or float32 holding bfloat16 values, got float64/);
    expect(() => matmulInFloat32(x.to(int32), y.to(int32), bfloat16)).toThrow(DTypeError);
    expect(() => matmulInFloat32(x.to(float16), y, bfloat16)).toThrow(/got float16/);
  });

  it('with otherShape, casts each element the windows read once, then copies the columns in 16 bits: no float32 copy of the columns', () => {
    const backend = getBackend('cpu');
    const image = integers([2, 4, 6, 6], 17, float32);
    const windows = image.asStrided([2, 4, 3, 3, 4, 4], [144, 36, 6, 1, 6, 1]);
    const w = integers([1, 5, 36], 18);
    const calls: string[] = [];
    const { copy, cast } = backend.kernels;
    const count = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
    backend.kernels.copy = (x, out) => { calls.push(`copy ${x.dtype} ×${count(out.shape)}`); copy.call(backend.kernels, x, out); };
    backend.kernels.cast = (x, out) => { calls.push(`cast ${x.dtype}->${out.dtype} ×${count(out.shape)}`); cast.call(backend.kernels, x, out); };
    let product: Tensor;
    try {
      product = matmulInFloat32(w, windows, bfloat16, { otherShape: [2, 1, 36, 16] });
    } finally {
      Object.assign(backend.kernels, { copy, cast });
    }
    // The 288 pixels are cast once (not the 1,152 window elements), then the windows copied as bfloat16.
    expect(calls).toEqual(['cast float32->bfloat16 ×288', 'copy bfloat16 ×1152']);
    const want = matmulInFloat32(w, windows.reshape([2, 1, 36, 16]), bfloat16);
    expect(Array.from(product.dataSync())).toEqual(Array.from(want.dataSync()));
  });

  it('with otherView, b\'s gradient comes from the backend\'s matmulStridedSum: no float32 columns, stridedSum or cast of the image is made', () => {
    const backend = getBackend('cpu');
    expect(typeof backend.fused?.matmulStridedSum).toBe('function');
    const size = [4, 3, 3, 3, 5, 5], stride = [147, 49, 7, 1, 7, 1], otherShape = [4, 1, 27, 25];
    const image = fractions([4, 3, 7, 7], 35).requiresGrad_();
    const weight = fractions([1, 6, 27], 36);
    const g = fractions([4, 1, 6, 25], 37).float();
    const y = matmulInFloat32(weight, image, bfloat16, { otherShape, otherView: { size, stride } });
    const calls: string[] = [];
    const { kernels, fused } = backend;
    const spied = { cast: kernels.cast, stridedSum: fused!.stridedSum!, matmulToFloat32: fused!.matmulToFloat32!, matmulStridedSum: fused!.matmulStridedSum! };
    const count = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1);
    kernels.cast = (x, out) => { calls.push(`cast ×${count(out.shape)}`); spied.cast.call(kernels, x, out); };
    fused!.stridedSum = (src, view, out) => { calls.push('stridedSum'); spied.stridedSum.call(fused, src, view, out); };
    fused!.matmulToFloat32 = (a, b, out) => { calls.push(`matmulToFloat32 ×${count(out.shape)}`); spied.matmulToFloat32.call(fused, a, b, out); };
    fused!.matmulStridedSum = (a, b, sz, view, out) => { calls.push(`matmulStridedSum ${out.dtype} ×${count(out.shape)}`); spied.matmulStridedSum.call(fused, a, b, sz, view, out); };
    try {
      y.backward(g);
    } finally {
      kernels.cast = spied.cast;
      Object.assign(fused!, { stridedSum: spied.stridedSum, matmulToFloat32: spied.matmulToFloat32, matmulStridedSum: spied.matmulStridedSum });
    }
    // The incoming gradient rounded to bfloat16 (600), then the image's gradient (588) in one kernel.
    expect(calls).toEqual(['cast ×600', 'matmulStridedSum bfloat16 ×588']);
    const want = withPath('widened', () => {
      const x = image.detach().requiresGrad_();
      matmulInFloat32(weight, x, bfloat16, { otherShape, otherView: { size, stride } }).backward(g);
      return x.grad!;
    });
    expect(bitsOf(image.grad!)).toEqual(bitsOf(want));
  });

  it('with otherView, the windows are multiplied even when otherShape is b\'s own shape array', () => {
    const b = tensor([[1, 2, 3], [4, 5, 6]]);
    const eye = tensor([[1, 0], [0, 1]], { dtype: bfloat16 });
    for (const path of ['fused', 'widened'] as const) {
      // Windows [[1, 3, 5], [2, 4, 6]]: every other element, from the first and the second.
      const y = withPath(path, () => matmulInFloat32(eye, b, bfloat16, { otherShape: b.shape, otherView: { size: [2, 3], stride: [1, 2] } }));
      expect(Array.from(y.dataSync()), path).toEqual([1, 3, 5, 2, 4, 6]);
    }
  });

  it('refuses otherView without otherShape, over a non-contiguous operand, or reaching past it, with a ShapeError', () => {
    const w = integers([1, 2, 4], 38);
    const image = integers([1, 1, 3, 3], 39);
    const otherView = { size: [1, 1, 2, 2, 2, 2], stride: [9, 9, 3, 1, 3, 1] };
    expect(() => matmulInFloat32(w, image, bfloat16, { otherView })).toThrow(ShapeError);
    expect(() => matmulInFloat32(w, image, bfloat16, { otherView })).toThrow(/otherView needs otherShape/);
    expect(() => matmulInFloat32(w, image.transpose(2, 3), bfloat16, { otherShape: [1, 1, 4, 4], otherView })).toThrow(/with otherView, the other operand must be contiguous/);
    expect(() => matmulInFloat32(w, image, bfloat16, { otherShape: [1, 1, 4, 4], otherView: { ...otherView, stride: [9, 9, 3, 1, 3, 2] } })).toThrow(/asStrided: size \[1,1,2,2,2,2\] with stride \[9,9,3,1,3,2\] and offset 0 reaches element 9, but the input has 9/);
    expect(() => matmulInFloat32(w, image, bfloat16, { otherShape: [1, 1, 4, 5], otherView })).toThrow(/otherShape \[1, 1, 4, 5\] is invalid for an operand of 16 elements/);
    expect(matmulInFloat32(w, image, bfloat16, { otherShape: [1, 1, 4, 4], otherView }).shape).toEqual([1, 1, 2, 4]);
  });

  it('refuses an otherShape of another size, or one that the input would broadcast, with a ShapeError', () => {
    const b = integers([2, 4, 3], 19, float32);
    expect(() => matmulInFloat32(integers([5, 4], 20), b, bfloat16, { otherShape: [2, 4, 4] })).toThrow(ShapeError);
    expect(() => matmulInFloat32(integers([5, 4], 20), b, bfloat16, { otherShape: [2, 4, 4] })).toThrow(/otherShape \[2, 4, 4\] is invalid for an operand of 24 elements \(shape 2x4x3\)/);
    expect(() => matmulInFloat32(integers([3, 5, 4], 20), b, bfloat16, { otherShape: [1, 4, 6] })).toThrow(/the other operand is not broadcast: its batch \[1\] must hold input's \(shape 3x5x4\)/);
    expect(matmulInFloat32(integers([2, 5, 4], 20), b, bfloat16, { otherShape: [2, 4, 3] }).shape).toEqual([2, 5, 3]);
  });

  it('with round, the backend\'s matmulRounded writes the 16-bit result with the bias added: no float32 product, add or cast', () => {
    const backend = getBackend('cpu');
    expect(typeof backend.fused?.matmulRounded).toBe('function');
    const w = integers([4, 6], 27);
    const columns = integers([3, 6, 10], 28);
    const bias = tensor([0.5, -1.25, 3, 0.125], { dtype: bfloat16 }).reshape([4, 1]);
    const calls: string[] = [];
    const { kernels, fused } = backend;
    const spied = { cast: kernels.cast, binary: kernels.binary, matmulToFloat32: fused!.matmulToFloat32!, matmulRounded: fused!.matmulRounded! };
    kernels.cast = (x, out) => { calls.push('cast'); spied.cast.call(kernels, x, out); };
    kernels.binary = (op, a, b, out) => { calls.push(op); spied.binary.call(kernels, op, a, b, out); };
    fused!.matmulToFloat32 = (a, b, out) => { calls.push('matmulToFloat32'); spied.matmulToFloat32.call(fused, a, b, out); };
    fused!.matmulRounded = (a, b, c, out) => { calls.push(`matmulRounded ${c?.dtype}`); spied.matmulRounded.call(fused, a, b, c, out); };
    let y: Tensor;
    try {
      y = matmulInFloat32(w, columns, bfloat16, { bias, round: true });
    } finally {
      Object.assign(kernels, { cast: spied.cast, binary: spied.binary });
      Object.assign(fused!, { matmulToFloat32: spied.matmulToFloat32, matmulRounded: spied.matmulRounded });
    }
    // The bias's float32 copy (4 elements) is the one cast.
    expect(calls).toEqual(['cast', 'matmulRounded float32']);
    const want = withPath('widened', () => matmulInFloat32(w, columns, bfloat16, { bias, round: true }));
    expect(Array.from(y.dataSync())).toEqual(Array.from(want.dataSync()));
  });

  it('refuses a bias of another dtype, or one that does not broadcast to the product, naming what it got', () => {
    const [a, b] = [integers([2, 3], 25), integers([3, 4], 26)];
    expect(() => matmulInFloat32(a, b, bfloat16, { bias: tensor([1, 2, 3, 4], { dtype: float16 }) })).toThrow(DTypeError);
    expect(() => matmulInFloat32(a, b, bfloat16, { bias: tensor([1, 2, 3, 4], { dtype: float16 }) })).toThrow(/bias must be bfloat16 or float32, got float16/);
    expect(() => matmulInFloat32(a, b, bfloat16, { bias: tensor([[1], [2]], { dtype: bfloat16 }).expand([2, 4]).reshape([8]) })).toThrow(ShapeError);
    expect(() => matmulInFloat32(a, b, bfloat16, { bias: tensor([[[1]], [[2]]]) })).toThrow(/bias of shape 2x1x1 does not broadcast to the product's shape \[2, 4\]/);
    expect(() => matmulInFloat32(a, b, bfloat16, { bias: [1, 2, 3, 4] as unknown as Tensor })).toThrow(/options.bias must be a Tensor/);
  });

  it('refuses vectors and mismatched inner sizes with a ShapeError naming the shapes', () => {
    expect(() => matmulInFloat32(tensor([1, 2]), tensor([[1], [2]]), bfloat16)).toThrow(ShapeError);
    expect(() => matmulInFloat32(tensor([1, 2]), tensor([[1], [2]]), bfloat16)).toThrow(/at least 2-D, got 1-D and 2-D/);
    expect(() => matmulInFloat32(tensor([[1, 2, 3]]), tensor([[1], [2]]), bfloat16)).toThrow(/shapes cannot be multiplied \(1x3 and 2x1\)/);
  });
});
