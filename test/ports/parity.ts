// The two comparisons of a port's loss curve with PyTorch's: float32 step by step within a fixed
// tolerance, and a low-precision run against PyTorch's own low-precision drift.
import { expect } from 'vitest';

/** The steps where `ok` fails, as "step i: ours x, PyTorch's y (|Δ| d)" lines. */
function failures(ours: readonly number[], reference: readonly number[], ok: (diff: number, i: number) => boolean): string[] {
  return ours.flatMap((x, i) => {
    const diff = Math.abs(x - reference[i]!);
    return Number.isFinite(x) && ok(diff, i) ? [] : [`step ${i}: ours ${x}, PyTorch's ${reference[i]} (|Δ| ${diff.toExponential(2)})`];
  });
}

/** Every value of `ours` within `tolerance` (absolute) of PyTorch's at the same step. */
export function expectCurveWithin(ours: readonly number[], reference: readonly number[], tolerance: number, what: string): void {
  expect(ours).toHaveLength(reference.length);
  expect(failures(ours, reference, (diff) => diff <= tolerance), `${what} beyond ${tolerance} of PyTorch's`).toEqual([]);
}

const rms = (xs: readonly number[]): number => Math.sqrt(xs.reduce((s, x) => s + x * x, 0) / xs.length);

/**
 * Our low-precision run against PyTorch's, measured by PyTorch's own drift d_i = |torch_low_i −
 * torch_fp32_i| (how far low precision moves PyTorch's loss at step i):
 *
 * - at every step, |ours_i − torch_low_i| ≤ k·d_i + eps with eps = max_j d_j. The drift of one step
 *   passes near zero by chance (the low-precision loss crosses the float32 one), so a bound of
 *   k·d_i alone would demand agreement far below bf16's resolution there; eps, the largest drift
 *   of the run, is the run's scale of low-precision noise.
 * - our own drift from float32, |ours_i − torch_fp32_i| (our float32 run matches PyTorch's to
 *   ~1e-6), has a root mean square within a factor of 3 of PyTorch's: the bound above also holds
 *   for a run that never left float32, and this part fails for one (its drift is ~0), as it does
 *   for a run that casts far more than PyTorch's autocast does (its drift is much larger).
 */
export function expectDriftWithin(ours: readonly number[], torch: { readonly low: readonly number[]; readonly fp32: readonly number[] }, k: number): void {
  expect(ours).toHaveLength(torch.low.length);
  const drift = torch.low.map((x, i) => Math.abs(x - torch.fp32[i]!));
  const eps = Math.max(...drift);
  expect(failures(ours, torch.low, (diff, i) => diff <= k * drift[i]! + eps), `beyond ${k}·(PyTorch's drift) + ${eps.toExponential(2)}`).toEqual([]);
  const ratio = rms(ours.map((x, i) => x - torch.fp32[i]!)) / rms(drift);
  expect(ratio, "RMS of our drift from float32 / RMS of PyTorch's").toBeGreaterThan(1 / 3);
  expect(ratio, "RMS of our drift from float32 / RMS of PyTorch's").toBeLessThan(3);
}
