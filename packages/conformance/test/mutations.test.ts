// The mutation check: one primitive at a time is broken in a wrapped CPU backend, and the
// suite must catch it, in the cases named here, with a message that says what is wrong.
import { describe, expect, it } from 'vitest';
import { runConformance, type Report } from '../src/index.js';
import { MUTANTS } from './mutants.js';

async function failures(make: () => ReturnType<(typeof MUTANTS)[keyof typeof MUTANTS]>, filter?: RegExp): Promise<Report['cases']> {
  const report = await runConformance(make, filter ? { filter } : {});
  return report.cases.filter((c) => c.status === 'fail');
}

describe('the suite catches broken primitives', () => {
  it('float16 cast rounding half up instead of to even', async () => {
    const fails = await failures(MUTANTS.castRoundHalfUp);
    const rnd3 = fails.find((c) => c.id === 'promotion/RND-3/f16-ties-to-even');
    expect(rnd3?.message).toContain('got 2050, expected 2048');
    const ties = fails.find((c) => c.id === 'primitives/to(float16)/float32/ties');
    // The message shows the input behind the first wrong value, and how to rerun just this case.
    expect(ties?.message).toMatch(/first at \[\d+\]: got [-\d.e]+, expected [-\d.e]+ \(from input0 = [-\d.e]+\)/);
    expect(ties?.message).toContain("rerun only this case: --filter 'primitives/to(float16)/float32/ties'");
  });
  it('an off-by-one in strided reads', async () => {
    const fails = await failures(MUTANTS.stridedReadOffByOne);
    expect(fails.length).toBeGreaterThan(100);
    const ids = fails.map((c) => c.id);
    expect(ids).toContain('primitives/neg/float32/strided-2x5');
    expect(ids).toContain('views/contiguous/float32/transposed-4x3');
    expect(ids).toContain('storage/strided-kernel-copy');
    // The step-2 view's other elements hold a sentinel (1000), so a shifted read shows up loudly.
    expect(fails.find((c) => c.id === 'primitives/neg/float32/strided-2x5')!.message).toMatch(/values wrong \(bit-exact\)/);
  });
  it('a fused softmax without the max subtraction', async () => {
    const fails = await failures(MUTANTS.softmaxWithoutMax, /softmax/);
    const ids = fails.map((c) => c.id);
    expect(ids).toContain('composites/softmax/float32/large-values/fused');
    expect(ids.every((id) => id.includes('/fused'))).toBe(true); // the decomposition is unaffected
    expect(fails.find((c) => c.id === 'composites/softmax/float32/large-values/fused')!.message).toContain('got NaN');
  });
  it('max/min reductions that skip NaN: the GradScaler misses a NaN gradient and steps with it', async () => {
    const fails = await failures(MUTANTS.maxMinSkipNaN, /^gradscaler\//);
    const ids = fails.map((c) => c.id);
    expect(ids).toContain('gradscaler/GS-6/float32/nan/decomposed');
    expect(ids).toContain('gradscaler/GS-7/skips-on-nan');
    expect(fails.find((c) => c.id === 'gradscaler/GS-6/float32/nan/decomposed')!.message).toContain('found_inf: 1 of 1 float32 values wrong (bit-exact); first at (0-dim): got 0, expected 1');
    expect(fails.find((c) => c.id === 'gradscaler/GS-7/skips-on-nan')!.message).toContain('a skipped step() returns: got stepped, expected undefined');
    expect(ids.every((id) => /nan/.test(id))).toBe(true); // Inf is still caught
  });
  it('a fused crossEntropy that drops label smoothing', async () => {
    const fails = await failures(MUTANTS.crossEntropyIgnoresSmoothing, /crossEntropy/);
    const ids = fails.map((c) => c.id);
    expect(ids).toContain('composites/crossEntropy/float32/label-smoothing-0.1-mean/fused');
    expect(ids).toContain('composites/crossEntropy/float64/strided-logits-sum/fused'); // ε = 0.1 there too
    expect(ids).toContain('composites/crossEntropy/float16/label-smoothing-ignored-none/fused');
    expect(ids.every((id) => id.endsWith('/fused'))).toBe(true);
    expect(ids.some((id) => id.includes('/mean-4x5/'))).toBe(false); // no smoothing, no failure
  });
  it('a fused unscale-and-check that misses NaN', async () => {
    const fails = await failures(MUTANTS.unscaleMissesNaN, /^gradscaler\//);
    const ids = fails.map((c) => c.id);
    expect(ids).toContain('gradscaler/GS-6/float32/nan/fused');
    expect(ids).toContain('gradscaler/GS-6/bfloat16/nan/fused');
    expect(ids).toContain('gradscaler/GS-7/skips-on-nan');
    expect(fails.find((c) => c.id === 'gradscaler/GS-6/float32/nan/fused')!.message).toContain('found_inf: 1 of 1 float32 values wrong (bit-exact); first at (0-dim): got 0, expected 1');
    expect(ids.some((id) => id.endsWith('/decomposed'))).toBe(false);
  });
  it('a fused Adam update without the second bias correction', async () => {
    const fails = await failures(MUTANTS.adamWithoutBiasCorrection2, /^optimizers\//);
    const ids = fails.map((c) => c.id);
    expect(ids).toContain('optimizers/steps/adam/float32/fused');
    expect(ids).toContain('optimizers/steps/adamw/bfloat16/fused');
    expect(ids).toContain('optimizers/OPT-9/adamw/float32'); // PyTorch's worked values (fused by default)
    expect(ids.some((id) => id.endsWith('/decomposed'))).toBe(false);
  });
  it('a fused logSoftmax with a "safe log" epsilon', async () => {
    const fails = await failures(MUTANTS.logSoftmaxEpsilon, /logSoftmax|training/);
    const ids = fails.map((c) => c.id);
    expect(ids).toContain('composites/logSoftmax/float64/dim-1-3x5/fused');
    expect(ids).toContain('training/mlp-sgd-momentum/float64');
  });
});
