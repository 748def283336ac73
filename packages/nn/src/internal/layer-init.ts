// PyTorch's default initialisation of Linear and Conv layers, shared by both.
import type { Tensor } from '@core/tensor';
import { calculateFanInAndFanOut, kaimingUniform_, uniform_ } from '../init.js';

/** weight: kaiming_uniform(a=√5), i.e. U(±1/√fan_in); bias: U(±1/√fan_in). */
export function defaultLayerInit(weight: Tensor, bias: Tensor | null): void {
  kaimingUniform_(weight, Math.sqrt(5));
  if (bias) {
    const { fanIn } = calculateFanInAndFanOut(weight);
    const bound = fanIn > 0 ? 1 / Math.sqrt(fanIn) : 0;
    uniform_(bias, -bound, bound);
  }
}
