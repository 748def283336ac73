// Tensor.registerHook (PyTorch 1.13's Tensor.register_hook) and retainGrad: hooks on leaves run
// before accumulation into .grad, on non-leaves on the whole gradient before it flows on; a
// returned tensor replaces the gradient; handles remove hooks; hooks and retainGrad run in
// registration order; autograd.grad returns the gradient an input received before its own hooks;
// PyTorch's errors.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import { autograd, float32, float64, tensor, TensorError, type Tensor } from '@core/tensor';
import { expectError } from '../helpers/assert.js';
import { registerFakeBackend } from '../helpers/fake-backend.js';

registerFakeBackend();

const vals = (t: Tensor | null | undefined): number[] => {
  expect(t, 'a tensor').toBeTruthy();
  return Array.from(t!.dataSync());
};
const leaf = (data: number[]): Tensor => tensor(data, { dtype: float64 }).requiresGrad_();

describe('registerHook on a leaf', () => {
  it('sees the gradient before it is added to .grad, and can replace it', () => {
    const x = leaf([1, 2]);
    const seen: number[][] = [];
    x.registerHook((g) => { seen.push(vals(g)); });
    x.registerHook((g) => g.mul(10));
    x.mul(3).sum().backward();
    expect(seen).toEqual([[3, 3]]);
    expect(vals(x.grad)).toEqual([30, 30]);
  });

  it('runs once per backward with the summed gradient of every use', () => {
    // torch 1.13: x.register_hook(...); (x*2 + x*3).sum().backward() calls it once, with [5, 5].
    const x = leaf([1, 2]);
    const seen: number[][] = [];
    x.registerHook((g) => { seen.push(vals(g)); });
    x.mul(2).add(x.mul(3)).sum().backward();
    expect(seen).toEqual([[5, 5]]);
    expect(vals(x.grad)).toEqual([5, 5]);
  });

  it('remove() unregisters it; a second remove() does nothing; `using` removes at the end of the block', () => {
    const x = leaf([1]);
    const handle = x.registerHook((g) => g.mul(100));
    handle.remove();
    handle.remove();
    x.mul(2).sum().backward();
    expect(vals(x.grad)).toEqual([2]);
    x.grad = null;
    {
      using _h = x.registerHook((g) => g.mul(-1));
      x.mul(2).sum().backward();
    }
    expect(vals(x.grad)).toEqual([-2]);
    x.mul(2).sum().backward();
    expect(vals(x.grad)).toEqual([0]);
  });
});

describe('registerHook on a non-leaf', () => {
  it('runs on the whole gradient that reached the tensor, and its result flows on', () => {
    const x = leaf([1, 2]);
    const h = x.mul(2);
    const seen: number[][] = [];
    h.registerHook((g) => {
      seen.push(vals(g));
      return g.mul(10);
    });
    h.mul(3).add(h).sum().backward(); // ∂/∂h = 3 + 1
    expect(seen).toEqual([[4, 4]]);
    expect(vals(x.grad)).toEqual([80, 80]);
  });

  it('is not called when no gradient reaches the tensor', () => {
    const x = leaf([1]);
    const unused = x.mul(5);
    let called = false;
    unused.registerHook(() => { called = true; });
    x.mul(2).sum().backward();
    expect(called).toBe(false);
  });

  it('hooks on the outputs of a several-output autograd.Function see their own output\'s gradient', () => {
    class Split extends autograd.Function {
      static forward(_ctx: autograd.FunctionCtx, x: Tensor): Tensor[] { return [x.mul(1), x.mul(1)]; }
      static backward(_ctx: autograd.FunctionCtx, ga: Tensor, gb: Tensor): Tensor { return ga.add(gb); }
    }
    const x = leaf([1]);
    const [a, b] = Split.apply(x);
    const seen: string[] = [];
    a!.registerHook((g) => { seen.push(`a:${vals(g)}`); });
    b!.registerHook((g) => {
      seen.push(`b:${vals(g)}`);
      return g.mul(100);
    });
    a!.mul(2).add(b!.mul(3)).sum().backward();
    expect(seen.sort()).toEqual(['a:2', 'b:3']);
    expect(vals(x.grad)).toEqual([302]);
  });
});

describe('hooks and retainGrad: registration order (PyTorch 1.13)', () => {
  // torch 1.13: b = a*2; b.retain_grad(); b.register_hook(lambda g: g*10); (b*3).sum().backward()
  //   → b.grad = [3, 3], a.grad = [60, 60]; with the hook registered first, b.grad = [30, 30].
  it('retainGrad before a hook keeps the gradient the hook was given', () => {
    const a = leaf([1, 2]);
    const b = a.mul(2);
    b.retainGrad();
    b.registerHook((g) => g.mul(10));
    b.mul(3).sum().backward();
    expect(vals(b.grad)).toEqual([3, 3]);
    expect(vals(a.grad)).toEqual([60, 60]);
  });

  it('retainGrad after a hook keeps the hook\'s result', () => {
    const a = leaf([1, 2]);
    const b = a.mul(2);
    b.registerHook((g) => g.mul(10));
    b.retainGrad();
    b.retainGrad(); // once only
    b.mul(3).sum().backward();
    expect(vals(b.grad)).toEqual([30, 30]);
    expect(vals(a.grad)).toEqual([60, 60]);
  });
});

describe('hooks under autograd.grad (PyTorch 1.13)', () => {
  // torch 1.13: a leaf's hook and a non-leaf input's own hook do not change the gradient returned
  // for it; a hook on the way to an input does.
  it('an input\'s own hook is not applied to the gradient returned for it', () => {
    const a = leaf([1, 2]);
    a.registerHook((g) => g.mul(10));
    expect(vals(autograd.grad(a.mul(3).sum(), a)[0])).toEqual([3, 3]);
    const b = leaf([1, 2]).mul(2);
    b.registerHook((g) => g.mul(10));
    expect(vals(autograd.grad(b.mul(3).sum(), b)[0])).toEqual([3, 3]);
  });

  it('a hook on a tensor between the output and the input is applied', () => {
    const a = leaf([1, 2]);
    const b = a.mul(2);
    b.registerHook((g) => g.mul(10));
    expect(vals(autograd.grad(b.mul(3).sum(), a)[0])).toEqual([60, 60]);
  });

  it('retainGrad still fills .grad of a tensor on the path; leaves\' .grad stays null', () => {
    const a = leaf([1, 2]);
    const b = a.mul(2);
    b.retainGrad();
    autograd.grad(b.mul(3).sum(), a);
    expect(vals(b.grad)).toEqual([3, 3]);
    expect(a.grad).toBeNull();
  });
});

describe('registerHook errors', () => {
  it('a tensor that does not require grad', () => {
    expectError(() => tensor([1]).registerHook(() => undefined), TensorError, "cannot register a hook on a tensor that doesn't require gradient");
  });

  it('a hook that changes the size, dtype or device of the gradient names the hook', () => {
    const x = leaf([1, 2]);
    x.registerHook(function myhook() { return tensor([1, 1, 1], { dtype: float64 }); });
    expectError(() => x.mul(2).sum().backward(), TensorError, "hook 'myhook' has changed the size of value", 'was [2], got [3]');
    expect(x.grad, 'nothing accumulated').toBeNull();
    const y = leaf([1, 2]).mul(1);
    const toFloat = (g: Tensor) => g.to(float32);
    y.registerHook(toFloat);
    expectError(() => y.sum().backward(), TensorError, "hook 'toFloat' has changed the type of value", 'was float64, got float32');
    const z = leaf([1]);
    z.registerHook(function moved(g) { return g.to('fake'); });
    expectError(() => z.mul(2).sum().backward(), TensorError, "hook 'moved' has changed the device of value", 'was cpu, got fake');
  });

  it('a hook that returns something other than a tensor, or is not a function', () => {
    const x = leaf([1]);
    x.registerHook(function numeric() { return 3 as unknown as Tensor; });
    expectError(() => x.mul(2).sum().backward(), TypeError, "hook 'numeric' returned number");
    expectError(() => x.registerHook(null as never), TypeError, 'hook must be a function');
  });
});
