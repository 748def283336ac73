// Module hooks against PyTorch 1.13: forward pre-hooks and forward hooks (order, replacement of
// arguments and output, removal), and full backward hooks (gradInput and gradOutput on a Linear,
// replacement of gradInput, one entry per argument and output, and PyTorch's errors).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { float64, noGrad, ones, TensorError, type Tensor } from '@core/tensor';
import { nn } from '../src/index.js';
import { expectClose, values } from './helpers.js';
import { seq } from './sine-inputs.js';

/** reference/hooks-1.13.json, made by reference/hooks_reference.py (PyTorch 1.13, float64). */
const ref = JSON.parse(readFileSync(new URL('./reference/hooks-1.13.json', import.meta.url), 'utf8')) as Record<string, Record<string, number[]>>;

/** The reference script's `linear(3, 2)`: weight ← seq(shape, 0.5, 0.5), bias ← seq(shape, 1.5, 0.5), in float64. */
function linear(): nn.Linear {
  const m = new nn.Linear(3, 2, { dtype: float64 });
  noGrad(() => {
    m.weight.copy_(seq(m.weight.shape, 0.5, 0.5, float64));
    m.bias!.copy_(seq(m.bias!.shape, 1.5, 0.5, float64));
  });
  return m;
}

const x43 = (): Tensor => seq([4, 3], 0.1, 1, float64);

/** forward(x, y, k) → [2·l(x), l(x) + y]: two tensor arguments, a number, two outputs. */
class Two extends nn.Module<[x: Tensor, y: Tensor, k: number], Tensor[]> {
  l = linear();
  forward(x: Tensor, y: Tensor, _k: number): Tensor[] {
    const a = this.l.forward(x);
    return [a.mul(2), a.add(y)];
  }
}

describe('forward pre-hooks and forward hooks', () => {
  it('run in registration order around forward, whether the module is run by forward() or call()', () => {
    const log: string[] = [];
    class Logged extends nn.Module {
      forward(x: Tensor): Tensor {
        log.push('forward');
        return x;
      }
    }
    const m = new Logged();
    m.registerForwardPreHook(() => void log.push('pre1'));
    m.registerForwardPreHook(() => void log.push('pre2'));
    m.registerForwardHook(() => void log.push('hook1'));
    m.registerForwardHook(() => void log.push('hook2'));
    m.forward(ones([1]));
    expect(log).toEqual(['pre1', 'pre2', 'forward', 'hook1', 'hook2']);
    log.length = 0;
    m.call(ones([1]));
    expect(log).toEqual(['pre1', 'pre2', 'forward', 'hook1', 'hook2']);
  });

  it('a pre-hook replaces the arguments and a forward hook the output: Linear(2x) + 1 as in PyTorch', () => {
    const m = linear();
    let seenByForwardHook: unknown[] = [];
    m.registerForwardPreHook((_m, [x]) => [x.mul(2)]);
    m.registerForwardHook((_m, args, y) => {
      seenByForwardHook = args;
      return y.add(1);
    });
    const x = x43();
    const y = m.forward(x);
    expectClose(y, ref['linear-forward-hooks']!.y!, 1e-12);
    expect(values(seenByForwardHook[0] as Tensor)).toEqual(values(x.mul(2))); // the replaced arguments
    // A non-array return value replaces the only argument.
    const single = linear();
    single.registerForwardPreHook((_m, [v]) => v.mul(2));
    expect(values(single.forward(x))).toEqual(values(linear().forward(x.mul(2))));
  });

  it('each hook sees the previous one\'s replacement', () => {
    const m = new nn.Identity();
    m.registerForwardPreHook((_m, [x]) => [x.add(1)]);
    m.registerForwardPreHook((_m, [x]) => [x.mul(10)]);
    m.registerForwardHook((_m, _a, y) => y.add(1));
    m.registerForwardHook((_m, _a, y) => y.mul(2));
    expect(values(m.forward(ones([2])))).toEqual([42, 42]); // ((1 + 1)·10 + 1)·2
  });

  it('run when a container runs the module (Sequential calls its children\'s forward)', () => {
    const first = linear();
    const model = new nn.Sequential(first, new nn.ReLU());
    const outputs: Tensor[] = [];
    first.registerForwardHook((_m, _a, y) => void outputs.push(y));
    model.forward(x43());
    expect(outputs).toHaveLength(1);
    expect(values(outputs[0]!)).toEqual(values(linear().forward(x43())));
  });

  it('remove() unregisters a hook; without hooks the class\'s forward runs directly, and walks never see the hooks', () => {
    const m = linear();
    const keys = Object.keys(m.stateDict());
    const calls: string[] = [];
    const a = m.registerForwardHook(() => void calls.push('a'));
    const b = m.registerForwardPreHook(() => void calls.push('b'));
    expect(Object.keys(m.stateDict())).toEqual(keys);
    expect(m.toString()).toBe(linear().toString());
    m.forward(x43());
    a.remove();
    a.remove(); // a second remove does nothing
    m.forward(x43());
    expect(calls).toEqual(['b', 'a', 'b']); // the pre-hook, then the forward hook; then the pre-hook alone
    b[Symbol.dispose]();
    expect(Object.prototype.hasOwnProperty.call(m, 'forward')).toBe(false);
    expect(m.forward).toBe(nn.Linear.prototype.forward);
    m.forward(x43());
    expect(calls).toEqual(['b', 'a', 'b']);
  });

  it('a forward hook that returns another kind of value than the output is a TypeError naming it; a non-function hook too', () => {
    const m = linear();
    m.registerForwardHook(function toNumber() {
      return 5 as unknown as Tensor;
    });
    expect(() => m.forward(x43())).toThrow(TypeError);
    expect(() => m.forward(x43())).toThrow(/forward hook 'toNumber' of Linear returned number in place of a Tensor/);
    expect(() => m.registerForwardHook(null as never)).toThrow(/a forward hook must be a function, got null/);
  });
});

describe('full backward hooks', () => {
  const expected = ref['linear-backward-hook']!;

  it('see gradInput and gradOutput of a Linear, as in PyTorch', () => {
    const m = linear();
    const seen: { gradInput?: readonly (Tensor | null)[]; gradOutput?: readonly (Tensor | null)[]; module?: unknown } = {};
    m.registerFullBackwardHook((module, gradInput, gradOutput) => void Object.assign(seen, { module, gradInput, gradOutput }));
    const x = x43().requiresGrad_();
    const y = m.forward(x);
    expectClose(y, expected.y!, 1e-12);
    expect(seen.gradInput).toBeUndefined(); // not before backward
    y.backward(seq([4, 2], 2.0, 1, float64));
    expect(seen.module).toBe(m);
    expect(seen.gradInput).toHaveLength(1);
    expect(seen.gradOutput).toHaveLength(1);
    expectClose(seen.gradInput![0]!, expected.gradInput!, 1e-12);
    expectClose(seen.gradOutput![0]!, expected.gradOutput!, 1e-12);
    expectClose(x.grad!, expected.xGrad!, 1e-12);
    expectClose(m.weight.grad!, expected.weightGrad!, 1e-12);
  });

  it('a hook\'s returned gradInput replaces the input gradient; the next hook sees it; parameter gradients are unchanged', () => {
    const m = linear();
    let seenBySecond: Tensor | null = null;
    m.registerFullBackwardHook((_m, [g]) => [g!.mul(2)]);
    m.registerFullBackwardHook((_m, [g]) => void (seenBySecond = g));
    const x = x43().requiresGrad_();
    m.forward(x).backward(seq([4, 2], 2.0, 1, float64));
    const doubled = expected.xGrad!.map((v) => 2 * v);
    expectClose(x.grad!, doubled, 1e-12);
    expectClose(seenBySecond!, doubled, 1e-12);
    expectClose(m.weight.grad!, expected.weightGrad!, 1e-12);
  });

  it('one gradInput entry per argument and one gradOutput per output, as PyTorch 1.13 gives them', () => {
    const m = new Two();
    let gradInput: readonly (Tensor | null)[] = [];
    let gradOutput: readonly (Tensor | null)[] = [];
    m.registerFullBackwardHook((_m, gi, go) => void ([gradInput, gradOutput] = [gi, go]));
    const x = x43().requiresGrad_();
    const y = seq([4, 2], 0.3, 1, float64); // does not require grad
    const [o1] = m.forward(x, y, 3);
    o1!.sum().backward();
    // PyTorch: gi = (grad of x, zeros for y, None for the number); go = (ones, None for the unused output)
    expect(gradInput).toHaveLength(3);
    expect(gradInput[0]!.shape).toEqual([4, 3]);
    expect(values(gradInput[1]!)).toEqual(new Array(8).fill(0));
    expect(gradInput[2]).toBeNull();
    expect(gradOutput).toHaveLength(2);
    expect(values(gradOutput[0]!)).toEqual(new Array(8).fill(1));
    expect(gradOutput[1]).toBeNull();
    expectClose(gradInput[0]!, x.grad!, 0);
  });

  it('when no input requires grad the hooks run with null gradInput, and may not return gradients', () => {
    const m = new Two();
    const calls: Array<[readonly (Tensor | null)[], readonly (Tensor | null)[]]> = [];
    const handle = m.registerFullBackwardHook((_m, gi, go) => void calls.push([gi, go]));
    const [o1, o2] = m.forward(x43(), seq([4, 2], 0.3, 1, float64), 3);
    o1!.sum().add(o2!.sum()).backward();
    expect(calls).toHaveLength(1);
    expect(calls[0]![0]).toEqual([null, null, null]);
    expect(calls[0]![1].map((g) => values(g!))).toEqual([new Array(8).fill(1), new Array(8).fill(1)]);
    expect(m.l.weight.grad).not.toBeNull();
    handle.remove();
    m.registerFullBackwardHook(function returnsGradients(_m, gi) {
      return gi.map(() => ones([1]));
    });
    const [p1] = m.forward(x43(), seq([4, 2], 0.3, 1, float64), 3);
    expect(() => p1!.sum().backward()).toThrow(TensorError);
    const [q1] = m.forward(x43(), seq([4, 2], 0.3, 1, float64), 3);
    expect(() => q1!.sum().backward()).toThrow(/backward hook 'returnsGradients' of Two returned gradients, but no input of the module requires grad/);
  });

  it('a hook returning the wrong number of gradients, a wrong shape or not an array is an error naming it and what was expected', () => {
    const cases: Array<[(gi: readonly (Tensor | null)[]) => unknown, ErrorConstructor | typeof TensorError, RegExp]> = [
      [(gi) => [gi[0]], TensorError, /backward hook 'bad' of Two returned an invalid number of gradInput: got 1, but expected 3/],
      [(gi) => [gi[0]!.sum(0), gi[1], null], TensorError, /backward hook 'bad' of Two returned gradInput\[0\] of shape \[3\], but input 0 has shape \[4, 3\]/],
      [(gi) => gi[0], TypeError, /backward hook 'bad' of Two returned a Tensor; it returns an array of gradients/],
      [(gi) => [gi[0], 7, null], TypeError, /backward hook 'bad' of Two returned number as gradInput\[1\]; expected a Tensor or null/],
    ];
    for (const [body, type, message] of cases) {
      const m = new Two();
      m.registerFullBackwardHook(function bad(_m, gi) {
        return body(gi) as never;
      });
      const x = x43().requiresGrad_();
      const y = seq([4, 2], 0.3, 1, float64).requiresGrad_();
      const [, o2] = m.forward(x, y, 3);
      let error: unknown;
      try {
        o2!.sum().backward();
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(type);
      expect((error as Error).message).toMatch(message);
      expect(x.grad).toBeNull(); // nothing reached the inputs
    }
  });

  it('are not set up for a forward run without grad mode, and stop once removed', () => {
    const m = linear();
    let calls = 0;
    const handle = m.registerFullBackwardHook(() => void calls++);
    const x = x43().requiresGrad_();
    const y = noGrad(() => m.forward(x));
    expect(y.requiresGrad).toBe(false);
    m.forward(x).sum().backward();
    expect(calls).toBe(1);
    handle.remove();
    m.forward(x).sum().backward();
    expect(calls).toBe(1);
  });
});
