// Modules inside compile(): a module's training mode is read while the step is captured, so it is a
// guard — after model.eval() a compiled forward traces again instead of replaying dropout. Index
// checks that read the host (Embedding, cross-entropy's class range) run on the eager first call
// only, so a language model's step compiles.
import { describe, expect, it } from 'vitest';
import { compile, int32, manualSeed, randn, tensor, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { values } from './helpers.js';

describe('compile() and a module\'s training mode', () => {
  it('a replay after eval() traces again and gives the eager eval output (no dropout); train() again restores dropout', () => {
    manualSeed(3);
    const model = new nn.Sequential(new nn.Linear(8, 8), new nn.Dropout(0.5));
    const x = randn([4, 8]);
    const step = compile((a: Tensor) => model.forward(a));
    for (let i = 0; i < 3; i++) step(x); // eager, capture, replay: all in training mode
    model.eval();
    const evalOut = values(step(x));
    expect(evalOut).toEqual(values(model.forward(x))); // dropout off: deterministic, equals eager eval
    expect(step.explain().lastRetraceReason).toMatch(/training/);
    model.train();
    const trainOut = values(step(x));
    expect(trainOut.filter((v) => v === 0).length).toBeGreaterThan(0); // dropout is back
  });
});

describe('compile() and index checks that read the host', () => {
  it("an Embedding and cross-entropy step replays bit for bit with eager; the first, eager call still rejects a bad index", () => {
    const run = (compiled: boolean) => {
      manualSeed(5);
      const embed = new nn.Embedding(10, 6);
      const head = new nn.Linear(6, 10);
      const step = (ids: Tensor, targets: Tensor) => F.crossEntropy(head.forward(embed.forward(ids)), targets);
      const f = compiled ? compile(step) : step;
      const batches = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 0, 1, 2], [3, 3, 4, 4]];
      return batches.map((b) => values(f(tensor(b, { dtype: int32 }), tensor(b.map((v) => (v + 1) % 10), { dtype: int32 })))[0]!);
    };
    expect(run(true)).toEqual(run(false));
    const embed = new nn.Embedding(10, 6);
    const lookup = compile((ids: Tensor) => embed.forward(ids));
    expect(() => lookup(tensor([1, 12], { dtype: int32 }))).toThrow(/index 12 is out of bounds/);
  });
});
