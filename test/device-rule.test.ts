// The same-device rule (spec §2, SD-1..SD-5, SD-8) across the cpu backend and the GPU-like 'fake'
// test backend (two devices, async reads only).
import '@core/backend-cpu';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cat, DeviceMismatchError, float16, float32, int32, setCreationSiteTracking, stack, tensor, TensorError, where, zeros,
  type Tensor,
} from '@core/tensor';
import { registerFakeBackend } from './helpers/fake-backend.js';
import { expectClose, expectError, flat, here } from './helpers/assert.js';

registerFakeBackend();

const SAME_DEVICE = 'Expected all tensors to be on the same device, but found at least two devices,';

async function values(t: Tensor): Promise<number[]> {
  return flat(await t.toArray());
}

function mismatch(fn: () => unknown, devices: string, argument: string, op: string): DeviceMismatchError {
  const e = expectError(fn, DeviceMismatchError, `${SAME_DEVICE} ${devices}!`, `(when checking argument for argument ${argument} in method ${op})`);
  const [expected, got] = devices.split(' and ');
  expect(e.op).toBe(op);
  expect(e.argument).toBe(argument);
  expect(e.expected).toBe(expected);
  expect(e.got).toBe(got);
  expect(e).toBeInstanceOf(TensorError);
  expect(e.name).toBe('DeviceMismatchError');
  return e;
}

afterEach(() => setCreationSiteTracking(true));

describe('SD-1: the common device of elementwise ops', () => {
  it('SD-1/DEV-6: fake:0 ⊕ fake:0 runs on fake:0 and cpu ⊕ cpu on cpu, with the right values', async () => {
    const a = tensor([1, 2, 3], { device: 'fake' });
    const b = tensor([10, 20, 30], { device: 'fake:0' });
    const r = a.add(b);
    expect(r.device.toString()).toBe('fake:0');
    expect(await values(r)).toEqual([11, 22, 33]);
    const c = tensor([1, 2]).mul(tensor([3, 4]));
    expect(c.device.toString()).toBe('cpu');
    expect(c.dataSync()).toEqual(new Float32Array([3, 8]));
  });

  it('SD-1: ops on fake:1 stay on fake:1', async () => {
    const a = tensor([1, 2], { device: 'fake:1' });
    const r = a.mul(a).sub(1);
    expect(r.device.toString()).toBe('fake:1');
    expect(await values(r)).toEqual([0, 3]);
  });

  it('SD-4: Python numbers (JS numbers) are never device-checked', async () => {
    const a = tensor([1, 2], { device: 'fake' });
    expect(await values(a.add(1).mul(2).clamp(0, 5))).toEqual([4, 5]);
  });
});

describe('SD-2: a mixed-device elementwise op throws DeviceMismatchError', () => {
  it('SD-2: fake:0 + cpu reads "fake:0 and cpu!", names add, the argument "other", and has a .to() hint', () => {
    const f = tensor([1, 2, 3], { device: 'fake' });
    const c = tensor([1, 2, 3]);
    const e = mismatch(() => f.add(c), 'fake:0 and cpu', 'other', 'add');
    expect(e.message).toContain(".to('fake:0')");
  });

  it('SD-2: cpu + fake:0 (the other operand order) also reads "fake:0 and cpu!" and names "self"', () => {
    const f = tensor([1, 2, 3], { device: 'fake' });
    const c = tensor([1, 2, 3]);
    const e = mismatch(() => c.add(f), 'fake:0 and cpu', 'self', 'add');
    expect(e.message).toContain("`self.to('fake:0')`");
  });

  it('SD-2: the error names where the stray tensor was created (this file and line)', () => {
    const f = tensor([1, 2, 3], { device: 'fake' });
    const [stray, at] = [tensor([4, 5, 6]), here()];
    expect(at.file).toMatch(/device-rule\.test\.ts$/);
    for (const fn of [() => f.add(stray), () => stray.mul(f)]) {
      const e = expectError(fn, DeviceMismatchError);
      expect(e.createdAt).toBeDefined();
      expect(e.createdAt).toMatch(new RegExp(`device-rule\\.test\\.ts:${at.line}:\\d+$`));
      expect(e.message).toContain(`the cpu tensor was created at ${e.createdAt}`);
    }
  });

  it('SD-2: the creation site is the user line even for tensors made by ops and factories', () => {
    const f = zeros([3], { device: 'fake' });
    const [stray, at] = [tensor([1, 2, 3]).mul(2).exp(), here()];
    const e = expectError(() => f.sub(stray), DeviceMismatchError);
    expect(e.createdAt).toMatch(new RegExp(`device-rule\\.test\\.ts:${at.line}:\\d+$`));
  });

  it('SD-2: an op\'s result names the line where its input was created (ops inherit the site instead of capturing a stack)', () => {
    const f = zeros([3], { device: 'fake' });
    const [stray, at] = [tensor([1, 2, 3]), here()];
    const derived = stray.mul(2).exp().reshape([3]).to(float32);
    const e = expectError(() => f.add(derived), DeviceMismatchError);
    expect(e.createdAt).toMatch(new RegExp(`device-rule\\.test\\.ts:${at.line}:\\d+$`));
    // Moving to another device is a creation: the copy names the .to() line.
    const [moved, movedAt] = [stray.to('fake:1'), here()];
    expect(expectError(() => f.add(moved.mul(1)), DeviceMismatchError).createdAt).toMatch(new RegExp(`device-rule\\.test\\.ts:${movedAt.line}:\\d+$`));
  });

  it('SD-2: gradients inherit the creation site of the tensor backward() starts from, like an op\'s results (no stack capture per backward)', () => {
    const f = zeros([3], { device: 'fake' });
    const [w, at] = [tensor([1, 2, 3], { requiresGrad: true }), here()];
    const loss = w.mul(w).sum();
    loss.backward();
    const e = expectError(() => f.add(w.grad!), DeviceMismatchError);
    expect(e.createdAt).toMatch(new RegExp(`device-rule\\.test\\.ts:${at.line}:\\d+$`));
    // The loss's site is its first input's: a batch moved with .to() names that line.
    const [x, movedAt] = [tensor([1, 2, 3]).to('fake:1'), here()];
    const v = tensor([1, 2, 3], { device: 'fake:1', requiresGrad: true });
    x.mul(v).sum().backward();
    expect(expectError(() => f.add(v.grad!), DeviceMismatchError).createdAt).toMatch(new RegExp(`device-rule\\.test\\.ts:${movedAt.line}:\\d+$`));
    // After backward, factories capture their own line again.
    const [stray, next] = [tensor([1, 2, 3]), here()];
    expect(expectError(() => f.add(stray), DeviceMismatchError).createdAt).toMatch(new RegExp(`device-rule\\.test\\.ts:${next.line}:\\d+$`));
  });

  it('SD-2: sub, mul, div, maximum, pow and comparisons name their own op', () => {
    const f = tensor([1, 2], { device: 'fake' });
    const c = tensor([1, 2]);
    mismatch(() => f.sub(c), 'fake:0 and cpu', 'other', 'sub');
    mismatch(() => f.mul(c), 'fake:0 and cpu', 'other', 'mul');
    mismatch(() => c.div(f), 'fake:0 and cpu', 'self', 'div');
    mismatch(() => f.maximum(c), 'fake:0 and cpu', 'other', 'maximum');
    mismatch(() => f.pow(c), 'fake:0 and cpu', 'other', 'pow');
    mismatch(() => f.lt(c), 'fake:0 and cpu', 'other', 'lt');
    mismatch(() => c.eq(f), 'fake:0 and cpu', 'self', 'eq');
  });

  it('SD-2: where names condition / input / other', () => {
    const fc = tensor([true, false], { device: 'fake' });
    const cc = tensor([true, false]);
    const f = tensor([1, 2], { device: 'fake' });
    const c = tensor([3, 4]);
    mismatch(() => where(cc, f, f), 'fake:0 and cpu', 'condition', 'where');
    mismatch(() => where(fc, c, f), 'fake:0 and cpu', 'input', 'where');
    mismatch(() => where(fc, f, c), 'fake:0 and cpu', 'other', 'where');
  });

  it('SD-2: fake:0 with fake:1 is a mismatch too, named in operand order', () => {
    const a = tensor([1, 2], { device: 'fake:0' });
    const b = tensor([1, 2], { device: 'fake:1' });
    mismatch(() => a.add(b), 'fake:0 and fake:1', 'other', 'add');
    mismatch(() => b.add(a), 'fake:1 and fake:0', 'other', 'add');
  });

  it('SD-2: a mismatch happens before broadcasting or dtype checks and leaves the inputs unchanged', async () => {
    const f = tensor([1, 2, 3], { device: 'fake' });
    const c = tensor([[1, 2], [3, 4]], { dtype: int32 });
    mismatch(() => f.add(c), 'fake:0 and cpu', 'other', 'add');
    expect(await values(f)).toEqual([1, 2, 3]);
    expect(Array.from(c.dataSync())).toEqual([1, 2, 3, 4]);
  });

  it('setCreationSiteTracking(false): createdAt is undefined and the message has no site', () => {
    setCreationSiteTracking(false);
    const f = tensor([1], { device: 'fake' });
    const stray = tensor([[1, 2]]);
    const e = mismatch(() => f.add(stray), 'fake:0 and cpu', 'other', 'add');
    expect(e.createdAt).toBeUndefined();
    expect(e.message).not.toContain('created at');
    setCreationSiteTracking(true);
    const tracked = tensor([[1, 2]]);
    expect(expectError(() => f.add(tracked), DeviceMismatchError).createdAt).toMatch(/device-rule\.test\.ts:\d+:\d+$/);
  });
});

describe('SD-3: one 0-dim CPU tensor rides along as a scalar', () => {
  it('SD-3: fake[n] + cpu 0-dim works in both operand orders and the result stays on fake:0', async () => {
    const f = tensor([1, 2, 3], { device: 'fake' });
    const s = tensor(10);
    expect(s.ndim).toBe(0);
    const r1 = f.add(s);
    const r2 = s.sub(f);
    expect(r1.device.toString()).toBe('fake:0');
    expect(r2.device.toString()).toBe('fake:0');
    expect(await values(r1)).toEqual([11, 12, 13]);
    expect(await values(r2)).toEqual([9, 8, 7]);
  });

  it('SD-3 + TP-2: the CPU scalar counts as a 0-dim tensor in promotion (f16[n] on fake + f32 0-dim cpu → f16)', async () => {
    const f = tensor([1, 2049], { device: 'fake', dtype: float16 });
    const r = f.mul(tensor(1, { dtype: float32 }));
    expect(r.dtype).toBe(float16);
    expect(r.device.toString()).toBe('fake:0');
    expect(await values(r)).toEqual([1, 2048]);
    // an int32 0-dim CPU tensor with a float tensor on fake:1
    const g = tensor([0.5], { device: 'fake:1' }).add(tensor(2, { dtype: int32 }));
    expect(g.device.toString()).toBe('fake:1');
    expect(g.dtype).toBe(float32);
    expect(await values(g)).toEqual([2.5]);
  });

  it('SD-3: where(fakeCond, cpu0dim, fake) works; a fake 0-dim with fake operands too', async () => {
    const cond = tensor([true, false, true], { device: 'fake' });
    const r = where(cond, tensor(7), tensor([1, 2, 3], { device: 'fake' }));
    expect(r.device.toString()).toBe('fake:0');
    expect(await values(r)).toEqual([7, 2, 7]);
    const r2 = tensor([1, 2], { device: 'fake' }).mul(tensor(3, { device: 'fake' }));
    expect(await values(r2)).toEqual([3, 6]);
  });

  it('SD-3: a 0-dim CPU tensor as a clamp bound of a fake tensor works', async () => {
    const r = tensor([-5, 0, 5], { device: 'fake' }).clamp(tensor(-1), tensor(1));
    expect(r.device.toString()).toBe('fake:0');
    expect(await values(r)).toEqual([-1, 0, 1]);
  });

  it('SD-3: two 0-dim CPU tensors with a fake tensor → "Trying to pass too many CPU scalars to non-CPU kernel!"', () => {
    const cond = tensor([true, false], { device: 'fake' });
    const e = expectError(() => where(cond, tensor(1), tensor(2)), TensorError, 'Trying to pass too many CPU scalars to non-CPU kernel!');
    expect(e).not.toBeInstanceOf(DeviceMismatchError);
  });

  it('SD-3: all-CPU ops with 0-dim tensors are ordinary CPU ops', () => {
    const r = where(tensor([true, false]), tensor(1), tensor(2));
    expect(r.device.toString()).toBe('cpu');
    expect(Array.from(r.dataSync())).toEqual([1, 2]);
  });
});

describe('SD-4: no exemption for outputs, non-0-dim CPU tensors or 0-dim accelerator tensors', () => {
  it('SD-4: cpu0dim.add_(fakeTensor) fails (in-place target), naming self, and leaves the target unchanged', () => {
    const target = tensor(5);
    const f = tensor(1, { device: 'fake' });
    mismatch(() => target.add_(f), 'fake:0 and cpu', 'self', 'add_');
    expect(Array.from(target.dataSync())).toEqual([5]);
    const f3 = tensor([1, 2, 3], { device: 'fake' });
    expectError(() => target.mul_(f3), DeviceMismatchError, 'fake:0 and cpu!');
    expect(Array.from(target.dataSync())).toEqual([5]);
  });

  it('SD-4: fake.add_(cpu0dim) is allowed (the CPU scalar is an input)', async () => {
    const f = tensor([1, 2], { device: 'fake' });
    expect(f.add_(tensor(3))).toBe(f);
    expect(await values(f)).toEqual([4, 5]);
  });

  it('SD-4: a 0-dim fake tensor with a non-0-dim CPU tensor fails, both orders', () => {
    const f0 = tensor(2, { device: 'fake' });
    const c = tensor([1, 2, 3]);
    mismatch(() => f0.add(c), 'fake:0 and cpu', 'other', 'add');
    mismatch(() => c.add(f0), 'fake:0 and cpu', 'self', 'add');
  });

  it('SD-4: a non-0-dim CPU tensor of one element is not a scalar', () => {
    const f = tensor([1, 2], { device: 'fake' });
    mismatch(() => f.add(tensor([1])), 'fake:0 and cpu', 'other', 'add');
  });
});

describe('SD-5: schema-checked ops (matmul, mm, bmm, cat, stack, gather, scatterAdd, indexSelect)', () => {
  const fm = () => tensor([[1, 2], [3, 4]], { device: 'fake' });
  const cm = () => tensor([[1, 0], [0, 1]]);

  it('SD-5: matmul names "other", mm and bmm name "mat2"; the first tensor argument decides', () => {
    mismatch(() => fm().matmul(cm()), 'fake:0 and cpu', 'other', 'matmul');
    mismatch(() => cm().matmul(fm()), 'cpu and fake:0', 'other', 'matmul');
    mismatch(() => fm().mm(cm()), 'fake:0 and cpu', 'mat2', 'mm');
    mismatch(() => cm().mm(fm()), 'cpu and fake:0', 'mat2', 'mm');
    mismatch(() => fm().reshape([1, 2, 2]).bmm(cm().reshape([1, 2, 2])), 'fake:0 and cpu', 'mat2', 'bmm');
  });

  it('SD-5: cat names "tensors[i]" of the first stray tensor; stack goes through cat', () => {
    const f = tensor([1, 2], { device: 'fake' });
    const c = tensor([3, 4]);
    mismatch(() => cat([f, c]), 'fake:0 and cpu', 'tensors[1]', 'cat');
    mismatch(() => cat([f, f, c, c]), 'fake:0 and cpu', 'tensors[2]', 'cat');
    mismatch(() => cat([c, f]), 'cpu and fake:0', 'tensors[1]', 'cat');
    mismatch(() => cat([f, tensor([1], { device: 'fake:1' })]), 'fake:0 and fake:1', 'tensors[1]', 'cat');
    expectError(() => stack([f, c]), DeviceMismatchError, `${SAME_DEVICE} fake:0 and cpu!`, 'tensors[1]');
  });

  it('SD-5: gather, indexSelect and scatterAdd name "index" / "src"', () => {
    const x = fm();
    const idx = tensor([[0], [1]], { dtype: int32 });
    mismatch(() => x.gather(1, idx), 'fake:0 and cpu', 'index', 'gather');
    mismatch(() => x.indexSelect(0, tensor([1], { dtype: int32 })), 'fake:0 and cpu', 'index', 'indexSelect');
    const fidx = tensor([[0], [1]], { dtype: int32, device: 'fake' });
    mismatch(() => x.scatterAdd(1, fidx, tensor([[1], [1]])), 'fake:0 and cpu', 'src', 'scatterAdd');
  });

  it('SD-5: no CPU-scalar exemption: a 0-dim CPU tensor fails with a DeviceMismatchError, not a shape error', () => {
    const f = tensor([1, 2, 3], { device: 'fake' });
    mismatch(() => f.matmul(tensor(2)), 'fake:0 and cpu', 'other', 'matmul');
    mismatch(() => f.gather(0, tensor(1, { dtype: int32 })), 'fake:0 and cpu', 'index', 'gather');
    mismatch(() => cat([f.reshape([3, 1]), tensor(1).reshape([1, 1])]), 'fake:0 and cpu', 'tensors[1]', 'cat');
  });

  it('SD-5: the same ops on one device work', async () => {
    const r = fm().matmul(tensor([[1, 0], [0, 1]], { device: 'fake' }));
    expect(r.device.toString()).toBe('fake:0');
    expect(await values(r)).toEqual([1, 2, 3, 4]);
    const g = fm().gather(1, tensor([[1], [0]], { dtype: int32, device: 'fake' }));
    expect(await values(g)).toEqual([2, 3]);
    const c = cat([tensor([1], { device: 'fake' }), tensor([2, 3], { device: 'fake' })]);
    expect(await values(c)).toEqual([1, 2, 3]);
  });
});

describe('SD-8: copy_ and .to() cross devices', () => {
  it('SD-8: fakeDst.copy_(cpuSrc) copies across devices, broadcasting and casting', async () => {
    const dst = zeros([2, 3], { device: 'fake', dtype: float16 });
    const ret = dst.copy_(tensor([1.5, 2049, -3]));
    expect(ret).toBe(dst);
    expect(dst.device.toString()).toBe('fake:0');
    expect(dst.dtype).toBe(float16);
    expect(await values(dst)).toEqual([1.5, 2048, -3, 1.5, 2048, -3]);
  });

  it('SD-8: copy_ into a fake:1 view writes through to its base', async () => {
    const base = zeros([2, 2], { device: 'fake:1' });
    base.select(0, 1).copy_(tensor([7, 8]));
    expect(await values(base)).toEqual([0, 0, 7, 8]);
  });

  it('SD-8: cpuDst.copy_(fakeSrc) needs an async read on this backend: a clear error that says to await, target unchanged', () => {
    const dst = zeros([2]);
    const src = tensor([1, 2], { device: 'fake' });
    expectError(() => dst.copy_(src), TensorError, 'toAsync');
    expect(Array.from(dst.dataSync())).toEqual([0, 0]);
  });

  it('SD-8: a moved tensor (.to) can then be combined', async () => {
    const f = tensor([1, 2], { device: 'fake' });
    const c = tensor([10, 20]);
    const r = f.add(c.to('fake'));
    expect(await values(r)).toEqual([11, 22]);
    const back = await r.toAsync('cpu');
    expectClose(back.add(c).dataSync(), [21, 42]);
  });
});
