// inferenceMode (PyTorch 1.13's torch.inference_mode): noGrad that also marks the tensors it
// allocates as inference tensors. Checked against torch 1.13: grad mode is off inside (and
// enableGrad inside turns it on without recording anything), isInferenceModeEnabled, isInference
// for tensors made inside and their views (also views made outside), and the "cannot be saved for
// backward" error for ops recorded outside that save one, while ops that save nothing work.
import '@core/backend-cpu';
import { describe, expect, it } from 'vitest';
import {
  enableGrad, float64, inferenceMode, isGradEnabled, isInferenceModeEnabled, noGrad, ones, tensor, TensorError,
} from '@core/tensor';
import { expectError } from '../helpers/assert.js';

describe('inferenceMode', () => {
  it('turns grad mode off and inference mode on, inside only', () => {
    expect(isInferenceModeEnabled()).toBe(false);
    const inside = inferenceMode(() => [isGradEnabled(), isInferenceModeEnabled()]);
    expect(inside).toEqual([false, true]);
    expect([isGradEnabled(), isInferenceModeEnabled()]).toEqual([true, false]);
  });

  it('records nothing, even under enableGrad inside it (grad mode reads true there, as in torch)', () => {
    const w = ones([2], { dtype: float64 }).requiresGrad_();
    inferenceMode(() => {
      expect(w.mul(2).requiresGrad).toBe(false);
      enableGrad(() => {
        expect(isGradEnabled()).toBe(true);
        const y = w.mul(2);
        expect(y.requiresGrad).toBe(false);
        expect(y.isInference()).toBe(true);
      });
      noGrad(() => expect(isInferenceModeEnabled(), 'noGrad inside keeps inference mode').toBe(true));
    });
  });

  it('tensors allocated inside are inference tensors, and so are their views, even made outside', () => {
    const normal = tensor([1, 2], { dtype: float64 });
    const made = inferenceMode(() => normal.mul(2));
    expect(made.isInference()).toBe(true);
    expect(made.view([2, 1]).isInference()).toBe(true);
    expect(normal.isInference()).toBe(false);
    expect(made.clone().isInference(), 'a clone made outside is a normal tensor').toBe(false);
  });

  it('an op recorded outside may not save an inference tensor', () => {
    const i = inferenceMode(() => ones([2], { dtype: float64 }));
    const w = ones([2], { dtype: float64 }).requiresGrad_();
    expectError(() => i.mul(w), TensorError,
      'Inference tensors cannot be saved for backward. To work around you can make a clone to get a normal tensor and use it in autograd.', 'MulBackward');
    // add saves nothing: allowed, as in torch.
    const s = i.add(w);
    expect(s.requiresGrad).toBe(true);
    s.sum().backward();
    expect(Array.from(w.grad!.dataSync())).toEqual([1, 1]);
    // The workaround: a clone is a normal tensor.
    expect(i.clone().mul(w).requiresGrad).toBe(true);
    // Outside autograd nothing is saved.
    expect(Array.from(noGrad(() => i.mul(w)).dataSync())).toEqual([1, 1]);
  });

  it('takes a synchronous function, like noGrad', () => {
    expectError(() => inferenceMode(() => Promise.resolve(1)), TypeError, 'synchronous function');
    expect(isInferenceModeEnabled()).toBe(false);
  });
});
