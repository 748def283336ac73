// Channel-wise and alpha dropout: which elements drop together, the scaling, eval mode, PyTorch's
// argument defaults and errors, and the modules.
import { describe, expect, it } from 'vitest';
import { bfloat16, float16, float64, Generator, ones, rand, randn, ShapeError, ValueError, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { values } from './helpers.js';

/** The distinct values of each [n, c] channel of a [N, C, …] tensor. */
function channelValues(t: Tensor): number[][] {
  const [N, C] = t.shape as [number, number];
  const per = t.numel() / (N * C);
  const v = values(t);
  return Array.from({ length: N * C }, (_, i) => [...new Set(v.slice(i * per, (i + 1) * per))]);
}

describe('F.dropout1d and F.dropout2d zero whole channels', () => {
  it('dropout2d on [N, C, H, W]: each channel all 0 or all 1/(1 − p), about p of them dropped', () => {
    const y = F.dropout2d(ones([8, 16, 3, 3], { dtype: float64 }), 0.25, true, { generator: new Generator(1) });
    const channels = channelValues(y);
    expect(channels.every((c) => c.length === 1 && (c[0] === 0 || c[0] === 1 / 0.75))).toBe(true);
    const dropped = channels.filter((c) => c[0] === 0).length / channels.length;
    expect(dropped).toBeGreaterThan(0.15);
    expect(dropped).toBeLessThan(0.35);
  });

  it('dropout1d on [N, C, L] and on unbatched [C, L]; dropout2d takes a 3-D input as [N, C, L], as PyTorch 1.13', () => {
    const batched = F.dropout1d(ones([4, 8, 5]), 0.5, true, { generator: new Generator(2) });
    expect(channelValues(batched).every((c) => c.length === 1 && (c[0] === 0 || c[0] === 2))).toBe(true);
    const unbatched = F.dropout1d(ones([8, 5]), { p: 0.5, generator: new Generator(2) });
    expect(unbatched.shape).toEqual([8, 5]);
    expect(channelValues(unbatched.unsqueeze(0))).toEqual(channelValues(batched.narrow(0, 0, 1)));
    const threeD = F.dropout2d(ones([4, 8, 5]), 0.5, true, { generator: new Generator(2) });
    expect(values(threeD)).toEqual(values(batched));
  });

  it('in bfloat16 and float16 a kept element is x times 1/(1 − p) rounded to the dtype, as the mask cast to the dtype and scaled gives', () => {
    for (const dtype of [bfloat16, float16]) {
      const x = randn([6, 40], { generator: new Generator(4) }).to(dtype);
      const keep = rand([6, 40], { generator: new Generator(5) }).lt(1 - 0.3);
      const want = x.mul(keep.to(dtype).mul(1 / 0.7));
      const y = F.dropout(x, 0.3, true, { generator: new Generator(5) });
      expect(y.dtype).toBe(dtype);
      expect(Array.from(y.dataSync())).toEqual(Array.from(want.dataSync()));
      // 1/0.7 is not a bfloat16 (or float16) value: scaling in float32 instead would differ.
      expect(Array.from(y.dataSync())).not.toEqual(Array.from(x.float().mul(keep.float().mul(1 / 0.7)).to(dtype).dataSync()));
    }
  });

  it('the gradient is the mask times 1/(1 − p); eval mode and p = 0 return the input itself; p = 1 zeros all', () => {
    const x = randn([2, 3, 4], { dtype: float64 }).requiresGrad_();
    const y = F.dropout1d(x, 0.5, true, { generator: new Generator(3) });
    y.sum().backward();
    expect(values(x.grad!)).toEqual(values(y.div(x.detach())));
    expect(F.dropout2d(x, 0.5, false)).toBe(x);
    expect(F.dropout1d(x, 0)).toBe(x);
    expect(values(F.dropout2d(x, 1)).every((v) => v === 0)).toBe(true);
  });

  it('errors: ranks and probabilities', () => {
    expect(() => F.dropout1d(ones([2, 3, 4, 5]))).toThrow(ShapeError);
    expect(() => F.dropout1d(ones([2, 3, 4, 5]))).toThrow('Expected 2D or 3D input, but received a 4D input');
    expect(() => F.dropout2d(ones([3]))).toThrow('Feature dropout requires at least 2 dimensions in the input');
    expect(() => F.dropout2d(ones([2, 3, 4, 5]), 1.5)).toThrow(ValueError);
    expect(() => F.dropout2d(ones([2, 3, 4, 5]), 1.5)).toThrow('dropout probability has to be between 0 and 1, but got 1.5');
    expect(() => F.dropout(ones([2]), 0.5, { trainng: true } as never)).toThrow("dropout() got an unexpected keyword argument 'trainng'");
  });
});

describe('F.alphaDropout keeps SELU\'s mean and variance', () => {
  const p = 0.2;
  const alpha = 1.7580993408473766;
  const a = 1 / Math.sqrt((alpha * alpha * p + 1) * (1 - p));

  it('each element is a·x + α·a·p (kept) or α·a·(p − 1) (dropped), PyTorch\'s formula', () => {
    const x = randn([1000], { dtype: float64, generator: new Generator(4) });
    const y = F.alphaDropout(x, p, true, { generator: new Generator(5) });
    const xs = values(x);
    const dropped = values(y).filter((v, i) => {
      const kept = a * xs[i]! + alpha * a * p;
      const drop = alpha * a * (p - 1);
      expect(Math.min(Math.abs(v - kept), Math.abs(v - drop))).toBeLessThan(1e-12);
      return Math.abs(v - drop) < 1e-12 && Math.abs(v - kept) >= 1e-12;
    }).length;
    expect(dropped / 1000).toBeGreaterThan(0.15);
    expect(dropped / 1000).toBeLessThan(0.25);
  });

  it('a standard normal input keeps mean 0 and variance 1 (200k samples, fixed seeds)', () => {
    const y = values(F.alphaDropout(randn([200_000], { dtype: float64, generator: new Generator(6) }), 0.3, true, { generator: new Generator(7) }));
    const mean = y.reduce((s, v) => s + v, 0) / y.length;
    const variance = y.reduce((s, v) => s + (v - mean) ** 2, 0) / y.length;
    expect(Math.abs(mean)).toBeLessThan(0.01);
    expect(Math.abs(variance - 1)).toBeLessThan(0.02);
  });

  it('training defaults to false, as PyTorch\'s F.alpha_dropout; p = 1 zeros all', () => {
    const x = randn([5]);
    expect(F.alphaDropout(x)).toBe(x);
    expect(F.alphaDropout(x, 0.5)).toBe(x);
    expect(values(F.alphaDropout(x, 1, true)).every((v) => v === 0)).toBe(true);
  });
});

describe('dropout modules', () => {
  it('active in training mode, the identity in eval mode; print p; take p positionally or by name', () => {
    const x = ones([2, 4, 3, 3]);
    for (const layer of [new nn.Dropout(0.5), new nn.Dropout1d(0.5), new nn.Dropout2d({ p: 0.5 }), new nn.AlphaDropout(0.5)]) {
      expect(layer.p).toBe(0.5);
      expect(layer.toString()).toBe(`${layer.constructor.name}(p=0.5)`);
      layer.eval();
      const input = layer instanceof nn.Dropout1d ? x.reshape([2, 4, 9]) : x;
      expect(layer.forward(input)).toBe(input);
    }
    const d2 = new nn.Dropout2d(0.5, { generator: new Generator(8) });
    expect(channelValues(d2.forward(x)).every((c) => c.length === 1)).toBe(true);
    const alpha = new nn.AlphaDropout(0.5, { generator: new Generator(9) });
    expect(alpha.forward(x)).not.toBe(x); // modules train by default, unlike F.alphaDropout
    expect(() => new nn.Dropout2d(2)).toThrow('dropout probability has to be between 0 and 1, but got 2');
  });

  it('p can be assigned, as in PyTorch (m.p = 0 turns a trained model\'s dropout off), and is checked at the next forward', () => {
    const x = ones([64]);
    const layer = new nn.Dropout(0.5);
    layer.p = 0;
    expect(values(layer.forward(x))).toEqual(new Array(64).fill(1));
    expect(layer.toString()).toBe('Dropout(p=0)');
    layer.p = 1.5;
    expect(() => layer.forward(x)).toThrow('dropout probability has to be between 0 and 1, but got 1.5');
  });
});
