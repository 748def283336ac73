// Autocast on the CPU backend (spec §6, AC-1..AC-16): regions (function and `using` forms), the
// cpu policy table, nesting, eligibility, the weight-cast cache, backward, a third-party table on
// the 'fake' device, and a small bf16 training step. The CUDA-only statements are emulated in
// autocast-cuda*.test.ts (they register a backend named 'cuda', which must not leak into this file).
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { SGD } from '@core/optim';
import {
  autocast, autocastOp, AutocastRegion, bfloat16, cat, DTypeError, float16, float32, float64, getAutocastDtype, int32,
  isAutocastCacheEnabled, isAutocastEnabled, manualSeed, noGrad, randint, randn, registerAutocastPolicy,
  roundToBFloat16, setAutocastCacheEnabled, stack, tensor, Tensor, TensorError, ValueError,
  type AutocastPolicyTable,
  type OpName,
} from '@core/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expectError, flat } from '../helpers/assert.js';
import { registerFakeBackend } from '../helpers/fake-backend.js';

const CPU = { deviceType: 'cpu' } as const;

/** The args an op would run with: autocastOp with a run function that hands its args back. */
function castArgs<A extends readonly unknown[]>(op: OpName, ...args: A): A {
  return autocastOp(op, args, (...a) => a);
}

function vals(t: Tensor): number[] {
  return Array.from(t.dataSync());
}

afterEach(() => {
  vi.restoreAllMocks();
  // No test may leave a region open.
  expect(isAutocastEnabled('cpu')).toBe(false);
  expect(getAutocastDtype('cpu')).toBe(bfloat16);
  expect(isAutocastCacheEnabled()).toBe(true);
});

describe('AC-1: regions', () => {
  it('AC-1: autocast(options, fn) enables cpu autocast for fn only and returns its result', () => {
    expect(isAutocastEnabled('cpu')).toBe(false);
    const a = randn([2, 3]);
    const b = randn([3, 4]);
    const out = autocast(CPU, () => {
      expect(isAutocastEnabled('cpu')).toBe(true);
      return a.mm(b);
    });
    expect(out.dtype).toBe(bfloat16);
    expect(isAutocastEnabled('cpu')).toBe(false);
    expect(a.mm(b).dtype).toBe(float32);
  });

  it('AC-1: the `using` form returns an AutocastRegion that leaves the region on [Symbol.dispose]', () => {
    const a = randn([2, 2]);
    {
      using region = autocast(CPU);
      expect(region).toBeInstanceOf(AutocastRegion);
      expect(typeof region[Symbol.dispose]).toBe('function');
      expect(isAutocastEnabled('cpu')).toBe(true);
      expect(a.mm(a).dtype).toBe(bfloat16);
    }
    expect(isAutocastEnabled('cpu')).toBe(false);
    expect(a.mm(a).dtype).toBe(float32);
  });

  it('AC-1: a region object can be left explicitly; exit() and dispose are idempotent', () => {
    const region = autocast(CPU);
    expect(isAutocastEnabled('cpu')).toBe(true);
    region.exit();
    expect(isAutocastEnabled('cpu')).toBe(false);
    region[Symbol.dispose]();
    region.exit();
    // A second exit must not unbalance the nesting count of an enclosing region.
    autocast(CPU, () => {
      const inner = autocast({ deviceType: 'cpu', dtype: float16 });
      inner.exit();
      inner.exit();
      expect(isAutocastEnabled('cpu')).toBe(true);
      expect(getAutocastDtype('cpu')).toBe(bfloat16);
    });
  });

  it('AC-1: a non-string device type raises "Expected `device_type` of type `str`, got: …"', () => {
    expectError(() => autocast({ deviceType: 5 as unknown as string }, () => 0), ValueError, 'Expected `device_type` of type `str`, got: `number`');
    expectError(() => autocast({} as { deviceType: string }), ValueError, 'Expected `device_type` of type `str`, got: `undefined`');
    expect(isAutocastEnabled('cpu')).toBe(false);
  });

  it("AC-1: an unknown device type raises \"User specified an unsupported autocast device_type '{d}'\"", () => {
    expectError(() => autocast({ deviceType: 'tpu' }, () => 0), ValueError, "User specified an unsupported autocast device_type 'tpu'");
    expectError(() => autocast({ deviceType: 'xla' }), ValueError, "User specified an unsupported autocast device_type 'xla'");
  });

  it('AC-1: an async fn is refused with a TypeError, and the region is not left open', async () => {
    const e = expectError(() => autocast(CPU, async () => 1), TypeError, 'fn must be synchronous', 'using');
    expect(e).toBeInstanceOf(TypeError);
    expect(isAutocastEnabled('cpu')).toBe(false);
    // The documented alternative: the `using` form inside the async function.
    const a = randn([2, 2]);
    const run = async () => {
      using _region = autocast(CPU);
      await Promise.resolve();
      return a.mm(a);
    };
    expect((await run()).dtype).toBe(bfloat16);
    expect(isAutocastEnabled('cpu')).toBe(false);
  });
});

describe('AC-2: default dtypes', () => {
  it('AC-2: cpu defaults to bfloat16, cuda and webgpu to float16 (getAutocastDtype)', () => {
    expect(getAutocastDtype('cpu')).toBe(bfloat16);
    expect(getAutocastDtype('cuda')).toBe(float16);
    expect(getAutocastDtype('webgpu')).toBe(float16);
    autocast(CPU, () => expect(getAutocastDtype('cpu')).toBe(bfloat16));
    autocast({ deviceType: 'cpu', dtype: float16 }, () => expect(getAutocastDtype('cpu')).toBe(float16));
  });
});

describe('AC-3: cpu dtype checks', () => {
  const WARNING =
    'In CPU autocast, but the target dtype is not supported. Disabling autocast.\n' +
    'CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.';

  it('AC-3: cpu accepts bfloat16 and float16 without a warning', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const a = randn([2, 2]);
    expect(autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => a.mm(a)).dtype).toBe(bfloat16);
    expect(autocast({ deviceType: 'cpu', dtype: float16 }, () => a.mm(a)).dtype).toBe(float16);
    expect(warn).not.toHaveBeenCalled();
  });

  for (const dtype of [float32, float64]) {
    it(`AC-3: cpu with ${dtype.name} warns (exact text) and the region is disabled`, () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      const a = randn([2, 2]);
      const out = autocast({ deviceType: 'cpu', dtype }, () => {
        expect(isAutocastEnabled('cpu')).toBe(false);
        return a.mm(a);
      });
      expect(out.dtype).toBe(float32);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(warn.mock.calls[0]![0]).toBe(WARNING);
    });
  }

  it('AC-3: a region with enabled: false does not check its dtype', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    autocast({ deviceType: 'cpu', dtype: float64, enabled: false }, () => expect(isAutocastEnabled('cpu')).toBe(false));
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('AC-4: nesting and state', () => {
  const a = randn([3, 3]);

  it('AC-4: an inner enabled: false region is local', () => {
    autocast(CPU, () => {
      expect(a.mm(a).dtype).toBe(bfloat16);
      autocast({ deviceType: 'cpu', enabled: false }, () => {
        expect(isAutocastEnabled('cpu')).toBe(false);
        expect(a.mm(a).dtype).toBe(float32);
      });
      expect(isAutocastEnabled('cpu')).toBe(true);
      expect(a.mm(a).dtype).toBe(bfloat16);
    });
  });

  it('AC-4: an inner dtype is local', () => {
    autocast(CPU, () => {
      autocast({ deviceType: 'cpu', dtype: float16 }, () => {
        expect(getAutocastDtype('cpu')).toBe(float16);
        expect(a.mm(a).dtype).toBe(float16);
      });
      expect(getAutocastDtype('cpu')).toBe(bfloat16);
      expect(a.mm(a).dtype).toBe(bfloat16);
    });
  });

  it('AC-4: an inner enabled region inside a disabled one is local too', () => {
    autocast({ deviceType: 'cpu', enabled: false }, () => {
      autocast(CPU, () => expect(a.mm(a).dtype).toBe(bfloat16));
      expect(a.mm(a).dtype).toBe(float32);
    });
  });

  it('AC-4: the state is restored when fn throws (and the error propagates)', () => {
    const boom = new Error('boom');
    expect(() => autocast({ deviceType: 'cpu', dtype: float16, cacheEnabled: false }, () => { throw boom; })).toThrow(boom);
    expect(isAutocastEnabled('cpu')).toBe(false);
    expect(getAutocastDtype('cpu')).toBe(bfloat16);
    expect(isAutocastCacheEnabled()).toBe(true);
    autocast(CPU, () => {
      expect(() => autocast({ deviceType: 'cpu', enabled: false }, () => { throw boom; })).toThrow(boom);
      expect(isAutocastEnabled('cpu')).toBe(true);
      expect(a.mm(a).dtype).toBe(bfloat16);
    });
  });

  it('AC-4: the `using` form restores the state when its block throws', () => {
    expect(() => {
      using _region = autocast({ deviceType: 'cpu', dtype: float16 });
      throw new Error('inside');
    }).toThrow('inside');
    expect(isAutocastEnabled('cpu')).toBe(false);
    expect(getAutocastDtype('cpu')).toBe(bfloat16);
  });

  it('AC-4: the cast cache is cleared only when the outermost region exits', () => {
    const w = randn([2, 2], { requiresGrad: true });
    let first!: Tensor;
    autocast(CPU, () => {
      [first] = castArgs('mm', w);
      expect(first.dtype).toBe(bfloat16);
      autocast(CPU, () => expect(castArgs('mm', w)[0]).toBe(first));
      // The inner exit did not clear it.
      expect(castArgs('mm', w)[0]).toBe(first);
      autocast({ deviceType: 'cpu', enabled: false }, () => {});
      expect(castArgs('mm', w)[0]).toBe(first);
    });
    autocast(CPU, () => expect(castArgs('mm', w)[0]).not.toBe(first));
  });

  it('AC-4: the cache flag is one for all types and is restored on exit', () => {
    autocast({ deviceType: 'cpu', cacheEnabled: false }, () => {
      expect(isAutocastCacheEnabled()).toBe(false);
      autocast(CPU, () => expect(isAutocastCacheEnabled()).toBe(false)); // inherits the current flag
      autocast({ deviceType: 'cpu', cacheEnabled: true }, () => expect(isAutocastCacheEnabled()).toBe(true));
      expect(isAutocastCacheEnabled()).toBe(false);
    });
    expect(isAutocastCacheEnabled()).toBe(true);
  });
});

describe('AC-5/AC-6: only eligible tensors of the region device type are cast', () => {
  it('AC-6: int tensors, float64 tensors and bf16/f16 already in the target pass through unchanged', () => {
    const i = tensor([[1, 2]], { dtype: int32 });
    const d = tensor([[1, 2]], { dtype: float64 });
    const f = tensor([[1, 2]]);
    const h = tensor([[1, 2]], { dtype: bfloat16 });
    autocast(CPU, () => {
      const [i2, d2, f2, h2, n, s] = castArgs('mm', i, d, f, h, null, 3);
      expect(i2).toBe(i);
      expect(d2).toBe(d);
      expect(h2).toBe(h);
      expect(n).toBe(null);
      expect(s).toBe(3);
      expect(f2).not.toBe(f);
      expect((f2 as Tensor).dtype).toBe(bfloat16);
    });
  });

  it('AC-6: float64 ops stay float64 in a region (mm, matmul, F.linear)', () => {
    const a = randn([2, 3], { dtype: float64 });
    const b = randn([3, 2], { dtype: float64 });
    autocast(CPU, () => {
      expect(a.mm(b).dtype).toBe(float64);
      expect(a.matmul(b).dtype).toBe(float64);
      expect(F.linear(a, b.t()).dtype).toBe(float64);
    });
  });

  it('AC-5/AC-6: tensors of another device type pass through a cpu region', async () => {
    registerFakeBackend();
    const a = randn([2, 2]).to('fake');
    const b = randn([2, 2]).to('fake');
    const out = autocast(CPU, () => {
      const [a2] = castArgs('mm', a);
      expect(a2).toBe(a);
      return a.mm(b);
    });
    expect(out.dtype).toBe(float32);
    expect(out.device.type).toBe('fake');
    expect(isAutocastEnabled('fake')).toBe(false);
    expect(flat(await out.toArray())).toHaveLength(4);
  });
});

describe('AC-7: in-place and unlisted ops', () => {
  it('AC-7: in-place ops in a region are not autocast (f32 stays f32, values unrounded)', () => {
    const x = tensor([1 + 2 ** -12, 3]);
    const y = tensor([1 + 2 ** -13, 1]);
    autocast(CPU, () => {
      x.mul_(y);
      x.add_(y);
      x.div_(tensor([1, 2]));
    });
    expect(x.dtype).toBe(float32);
    const expect0 = Math.fround(Math.fround(Math.fround((1 + 2 ** -12) * (1 + 2 ** -13)) + (1 + 2 ** -13)) / 1);
    expect(vals(x)).toEqual([expect0, 2]);
    expect(roundToBFloat16(expect0)).not.toBe(expect0); // a bf16 kernel would have rounded it
  });

  it('AC-7: an in-place op on a bf16 tensor keeps its dtype (TP-4), whatever the region', () => {
    const h = tensor([1, 2], { dtype: bfloat16 });
    autocast(CPU, () => h.add_(tensor([0.5, 0.5])));
    expect(h.dtype).toBe(bfloat16);
    expect(vals(h)).toEqual([1.5, 2.5]);
  });

  it('AC-7: unlisted ops use normal promotion: add(f16, f32) → f32, add(bf16, bf16) → bf16', () => {
    const h = tensor([1, 2], { dtype: float16 });
    const b = tensor([1, 2], { dtype: bfloat16 });
    const f = tensor([1, 2]);
    autocast(CPU, () => {
      expect(h.add(f).dtype).toBe(float32);
      expect(b.add(f).dtype).toBe(float32);
      expect(b.add(b).dtype).toBe(bfloat16);
      expect(h.add(b).dtype).toBe(float32);
      expect(f.mul(f).dtype).toBe(float32);
      expect(f.relu().dtype).toBe(float32);
    });
  });
});

describe('AC-8: lower_precision_fp on cpu', () => {
  it('AC-8: mm(f32, f32) → bf16, with the inputs rounded to bf16 first', () => {
    // bf16(1 + 2^-9) = 1, so the product is exactly 3 (f32 would give 3.005859375).
    const a = tensor([[1 + 2 ** -9]]);
    const b = tensor([[3]]);
    const out = autocast(CPU, () => a.mm(b));
    expect(out.dtype).toBe(bfloat16);
    expect(vals(out)).toEqual([3]);
    expect(vals(a.mm(b))).toEqual([Math.fround(3 * (1 + 2 ** -9))]);
  });

  it('AC-8: matmul, bmm and mm with a float16 input all run in the region dtype', () => {
    const a = randn([2, 3]);
    const h = randn([3, 2], { dtype: float16 });
    autocast(CPU, () => {
      expect(a.matmul(a.t()).dtype).toBe(bfloat16);
      expect(randn([2, 2, 3]).bmm(randn([2, 3, 2])).dtype).toBe(bfloat16);
      // Every eligible arg goes to the region dtype, whatever it was.
      expect(a.mm(h).dtype).toBe(bfloat16);
    });
    autocast({ deviceType: 'cpu', dtype: float16 }, () => expect(a.mm(h).dtype).toBe(float16));
  });

  it('AC-8: F.linear, F.conv2d and nn.Linear outputs are in the region dtype', () => {
    manualSeed(1);
    const x = randn([4, 3]);
    const w = randn([5, 3]);
    const bias = randn([5]);
    const img = randn([1, 2, 5, 5]);
    const k = randn([3, 2, 3, 3]);
    const kb = randn([3]);
    const layer = new nn.Linear(3, 5);
    autocast(CPU, () => {
      expect(F.linear(x, w, bias).dtype).toBe(bfloat16);
      expect(F.linear(x, w).dtype).toBe(bfloat16);
      expect(F.conv2d(img, k, kb, { padding: 1 }).dtype).toBe(bfloat16);
      expect(layer.forward(x).dtype).toBe(bfloat16);
    });
    autocast({ deviceType: 'cpu', dtype: float16 }, () => {
      expect(F.conv2d(img, k).dtype).toBe(float16);
      expect(layer.forward(x).dtype).toBe(float16);
    });
    // The parameters themselves are untouched.
    expect(layer.weight.dtype).toBe(float32);
    expect(layer.forward(x).dtype).toBe(float32);
  });

  it('AC-8: the bf16 F.linear equals the f32 linear of bf16-rounded operands, rounded once more', () => {
    const x = tensor([[1.1, -2.3, 0.7]]);
    const w = tensor([[0.3, 0.9, -1.7]]);
    const out = autocast(CPU, () => F.linear(x, w));
    const xr = x.to(bfloat16).float();
    const wr = w.to(bfloat16).float();
    const ref = F.linear(xr, wr).to(bfloat16);
    expect(vals(out)).toEqual(vals(ref));
  });
});

describe('AC-9: fp32 ops on cpu, and ops the cpu table leaves unlisted', () => {
  const logits = randn([4, 3], { dtype: bfloat16 });
  const target = tensor([0, 2, 1, 0], { dtype: int32 });

  it('AC-9: crossEntropy, nllLoss, mseLoss and binaryCrossEntropyWithLogits run in f32 on cpu', () => {
    autocast(CPU, () => {
      expect(F.crossEntropy(logits, target).dtype).toBe(float32);
      expect(F.nllLoss(logits.logSoftmax(1), target).dtype).toBe(float32);
      expect(F.mseLoss(logits, logits.mul(2)).dtype).toBe(float32);
      expect(F.binaryCrossEntropyWithLogits(logits, logits.sigmoid()).dtype).toBe(float32);
      expect(F.crossEntropy(logits, target, { reduction: 'none' }).dtype).toBe(float32);
    });
    // Outside a region they keep the input dtype.
    expect(F.mseLoss(logits, logits.mul(2)).dtype).toBe(bfloat16);
  });

  it('AC-9: the f32 loss equals the loss of the input cast to f32 (the cast happens before the op)', () => {
    const inRegion = autocast(CPU, () => F.crossEntropy(logits, target));
    const ref = F.crossEntropy(logits.float(), target);
    expect(vals(inRegion)).toEqual(vals(ref));
  });

  it('AC-9: prod is an fp32 op on cpu', () => {
    autocast(CPU, () => expect(tensor([1, 2, 3], { dtype: bfloat16 }).prod().dtype).toBe(float32));
  });

  it('AC-9: cpu softmax, layerNorm, sum and exp are unlisted: they keep the input dtype', () => {
    const x = randn([2, 4], { dtype: bfloat16 });
    const f = randn([2, 4]);
    autocast(CPU, () => {
      expect(x.softmax(1).dtype).toBe(bfloat16);
      expect(x.logSoftmax(1).dtype).toBe(bfloat16);
      expect(F.layerNorm(x, [4]).dtype).toBe(bfloat16);
      expect(x.sum().dtype).toBe(bfloat16);
      expect(x.exp().dtype).toBe(bfloat16);
      expect(x.log().dtype).toBe(bfloat16);
      expect(x.pow(2).dtype).toBe(bfloat16);
      // And f32 inputs stay f32.
      expect(f.softmax(1).dtype).toBe(float32);
      expect(F.layerNorm(f, [4]).dtype).toBe(float32);
      expect(f.sum().dtype).toBe(float32);
      expect(f.exp().dtype).toBe(float32);
    });
  });

  it('AC-10: the fp32_set_opt_dtype list is cuda-only: sum and softmax keep their input dtype on cpu', () => {
    const x = randn([2, 4], { dtype: float16 });
    autocast({ deviceType: 'cpu', dtype: float16 }, () => {
      expect(x.sum(1).dtype).toBe(float16);
      expect(x.softmax(1).dtype).toBe(float16);
    });
  });
});

describe('AC-12: promote on cpu (cat, stack)', () => {
  const b = tensor([1, 2], { dtype: bfloat16 });
  const f = tensor([3, 4]);
  const h = tensor([5, 6], { dtype: float16 });

  it('AC-12: cat([bf16, f32]) → f32; cat and stack of all-bf16 stay bf16', () => {
    autocast(CPU, () => {
      const c = cat([b, f]);
      expect(c.dtype).toBe(float32);
      expect(vals(c)).toEqual([1, 2, 3, 4]);
      expect(cat([b, b]).dtype).toBe(bfloat16);
      expect(stack([b, b]).dtype).toBe(bfloat16);
      expect(stack([f, b]).dtype).toBe(float32);
      expect(cat([f, f]).dtype).toBe(float32);
    });
  });

  it('AC-12: the walk starts from the region dtype and skips f64 and non-floating tensors', () => {
    const d = tensor([7, 8], { dtype: float64 });
    const i = tensor([9, 10], { dtype: int32 });
    autocast(CPU, () => {
      const [[b2, d2, i2]] = castArgs('cat', [b, d, i]);
      expect(b2).toBe(b);
      expect(d2).toBe(d);
      expect(i2).toBe(i);
      // cat itself then promotes normally: bf16 ∘ f64 = f64.
      expect(cat([b, d]).dtype).toBe(float64);
      expect(cat([b, i]).dtype).toBe(bfloat16);
    });
  });

  it('AC-12: a float16 tensor in a bf16 region raises "Unexpected floating ScalarType in at::autocast::prioritize"', () => {
    // Outside a region cat promotes f16 ∘ bf16 to f32.
    expect(cat([b, h]).dtype).toBe(float32);
    autocast(CPU, () => {
      expectError(() => cat([b, h]), TensorError, 'Unexpected floating ScalarType in at::autocast::prioritize');
      // f32 anywhere wins before the odd dtype is seen, as in PyTorch's walk.
      expect(cat([f, h]).dtype).toBe(float32);
    });
    autocast({ deviceType: 'cpu', dtype: float16 }, () => {
      expect(cat([h, h]).dtype).toBe(float16);
      expectError(() => stack([h, b]), TensorError, 'Unexpected floating ScalarType in at::autocast::prioritize');
    });
  });
});

describe('AC-13: binary_cross_entropy on cpu', () => {
  it('AC-13: on cpu binaryCrossEntropy is an fp32 op, not banned (no F.binaryCrossEntropy exists: checked via autocastOp)', () => {
    const p = tensor([0.25, 0.75], { dtype: bfloat16 });
    const t = tensor([0, 1], { dtype: bfloat16 });
    autocast(CPU, () => {
      const [p2, t2] = castArgs('binaryCrossEntropy', p, t);
      expect(p2.dtype).toBe(float32);
      expect(t2.dtype).toBe(float32);
    });
  });
});

describe('AC-14: autograd through autocast', () => {
  it('AC-14: an f32 leaf weight used in an autocast mm gets an f32 grad; activation grads are bf16', () => {
    const x = tensor([[1, 2], [3, 4]], { requiresGrad: true });
    const w = tensor([[0.5, -1], [2, 0.25]], { requiresGrad: true });
    const y = autocast(CPU, () => x.mm(w));
    expect(y.dtype).toBe(bfloat16);
    y.retainGrad();
    const loss = y.sum();
    expect(loss.dtype).toBe(bfloat16); // sum is unlisted on cpu
    loss.backward();
    expect(y.grad!.dtype).toBe(bfloat16);
    expect(w.grad!.dtype).toBe(float32);
    expect(x.grad!.dtype).toBe(float32);
    // d(sum(x·w))/dw = xᵀ·1, computed in bf16 (exact for these values) and cast to f32.
    expect(vals(w.grad!)).toEqual([4, 4, 6, 6]);
    expect(vals(x.grad!)).toEqual([-0.5, 2.25, -0.5, 2.25]);
  });

  it('AC-14: backward called inside a region runs without autocast (same grads as outside)', () => {
    const make = () => [tensor([[1.5, -2], [0.25, 3]], { requiresGrad: true }), tensor([[0.5, 1], [-1, 2]], { requiresGrad: true })] as const;
    const [x1, w1] = make();
    autocast(CPU, () => F.crossEntropy(x1.mm(w1), tensor([0, 1], { dtype: int32 }))).backward();
    const [x2, w2] = make();
    const loss2 = autocast(CPU, () => F.crossEntropy(x2.mm(w2), tensor([0, 1], { dtype: int32 })));
    autocast(CPU, () => loss2.backward());
    expect(w2.grad!.dtype).toBe(float32);
    expect(vals(w2.grad!)).toEqual(vals(w1.grad!));
    expect(vals(x2.grad!)).toEqual(vals(x1.grad!));
  });

  it('AC-14: outputs keep their autocast dtype after the region, and mixing them with f32 in mm fails as in TP-5', () => {
    const a = randn([2, 2]);
    const y = autocast(CPU, () => a.mm(a));
    expect(y.dtype).toBe(bfloat16);
    expect(y.add(1).dtype).toBe(bfloat16);
    expectError(() => y.mm(a), DTypeError, 'expected self and mat2 to have the same dtype, but got: bfloat16 != float32');
    expectError(() => F.linear(y, a), DTypeError, 'linear');
  });
});

describe('AC-15: the cast cache', () => {
  it('AC-15: the same cast object is returned for an f32 requiresGrad leaf within a region', () => {
    const w = randn([2, 3], { requiresGrad: true });
    autocast(CPU, () => {
      const [c1] = castArgs('mm', w);
      const [c2] = castArgs('linear', w);
      expect(c1.dtype).toBe(bfloat16);
      expect(c2).toBe(c1);
      expect(c1.requiresGrad).toBe(true);
      expect(c1.gradFn).not.toBe(null);
    });
  });

  it('AC-15: the cached cast stays stale after an in-place edit of the source until the outermost region exits', () => {
    const w = tensor([1, 2], { requiresGrad: true });
    let stale!: Tensor;
    autocast(CPU, () => {
      [stale] = castArgs('mm', w);
      noGrad(() => w.mul_(3));
      expect(vals(w)).toEqual([3, 6]);
      const [again] = castArgs('mm', w);
      expect(again).toBe(stale);
      expect(vals(again)).toEqual([1, 2]);
      autocast(CPU, () => expect(vals(castArgs('mm', w)[0])).toEqual([1, 2]));
    });
    autocast(CPU, () => {
      const [fresh] = castArgs('mm', w);
      expect(fresh).not.toBe(stale);
      expect(vals(fresh)).toEqual([3, 6]);
    });
  });

  it('AC-15: non-leaf and non-requiresGrad tensors are never cached', () => {
    const leaf = randn([2], { requiresGrad: true });
    const plain = randn([2]);
    autocast(CPU, () => {
      const nonLeaf = leaf.mul(2);
      expect(castArgs('mm', nonLeaf)[0]).not.toBe(castArgs('mm', nonLeaf)[0]);
      expect(castArgs('mm', plain)[0]).not.toBe(castArgs('mm', plain)[0]);
    });
  });

  it('AC-15: casts to f32 are never cached; nor are casts of non-f32 sources', () => {
    const hLeaf = tensor([0.5, 0.25], { dtype: bfloat16, requiresGrad: true });
    const fLeaf = tensor([0.5, 0.25], { dtype: float16, requiresGrad: true });
    autocast(CPU, () => {
      const [a] = castArgs('mseLoss', hLeaf);
      const [b] = castArgs('mseLoss', hLeaf);
      expect(a.dtype).toBe(float32);
      expect(a).not.toBe(b);
      // f16 → bf16 (the region dtype): the source is not f32, so no cache.
      expect(castArgs('mm', fLeaf)[0]).not.toBe(castArgs('mm', fLeaf)[0]);
    });
  });

  it('AC-15: cacheEnabled: false turns caching off for a region; the default follows isAutocastCacheEnabled()', () => {
    const w = randn([2], { requiresGrad: true });
    autocast({ deviceType: 'cpu', cacheEnabled: false }, () => {
      expect(castArgs('mm', w)[0]).not.toBe(castArgs('mm', w)[0]);
    });
    setAutocastCacheEnabled(false);
    try {
      autocast(CPU, () => {
        expect(isAutocastCacheEnabled()).toBe(false);
        expect(castArgs('mm', w)[0]).not.toBe(castArgs('mm', w)[0]);
      });
    } finally {
      setAutocastCacheEnabled(true);
    }
  });

  it('AC-15: the cache serves real ops: an nn.Linear used twice in a region casts its weight once', () => {
    const layer = new nn.Linear(3, 2);
    const x = randn([4, 3]);
    autocast(CPU, () => {
      const [w1] = castArgs('linear', layer.weight);
      const y = layer.forward(layer.forward(x).mm(randn([2, 3])));
      expect(y.dtype).toBe(bfloat16);
      expect(castArgs('linear', layer.weight)[0]).toBe(w1);
    });
  });
});

describe('AC-16', () => {
  it.skip('AC-16: custom_fwd / custom_bwd — not applicable: the library has no custom autograd Function API', () => {});
});

describe('third-party policy tables (registerAutocastPolicy)', () => {
  const FAKE_TABLE: AutocastPolicyTable = {
    defaultDtype: float16,
    allowedDtypes: [float16, bfloat16],
    lowerPrecision: ['mm', 'linear'],
    fp32: ['exp'],
    fp32FirstArg: ['sum'],
    promote: ['cat'],
    banned: { softmax: 'softmax is unsafe to autocast on fake' },
  };

  it('a device type without a table is refused; a table whose default is not allowed is refused', () => {
    registerFakeBackend();
    expectError(() => autocast({ deviceType: 'fake' }), ValueError, "User specified an unsupported autocast device_type 'fake'");
    expectError(() => registerAutocastPolicy('fake', { ...FAKE_TABLE, allowedDtypes: [bfloat16] }), ValueError, 'default dtype float16');
    expectError(() => registerAutocastPolicy('', FAKE_TABLE), ValueError, 'non-empty string');
  });

  it('the fake device type follows its own table, and cpu tensors pass through its regions', async () => {
    registerFakeBackend();
    registerAutocastPolicy('fake', FAKE_TABLE);
    expect(getAutocastDtype('fake')).toBe(float16);
    const a = randn([2, 2]).to('fake');
    const c = randn([2, 2]);
    const h = randn([2, 2], { dtype: float16 }).to('fake');
    const b = randn([2, 2], { dtype: bfloat16 }).to('fake');
    const out = autocast({ deviceType: 'fake' }, () => {
      expect(isAutocastEnabled('fake')).toBe(true);
      expect(isAutocastEnabled('cpu')).toBe(false);
      expect(h.exp().dtype).toBe(float32);
      expect(h.sum().dtype).toBe(float32);
      expect(h.sum(null, false, { dtype: float16 }).dtype).toBe(float16);
      expect(cat([h, a]).dtype).toBe(float32);
      expectError(() => cat([h, b]), TensorError, 'Unexpected floating ScalarType in at::autocast::prioritize');
      expectError(() => h.softmax(0), TensorError, 'softmax is unsafe to autocast on fake');
      expect(c.mm(c).dtype).toBe(float32); // cpu tensors: not this region's type
      return a.mm(a);
    });
    expect(out.dtype).toBe(float16);
    expect(out.device.type).toBe('fake');
    expect(flat(await out.toArray())).toHaveLength(4);
    expect(autocast({ deviceType: 'fake', dtype: bfloat16 }, () => a.mm(a)).dtype).toBe(bfloat16);
    expect(isAutocastEnabled('fake')).toBe(false);
  });
});

describe('a training step under cpu bf16 autocast', () => {
  it('nn.Linear + F.crossEntropy + SGD: finite f32 loss, f32 grads, parameters updated', async () => {
    manualSeed(0);
    const model = new nn.Sequential(new nn.Linear(6, 8), new nn.ReLU(), new nn.Linear(8, 3));
    const optimizer = new SGD(model.parameters(), { lr: 0.1 });
    const x = randn([16, 6]);
    const y = randint(0, 3, [16]);
    const before = model.parameters().map((p) => vals(p));
    const losses: number[] = [];
    for (let step = 0; step < 5; step++) {
      const loss = autocast(CPU, () => {
        const logits = model.forward(x);
        expect(logits.dtype).toBe(bfloat16);
        return F.crossEntropy(logits, y);
      });
      expect(loss.dtype).toBe(float32);
      optimizer.zeroGrad();
      loss.backward();
      for (const p of model.parameters()) {
        expect(p.dtype).toBe(float32);
        expect(p.grad!.dtype).toBe(float32);
        expect(vals(p.grad!).every(Number.isFinite)).toBe(true);
      }
      await optimizer.step();
      losses.push(await loss.item());
    }
    expect(losses.every(Number.isFinite)).toBe(true);
    expect(losses[4]!).toBeLessThan(losses[0]!);
    model.parameters().forEach((p, i) => expect(vals(p)).not.toEqual(before[i]));
  });
});
