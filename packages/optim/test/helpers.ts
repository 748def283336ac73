// Shared test helpers: a CPU device, value readers, and exact error assertions.
import '@core/backend-cpu';
import { expect } from 'vitest';
import { float32, tensor, type DType, type Tensor } from '@core/tensor';

/** A parameter (requiresGrad) holding `data`. */
export function param(data: number[], dtype: DType = float32): Tensor {
  return tensor(data, { dtype, requiresGrad: true });
}

/** Set `p.grad` by hand, as backward() would: same device and dtype as p. */
export function setGrad(p: Tensor, data: number[]): Tensor {
  const g = tensor(data, { dtype: p.dtype, device: p.device });
  p.grad = g;
  return g;
}

/** A CPU tensor's values as plain numbers. */
export function values(t: Tensor): number[] {
  return Array.from(t.dataSync());
}

export function expectClose(actual: number[], expected: number[], tol: number): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((a, i) => {
    if (Math.abs(a - expected[i]!) > tol) {
      throw new Error(`element ${i}: got ${a}, expected ${expected[i]} (±${tol}); all: [${actual.join(', ')}]`);
    }
  });
}

/** `fn` throws an instance of `cls` whose message is exactly `message`. */
export function expectThrowsExactly(fn: () => unknown, cls: new (...args: never[]) => Error, message: string): void {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, `expected ${cls.name}: ${message}`).toBeInstanceOf(cls);
  expect((caught as Error).message).toBe(message);
}
