// nn.utils.checkpoint: the gradients equal the ones without checkpointing (exactly, in float32),
// for parameters read inside fn too; dropout inside draws the same mask when recomputed; the
// forward keeps nothing fn computes; the recomputation runs under the forward's autocast state;
// PyTorch's in-place check on the saved inputs; errors.
import { describe, expect, it } from 'vitest';
import {
  autocast, bfloat16, defaultGenerator, manualSeed, noGrad, TensorError, type Tensor,
} from '@core/tensor';
import { nn } from '../src/index.js';
import { values } from './helpers.js';
import { seq } from './sine-inputs.js';

/** A two-layer block with seeded parameters: what one checkpoints in a deep model. */
function block(withDropout = false): nn.Sequential {
  manualSeed(7);
  const layers = [new nn.Linear(6, 16), new nn.Tanh(), ...(withDropout ? [new nn.Dropout(0.5)] : []), new nn.Linear(16, 4)];
  return new nn.Sequential(...layers);
}

/** The gradients of `model`'s parameters and of `x` after backward of sum(w·f(x)), with `f` run plain or checkpointed. */
function gradients(model: nn.Sequential, x: Tensor, checkpointed: boolean): number[][] {
  model.zeroGrad();
  const run = (input: Tensor): Tensor => model.forward(input);
  const y = checkpointed ? nn.utils.checkpoint(run, x) : run(x);
  y.mul(seq(y.shape, 2.0)).sum().backward();
  const grads = model.parameters().map((p) => values(p.grad!));
  return x.requiresGrad ? [...grads, values(x.grad!)] : grads;
}

describe('nn.utils.checkpoint', () => {
  it('gives the same gradients as running fn plain, exactly in float32, for the input and the parameters fn reads', () => {
    const model = block();
    const plain = gradients(model, seq([5, 6], 0.1).requiresGrad_(), false);
    const checkpointed = gradients(model, seq([5, 6], 0.1).requiresGrad_(), true);
    expect(checkpointed).toEqual(plain);
    expect(plain.every((g) => g.some((v) => v !== 0))).toBe(true);
  });

  it('reaches the parameters fn reads when no argument requires grad (an input batch)', () => {
    const model = block();
    const x = seq([5, 6], 0.1);
    const plain = gradients(model, x, false);
    const y = nn.utils.checkpoint((input: Tensor) => model.forward(input), x);
    expect(y.requiresGrad).toBe(true);
    expect(gradients(model, x, true)).toEqual(plain);
  });

  it('recomputes dropout with the same mask: the random-number position of the forward is restored for the recomputation', () => {
    const model = block(true);
    manualSeed(11);
    const plain = gradients(model, seq([5, 6], 0.1).requiresGrad_(), false);
    const after = defaultGenerator.getState();
    manualSeed(11);
    const checkpointed = gradients(model, seq([5, 6], 0.1).requiresGrad_(), true);
    expect(checkpointed).toEqual(plain);
    // The recomputation draws again from the forward's position and gives the position back: the
    // stream continues as after the plain run.
    expect(defaultGenerator.getState()).toEqual(after);
    manualSeed(12); // another mask gives other gradients: the equality above needs the same mask
    expect(gradients(model, seq([5, 6], 0.1).requiresGrad_(), true)).not.toEqual(plain);
  });

  it('keeps nothing fn computes: intermediates are made without recording, and changing one in place does not break backward', () => {
    const model = block();
    const stash: Tensor[] = [];
    const fn = (x: Tensor): Tensor => {
      const hidden = model.at(1).forward(model.at(0).forward(x));
      stash.push(hidden);
      return model.at(2).forward(hidden);
    };
    const x = seq([5, 6], 0.1).requiresGrad_();
    const y = nn.utils.checkpoint(fn, x);
    expect(y.gradFn).toBe('CheckpointFunctionBackward'); // one node for all of fn
    const [forwardHidden] = stash;
    expect(forwardHidden!.requiresGrad).toBe(false); // computed without a graph: nothing saved it
    forwardHidden!.add_(100);
    y.sum().backward();
    expect(stash).toHaveLength(2); // backward ran fn a second time
    expect(stash[1]!.requiresGrad).toBe(true);
    // Without checkpointing, tanh and the last Linear saved the intermediate: the same change breaks backward.
    stash.length = 0;
    const plain = fn(seq([5, 6], 0.1).requiresGrad_());
    stash[0]!.add_(100);
    expect(() => plain.sum().backward()).toThrow(/modified by an inplace operation/);
  });

  it('saves the inputs: changing one in place before backward is an error, as for built-in ops', () => {
    const x = seq([3], 0.1).requiresGrad_();
    const h = x.mul(2);
    const y = nn.utils.checkpoint((t: Tensor) => t.exp(), h);
    noGrad(() => h.add_(1));
    expect(() => y.sum().backward()).toThrow(/modified by an inplace operation/);
  });

  it('recomputes under the forward\'s autocast state: bfloat16 results and gradients equal the plain run in the same region', () => {
    const model = block();
    const run = (checkpointed: boolean): number[][] => {
      model.zeroGrad();
      const x = seq([5, 6], 0.1).requiresGrad_();
      const fn = (input: Tensor): Tensor => model.forward(input);
      const y = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => (checkpointed ? nn.utils.checkpoint(fn, x) : fn(x)));
      expect(y.dtype).toBe(bfloat16);
      y.float().sum().backward(); // outside the region, as PyTorch advises
      return [...model.parameters().map((p) => values(p.grad!)), values(x.grad!)];
    };
    expect(run(true)).toEqual(run(false));
  });

  it('backward inside an autocast region cannot recompute like the forward: a TensorError says so instead of wrong gradients', () => {
    const model = block();
    const x = seq([5, 6], 0.1).requiresGrad_();
    const y = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => nn.utils.checkpoint((input: Tensor) => model.forward(input), x));
    expect(() => autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => y.float().sum().backward())).toThrow(TensorError);
    const z = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => nn.utils.checkpoint((input: Tensor) => model.forward(input), x));
    expect(() => autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => z.float().sum().backward()))
      .toThrow(/recomputing fn in backward gave \[5, 4\] float32 but the forward gave \[5, 4\] bfloat16/);
  });

  it('takes several arguments (tensors and others) and returns several outputs; an output backward does not reach gets no gradient', () => {
    const a = seq([4], 0.1).requiresGrad_();
    const b = seq([4], 0.9).requiresGrad_();
    const fn = (p: Tensor, q: Tensor, k: number): Tensor[] => [p.mul(q).mul(k), p.sin(), q.exp()];
    const [u, v] = nn.utils.checkpoint(fn, a, b, 3);
    u!.add(v!).sum().backward();
    const ga = values(a.grad!);
    const gb = values(b.grad!);
    a.grad = null;
    b.grad = null;
    const [pu, pv] = fn(a, b, 3);
    pu!.add(pv!).sum().backward();
    expect(ga).toEqual(values(a.grad!));
    expect(gb).toEqual(values(b.grad!));
  });

  it('is just fn(...args) with grad mode off', () => {
    const model = block();
    const y = noGrad(() => nn.utils.checkpoint((input: Tensor) => model.forward(input), seq([5, 6], 0.1).requiresGrad_()));
    expect(y.requiresGrad).toBe(false);
    expect(y.gradFn).toBeNull();
  });

  it('rejects a fn that is not a function, or that returns something other than tensors, with a TypeError', () => {
    expect(() => nn.utils.checkpoint(null as never, seq([2], 0))).toThrow(/checkpoint\(fn, \.\.\.args\): fn must be a function, got null/);
    expect(() => nn.utils.checkpoint(((t: Tensor) => values(t)) as never, seq([2], 0).requiresGrad_()))
      .toThrow(/fn must return a Tensor or an array of Tensors, got an array holding something else/);
    expect(() => nn.utils.checkpoint((() => 3) as never)).toThrow(/fn must return a Tensor or an array of Tensors, got number/);
  });
});
