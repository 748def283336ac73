// Autocast's CUDA statements (spec §6, [CUDA]) on an emulated 'cuda' device: a backend named
// 'cuda' built from the cpu kernels (createFakeBackend), with bf16 compute, so the built-in cuda
// policy table applies. Registration is process-global, so this file has it to itself; the
// unavailable / no-bf16 paths are in autocast-cuda-unsupported.test.ts.
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import {
  autocast, autocastOp, bfloat16, cat, float16, float32, float64, getAutocastDtype, int32, isAutocastEnabled,
  randn, registerBackend, tensor, Tensor, TensorError,
  type OpName,
} from '@core/tensor';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { expectError, flat } from '../helpers/assert.js';
import { createFakeBackend } from '../helpers/fake-backend.js';

const CUDA = { deviceType: 'cuda' } as const;
const CPU = { deviceType: 'cpu' } as const;

function castArgs<A extends readonly unknown[]>(op: OpName, ...args: A): A {
  return autocastOp(op, args, (...a) => a);
}

async function vals(t: Tensor): Promise<number[]> {
  return flat(await t.toArray());
}

/** A float tensor on the emulated cuda device. */
function cu(shape: number[], dtype = float32): Tensor {
  return randn(shape, { dtype }).to('cuda');
}

beforeAll(() => {
  registerBackend({ name: 'cuda', priority: 10, create: () => createFakeBackend({ name: 'cuda' }) });
});

afterEach(() => {
  vi.restoreAllMocks();
  expect(isAutocastEnabled('cuda')).toBe(false);
  expect(isAutocastEnabled('cpu')).toBe(false);
});

describe('AC-2/AC-3 on cuda', () => {
  it('AC-2: a cuda region defaults to float16', () => {
    expect(getAutocastDtype('cuda')).toBe(float16);
    const a = cu([2, 2]);
    autocast(CUDA, () => {
      expect(getAutocastDtype('cuda')).toBe(float16);
      expect(a.mm(a).dtype).toBe(float16);
    });
  });

  it('AC-3: cuda accepts bfloat16 when the device computes it, without a warning', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const a = cu([2, 2]);
    expect(autocast({ deviceType: 'cuda', dtype: bfloat16 }, () => a.mm(a)).dtype).toBe(bfloat16);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('AC-5/AC-6: cuda and cpu regions are independent', () => {
  it('AC-5: a cuda region touches only cuda tensors; a cpu region only cpu tensors', () => {
    const g = cu([2, 2]);
    const c = randn([2, 2]);
    autocast(CUDA, () => {
      expect(isAutocastEnabled('cpu')).toBe(false);
      expect(g.mm(g).dtype).toBe(float16);
      expect(c.mm(c).dtype).toBe(float32);
    });
    autocast(CPU, () => {
      expect(isAutocastEnabled('cuda')).toBe(false);
      expect(g.mm(g).dtype).toBe(float32);
      expect(c.mm(c).dtype).toBe(bfloat16);
    });
  });

  it('AC-5: both regions at once, each with its own dtype; leaving one leaves the other on', () => {
    const g = cu([2, 2]);
    const c = randn([2, 2]);
    autocast({ deviceType: 'cuda', dtype: bfloat16 }, () => {
      autocast({ deviceType: 'cpu', dtype: float16 }, () => {
        expect(getAutocastDtype('cuda')).toBe(bfloat16);
        expect(getAutocastDtype('cpu')).toBe(float16);
        expect(g.mm(g).dtype).toBe(bfloat16);
        expect(c.mm(c).dtype).toBe(float16);
        autocast({ deviceType: 'cuda', enabled: false }, () => {
          expect(g.mm(g).dtype).toBe(float32);
          expect(c.mm(c).dtype).toBe(float16);
        });
      });
      expect(isAutocastEnabled('cpu')).toBe(false);
      expect(c.mm(c).dtype).toBe(float32);
      expect(g.mm(g).dtype).toBe(bfloat16);
    });
  });

  it('AC-5/AC-6: in one call, only the region device type\'s eligible args are cast', () => {
    const g = cu([2]);
    const c = randn([2]);
    const gi = tensor([1, 2], { dtype: int32, device: 'cuda' });
    const gd = cu([2], float64);
    autocast(CUDA, () => {
      const [g2, c2, gi2, gd2] = castArgs('mm', g, c, gi, gd);
      expect(g2.dtype).toBe(float16);
      expect(c2).toBe(c);
      expect(gi2).toBe(gi);
      expect(gd2).toBe(gd);
    });
  });

  it('AC-6: float64 ops stay float64 in a cuda region', () => {
    const d = cu([2, 2], float64);
    autocast(CUDA, () => {
      expect(d.mm(d).dtype).toBe(float64);
      expect(d.exp().dtype).toBe(float64);
      expect(d.sum().dtype).toBe(float64);
      expect(d.softmax(0).dtype).toBe(float64);
    });
  });
});

describe('AC-7 on cuda', () => {
  it('AC-7: unlisted ops use normal promotion: add(f16, f32) → f32; in-place ops keep the target dtype', async () => {
    const h = cu([2], float16);
    const f = cu([2]);
    autocast(CUDA, () => {
      expect(h.add(f).dtype).toBe(float32);
      expect(h.mul(h).dtype).toBe(float16);
      expect(h.sigmoid().dtype).toBe(float16);
      const t = tensor([1 + 2 ** -12, 2], { device: 'cuda' });
      t.mul_(tensor([1 + 2 ** -12, 1], { device: 'cuda' }));
      expect(t.dtype).toBe(float32);
      h.add_(f);
      expect(h.dtype).toBe(float16);
    });
    const t = tensor([1 + 2 ** -12], { device: 'cuda' });
    autocast(CUDA, () => t.mul_(tensor([1 + 2 ** -12], { device: 'cuda' })));
    expect(await vals(t)).toEqual([Math.fround((1 + 2 ** -12) ** 2)]);
  });
});

describe('AC-8: lower_precision_fp on cuda', () => {
  it('AC-8: mm(f32, f32) → f16 and mm(f32, f16) → f16, inputs rounded to f16 first', async () => {
    const a = tensor([[1 + 2 ** -12]], { device: 'cuda' }); // f16(1 + 2^-12) = 1
    const b = tensor([[3]], { device: 'cuda' });
    const h = tensor([[3]], { dtype: float16, device: 'cuda' });
    const [o1, o2] = autocast(CUDA, () => [a.mm(b), a.mm(h)]);
    expect(o1.dtype).toBe(float16);
    expect(o2.dtype).toBe(float16);
    expect(await vals(o1)).toEqual([3]);
    expect(await vals(o2)).toEqual([3]);
  });

  it('AC-8: matmul, bmm, F.linear, F.conv2d and nn.Linear outputs are float16 (bfloat16 in a bf16 region)', () => {
    const x = cu([4, 3]);
    const w = cu([5, 3]);
    const bias = cu([5]);
    const img = cu([1, 2, 5, 5]);
    const k = cu([3, 2, 3, 3]);
    const layer = new nn.Linear(3, 5, { device: 'cuda' });
    autocast(CUDA, () => {
      expect(x.matmul(w.t()).dtype).toBe(float16);
      expect(cu([2, 2, 3]).bmm(cu([2, 3, 2])).dtype).toBe(float16);
      expect(F.linear(x, w, bias).dtype).toBe(float16);
      expect(F.conv2d(img, k, null, { padding: 'same' }).dtype).toBe(float16);
      expect(layer.forward(x).dtype).toBe(float16);
    });
    autocast({ deviceType: 'cuda', dtype: bfloat16 }, () => {
      expect(F.linear(x, w, bias).dtype).toBe(bfloat16);
      expect(layer.forward(x).dtype).toBe(bfloat16);
    });
    expect(layer.weight.dtype).toBe(float32);
  });
});

describe('AC-9: fp32 ops on cuda', () => {
  it('AC-9: exp, log, pow, rsqrt, reciprocal, tan run in f32', () => {
    const h = cu([3], float16).abs().add(0.5);
    autocast(CUDA, () => {
      for (const y of [h.exp(), h.log(), h.pow(2), h.pow(h), h.rsqrt(), h.reciprocal(), h.tan(), h.expm1(), h.log1p()]) {
        expect(y.dtype).toBe(float32);
      }
      // Unlisted math keeps its dtype.
      expect(h.sqrt().dtype).toBe(float16);
      expect(h.sin().dtype).toBe(float16);
    });
    expect(h.exp().dtype).toBe(float16);
  });

  it('AC-9: the f32 result is the f32 op on the f16 input (no rounding to f16 afterwards)', async () => {
    const h = tensor([0.1, 1.3, 2.7], { dtype: float16, device: 'cuda' });
    const y = autocast(CUDA, () => h.exp());
    expect(await vals(y)).toEqual(await vals(h.float().exp()));
  });

  it('AC-9: layerNorm, mseLoss, crossEntropy, nllLoss, binaryCrossEntropyWithLogits run in f32', () => {
    const x = cu([4, 3], float16);
    const target = tensor([0, 2, 1, 0], { dtype: int32, device: 'cuda' });
    autocast(CUDA, () => {
      expect(F.layerNorm(x, [3]).dtype).toBe(float32);
      expect(F.layerNorm(x, [3], cu([3]), cu([3])).dtype).toBe(float32);
      expect(F.mseLoss(x, x.mul(2)).dtype).toBe(float32);
      expect(F.crossEntropy(x, target).dtype).toBe(float32);
      expect(F.nllLoss(x, target).dtype).toBe(float32);
      expect(F.binaryCrossEntropyWithLogits(x, x.sigmoid()).dtype).toBe(float32);
    });
  });
});

describe('AC-10: fp32_set_opt_dtype on cuda', () => {
  it('AC-10: sum, prod, softmax, logSoftmax with an eligible first arg → f32', () => {
    const h = cu([2, 3], float16);
    const b = cu([2, 3], bfloat16);
    autocast(CUDA, () => {
      expect(h.sum().dtype).toBe(float32);
      expect(h.sum(1, true).dtype).toBe(float32);
      expect(h.prod().dtype).toBe(float32);
      expect(h.softmax(1).dtype).toBe(float32);
      expect(h.logSoftmax(1).dtype).toBe(float32);
      expect(F.softmax(h, 1).dtype).toBe(float32);
      // Any eligible first arg, not only the region dtype.
      expect(b.sum().dtype).toBe(float32);
      expect(cu([3]).sum().dtype).toBe(float32);
    });
  });

  it('AC-10: the sum computed in f32 equals sum(x.float())', async () => {
    const h = tensor([0.1, 0.2, 0.3, 1000], { dtype: float16, device: 'cuda' });
    const s = autocast(CUDA, () => h.sum());
    expect(await vals(s)).toEqual(await vals(h.float().sum()));
  });

  it('AC-10: an explicit dtype is honoured', () => {
    const h = cu([2, 3], float16);
    autocast(CUDA, () => {
      expect(h.sum(null, false, { dtype: float16 }).dtype).toBe(float16);
      expect(h.sum(1, false, { dtype: float64 }).dtype).toBe(float64);
      expect(h.prod(1, false, { dtype: float16 }).dtype).toBe(float16);
    });
  });

  it('AC-10: an ineligible first arg leaves the call unchanged (f64, int, cpu tensors)', () => {
    const d = cu([3], float64);
    const i = tensor([1, 2, 3], { dtype: int32, device: 'cuda' });
    const c = randn([3], { dtype: float16 });
    autocast(CUDA, () => {
      expect(d.sum().dtype).toBe(float64);
      expect(d.softmax(0).dtype).toBe(float64);
      expect(i.sum().dtype).toBe(int32);
      expect(c.sum().dtype).toBe(float16);
      expect(c.softmax(0).dtype).toBe(float16);
      const [same] = castArgs('sum', d);
      expect(same).toBe(d);
    });
  });
});

describe('AC-12: promote on cuda', () => {
  it('AC-12: atan2 promotes to the widest of the region dtype and the eligible args', () => {
    const h = cu([3], float16);
    const f = cu([3]);
    autocast(CUDA, () => {
      expect(h.atan2(f).dtype).toBe(float32);
      expect(h.atan2(h).dtype).toBe(float16);
      expect(f.atan2(f).dtype).toBe(float32);
    });
  });

  it('AC-12: a bf16 tensor in an f16 region raises "Unexpected floating ScalarType in at::autocast::prioritize"', () => {
    const h = cu([3], float16);
    const b = cu([3], bfloat16);
    expect(h.atan2(b).dtype).toBe(float32); // plain promotion outside a region
    autocast(CUDA, () => {
      expectError(() => h.atan2(b), TensorError, 'Unexpected floating ScalarType in at::autocast::prioritize');
      expectError(() => castArgs('scatterAdd', b, h), TensorError, 'Unexpected floating ScalarType in at::autocast::prioritize');
    });
    autocast({ deviceType: 'cuda', dtype: bfloat16 }, () => {
      expect(b.atan2(b).dtype).toBe(bfloat16);
      expectError(() => b.atan2(h), TensorError, 'Unexpected floating ScalarType in at::autocast::prioritize');
    });
  });

  it('AC-12: scatterAdd promotes its eligible args (the int index passes through)', () => {
    const h = cu([4], float16);
    const f = cu([2]);
    const index = tensor([0, 2], { dtype: int32, device: 'cuda' });
    autocast(CUDA, () => expect(h.scatterAdd(0, index, f).dtype).toBe(float32));
  });

  it('AC-12: cat is not in the cuda promote list: cat([bf16, f16]) promotes normally to f32', () => {
    const h = cu([3], float16);
    const b = cu([3], bfloat16);
    autocast(CUDA, () => {
      expect(cat([b, h]).dtype).toBe(float32);
      expect(cat([h, h]).dtype).toBe(float16);
    });
  });
});

describe('AC-13: binary_cross_entropy is banned in a cuda region', () => {
  // @core/nn has no F.binaryCrossEntropy yet, so the ban is checked at the dispatch step itself.
  it('AC-13: autocastOp("binaryCrossEntropy") raises the unsafe-to-autocast error in a cuda region only', () => {
    const p = cu([3]).sigmoid();
    const t = tensor([0, 1, 1], { device: 'cuda' });
    const run = () => autocastOp('binaryCrossEntropy', [p, t] as const, (x, _t) => x);
    expect(run()).toBe(p); // outside a region
    autocast(CUDA, () => {
      const e = expectError(run, TensorError);
      expect(e.message.split('\n')[0]).toBe('torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.');
    });
    autocast({ deviceType: 'cuda', enabled: false }, () => expect(run()).toBe(p));
    // cpu tensors in a cuda region are not the region's type.
    const pc = randn([3]).sigmoid();
    autocast(CUDA, () => expect(autocastOp('binaryCrossEntropy', [pc, pc] as const, (x, _t) => x)).toBe(pc));
  });

  it('AC-9: binaryCrossEntropyWithLogits is the safe alternative and runs in f32', () => {
    const x = cu([3], float16);
    autocast(CUDA, () => expect(F.binaryCrossEntropyWithLogits(x, x.sigmoid()).dtype).toBe(float32));
  });
});

describe('AC-14/AC-15 on cuda', () => {
  it('AC-14: f32 leaf grads stay f32 through f16 autocast ops; activations flow in f16', async () => {
    const x = tensor([[1, 2], [3, 4]], { device: 'cuda', requiresGrad: true });
    const w = tensor([[0.5, -1], [2, 0.25]], { device: 'cuda', requiresGrad: true });
    const target = tensor([0, 1], { dtype: int32, device: 'cuda' });
    let y!: Tensor;
    const loss = autocast(CUDA, () => {
      y = x.mm(w);
      y.retainGrad();
      return F.crossEntropy(y, target);
    });
    expect(y.dtype).toBe(float16);
    expect(loss.dtype).toBe(float32);
    loss.backward();
    expect(y.grad!.dtype).toBe(float16);
    expect(w.grad!.dtype).toBe(float32);
    expect(x.grad!.dtype).toBe(float32);
    expect((await vals(w.grad!)).every(Number.isFinite)).toBe(true);
  });

  it('AC-15: the weight cast is cached within a cuda region and dropped on exit', () => {
    const w = cu([2, 2]).requiresGrad_();
    let c1!: Tensor;
    autocast(CUDA, () => {
      [c1] = castArgs('linear', w);
      expect(c1.dtype).toBe(float16);
      expect(castArgs('mm', w)[0]).toBe(c1);
      // Not for fp32 ops, nor for the promote walk's f32 result.
      expect(castArgs('exp', w)[0]).toBe(w);
    });
    autocast(CUDA, () => expect(castArgs('mm', w)[0]).not.toBe(c1));
  });
});
