// Modules inside compile(): a module's training mode is read while the step is captured, so it is a
// guard — after model.eval() a compiled forward traces again instead of replaying dropout.
import { describe, expect, it } from 'vitest';
import { compile, manualSeed, randn, type Tensor } from '@core/tensor';
import { nn } from '../src/index.js';
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
