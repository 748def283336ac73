// Test helpers: seeded float64 leaves, gradcheck with a readable failure, and the float32-vs-
// float64 gradient comparison every op goes through.
import '@core/backend-cpu';
import { createCpuBackend } from '@core/backend-cpu';
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { float32, float64, Generator, gradcheck, rand, registerBackend, listBackends, tensor, type NestedArray, type Tensor, type DType } from '@core/tensor';

/** A second device type for device tests: 'fake', a renamed CPU backend. */
if (!listBackends().includes('fake')) {
  registerBackend({ name: 'fake', priority: 1, create: () => ({ ...createCpuBackend(), name: 'fake' }) });
}
export const FAKE = 'fake';

/** Uniform values in [lo, hi) from a private generator: the same numbers every run. */
export function uniform(shape: readonly number[], seed: number, lo = -1, hi = 1, dtype: DType = float64): Tensor {
  return rand(shape, { generator: new Generator(seed), dtype: float64 }).mul(hi - lo).add(lo).to(dtype);
}

/** A float64 leaf that requires grad. */
export function leaf(shape: readonly number[], seed: number, lo = -1, hi = 1): Tensor {
  return uniform(shape, seed, lo, hi).requiresGrad_();
}

/** gradcheck in float64 that reports the mismatch on failure. */
export function expectGradcheck(fn: (...xs: Tensor[]) => Tensor, inputs: Tensor[], options?: { atol?: number; rtol?: number; eps?: number }): void {
  const result = gradcheck(fn, inputs, options);
  expect(result.mismatch ?? 'ok').toBe('ok');
  expect(result.ok).toBe(true);
}

/** Values of a CPU tensor as a plain number array. */
export function values(t: Tensor): number[] {
  return Array.from(t.to(float64).dataSync());
}

export function expectClose(actual: Tensor | number[], expected: Tensor | number[], tol = 1e-6): void {
  const a = Array.isArray(actual) ? actual : values(actual);
  const e = Array.isArray(expected) ? expected : values(expected);
  expect(a.length).toBe(e.length);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < a.length; i++) {
    const err = Math.abs(a[i]! - e[i]!) / Math.max(1, Math.abs(e[i]!));
    if (!(err <= worst)) { worst = err; at = i; }
  }
  expect(worst, `worst relative error at flat index ${at}: ${a[at]} vs ${e[at]}`).toBeLessThanOrEqual(tol);
}

/**
 * Run `fn` on float32 copies of float64 `inputs`, backpropagate the same weights in both
 * precisions and compare each input's gradient: float32 must match float64 to `tol` (relative to
 * the largest gradient magnitude).
 */
export function expectF32GradMatchesF64(fn: (...xs: Tensor[]) => Tensor, inputs: Tensor[], tol = 1e-4): void {
  const grads = [float64, float32].map((dtype) => {
    const xs = inputs.map((x) => {
      const c = x.detach().to(dtype);
      return x.requiresGrad ? c.requiresGrad_() : c;
    });
    const out = fn(...xs);
    expect(out.dtype).toBe(dtype);
    const weights = uniform(out.shape, 99, 0.5, 1.5, dtype);
    out.backward(weights);
    return xs.map((x) => (x.requiresGrad ? values(x.grad!) : null));
  });
  grads[0]!.forEach((g64, i) => {
    if (!g64) return;
    const g32 = grads[1]![i]!;
    const scale = Math.max(1e-3, ...g64.map(Math.abs));
    const worst = Math.max(...g64.map((v, k) => Math.abs(v - g32[k]!)));
    expect(worst / scale, `input ${i}: float32 gradient differs from float64 by ${worst} (scale ${scale})`).toBeLessThanOrEqual(tol);
  });
}

/** One entry of reference/torch-1.13.json (made by reference/torch_reference.py with PyTorch 1.13, float64). */
export type TorchEntry = Record<string, number[]>;

const torchReference = JSON.parse(readFileSync(new URL('./reference/torch-1.13.json', import.meta.url), 'utf8')) as Record<string, unknown>;

/** PyTorch's values for `key` (see reference/torch_reference.py for the call that made them). */
export function torchRef(key: string): TorchEntry {
  const entry = torchReference[key];
  if (entry === undefined) throw new Error(`reference/torch-1.13.json has no entry '${key}'`);
  return entry as TorchEntry;
}

/** An input the reference script used, as a float64 tensor. */
export function torchInput(name: string, requiresGrad = false): Tensor {
  const nested = (torchReference.inputs as Record<string, NestedArray>)[name];
  if (nested === undefined) throw new Error(`reference/torch-1.13.json has no input '${name}'`);
  const t = tensor(nested, { dtype: float64 });
  return requiresGrad ? t.requiresGrad_() : t;
}
