// Type promotion (spec §4: TP-1 promoteTypes, TP-2/TP-3 resultType, TP-4 canCast).
import { describe, expect, it } from 'vitest';
import { type DType, bfloat16, bool, DTYPES, float16, float32, float64, int32 } from '../../src/dtype/dtype.js';
import { canCast, type PromotionOperand, promoteTypes, resultType } from '../../src/dtype/promotion.js';

const ALL: readonly DType[] = [float32, float16, bfloat16, int32, bool, float64];
const short = (d: DType) => d.name;

/** A tensor as resultType sees it: only dtype and rank matter. */
const t = (dtype: DType, shape: readonly number[] = [4]): PromotionOperand => ({ dtype, shape });
/** A 0-dim tensor. */
const t0 = (dtype: DType): PromotionOperand => ({ dtype, shape: [] });

// TP-1, written out as PyTorch's promoteTypes table restricted to our dtypes (row ∘ column).
const f32 = float32, f16 = float16, bf16 = bfloat16, i32 = int32, b8 = bool, f64 = float64;
const COLS = [f32, f16, bf16, i32, b8, f64];
const TABLE: ReadonlyArray<readonly [DType, readonly DType[]]> = [
  //     f32  f16  bf16  i32   bool  f64
  [f32, [f32, f32, f32, f32, f32, f64]],
  [f16, [f32, f16, f32, f16, f16, f64]],
  [bf16, [f32, f32, bf16, bf16, bf16, f64]],
  [i32, [f32, f16, bf16, i32, i32, f64]],
  [b8, [f32, f16, bf16, i32, b8, f64]],
  [f64, [f64, f64, f64, f64, f64, f64]],
];

describe('promoteTypes (TP-1)', () => {
  it('the test covers every dtype the package defines', () => {
    const defined = Object.values(DTYPES);
    expect(defined).toHaveLength(ALL.length);
    for (const d of defined) expect(ALL.includes(d), d.name).toBe(true);
  });

  for (const [row, results] of TABLE) {
    for (let j = 0; j < COLS.length; j++) {
      const col = COLS[j]!;
      const want = results[j]!;
      it(`TP-1: ${short(row)} ∘ ${short(col)} = ${short(want)}`, () => {
        expect(promoteTypes(row, col)).toBe(want);
      });
    }
  }

  it('TP-1: the named cases: f16∘f16=f16, bf16∘bf16=bf16, f16∘bf16=f32, {f16,bf16}∘f32=f32, x∘f64=f64, {f16,bf16}∘{bool,int}=that float', () => {
    expect(promoteTypes(float16, float16)).toBe(float16);
    expect(promoteTypes(bfloat16, bfloat16)).toBe(bfloat16);
    expect(promoteTypes(float16, bfloat16)).toBe(float32);
    expect(promoteTypes(bfloat16, float16)).toBe(float32);
    for (const h of [float16, bfloat16]) {
      expect(promoteTypes(h, float32)).toBe(float32);
      for (const other of [bool, int32]) {
        expect(promoteTypes(h, other)).toBe(h);
        expect(promoteTypes(other, h)).toBe(h);
      }
    }
    for (const x of ALL) expect(promoteTypes(x, float64)).toBe(float64);
  });

  it('TP-1: the table is symmetric (all 36 ordered pairs)', () => {
    for (const a of ALL) for (const b of ALL) expect(promoteTypes(a, b), `${a.name} ∘ ${b.name}`).toBe(promoteTypes(b, a));
  });

  it('TP-1: x ∘ x = x, and the table is associative on our dtypes (so folding order does not matter)', () => {
    for (const a of ALL) expect(promoteTypes(a, a)).toBe(a);
    for (const a of ALL)
      for (const b of ALL)
        for (const c of ALL) {
          expect(promoteTypes(promoteTypes(a, b), c), `${a.name},${b.name},${c.name}`).toBe(promoteTypes(a, promoteTypes(b, c)));
        }
  });
});

describe('resultType (TP-2, TP-3)', () => {
  it('TP-3: f16[n] + f32[n] → f32', () => {
    expect(resultType(t(float16), t(float32))).toBe(float32);
    expect(resultType(t(float32), t(float16))).toBe(float32);
  });

  it('TP-3: f16[n] + f32 0-dim → f16 (a 0-dim tensor of the same category does not promote)', () => {
    expect(resultType(t(float16), t0(float32))).toBe(float16);
    expect(resultType(t0(float32), t(float16))).toBe(float16);
  });

  it('TP-3: bf16[n] + f64 0-dim → bf16', () => {
    expect(resultType(t(bfloat16), t0(float64))).toBe(bfloat16);
    expect(resultType(t0(float64), t(bfloat16))).toBe(bfloat16);
  });

  it('TP-3: int32[n] + f16 0-dim → f16 (the 0-dim tier has a higher category)', () => {
    expect(resultType(t(int32), t0(float16))).toBe(float16);
    expect(resultType(t0(float16), t(int32))).toBe(float16);
  });

  it('TP-3: int32[n] + 1.5 → f32 (a non-integral JS number counts as the default float dtype)', () => {
    expect(resultType(t(int32), 1.5)).toBe(float32);
    expect(resultType(1.5, t(int32))).toBe(float32);
  });

  it('TP-3: bool[n] + 1 → int32 (deviation: PyTorch gives int64, our int category is int32)', () => {
    expect(resultType(t(bool), 1)).toBe(int32);
    expect(resultType(1, t(bool))).toBe(int32);
  });

  it('TP-3: f16 0-dim + f32 0-dim → f32 (same tier: plain promoteTypes)', () => {
    expect(resultType(t0(float16), t0(float32))).toBe(float32);
    expect(resultType(t0(float32), t0(float16))).toBe(float32);
  });

  it('TP-3: f16 0-dim + 1.5 → f16', () => {
    expect(resultType(t0(float16), 1.5)).toBe(float16);
    expect(resultType(1.5, t0(float16))).toBe(float16);
  });

  it('TP-3: f16[n] * 2.0 → f16 (2.0 is integral in JS, so an int scalar; still f16)', () => {
    expect(resultType(t(float16), 2.0)).toBe(float16);
    expect(resultType(t(float16), 2.5)).toBe(float16);
    expect(resultType(t(bfloat16), 2.0)).toBe(bfloat16);
  });

  it('TP-2: JS scalars alone: integral → int32, non-integral → f32, boolean → bool', () => {
    expect(resultType(1)).toBe(int32);
    expect(resultType(-3)).toBe(int32);
    expect(resultType(2.0)).toBe(int32);
    expect(resultType(0.5)).toBe(float32);
    expect(resultType(NaN)).toBe(float32);
    expect(resultType(Infinity)).toBe(float32);
    expect(resultType(true)).toBe(bool);
    expect(resultType(false, true)).toBe(bool);
    expect(resultType(true, 1)).toBe(int32);
    expect(resultType(1, 0.5)).toBe(float32);
  });

  it('TP-2: a single tensor gives its own dtype, whatever its rank', () => {
    for (const d of ALL) {
      expect(resultType(t(d))).toBe(d);
      expect(resultType(t0(d))).toBe(d);
    }
  });

  it('TP-2: within a tier operands are reduced with promoteTypes', () => {
    expect(resultType(t(float16), t(bfloat16))).toBe(float32);
    expect(resultType(t(int32), t(bool), t(float16))).toBe(float16);
    expect(resultType(t0(float16), t0(bfloat16))).toBe(float32);
    expect(resultType(t0(int32), t0(bool))).toBe(int32);
    expect(resultType(t(float32), t(float64))).toBe(float64);
  });

  it('TP-2: a lower tier matters only if its category is higher', () => {
    // same category: the higher tier wins
    expect(resultType(t(float32), t0(float64))).toBe(float32);
    expect(resultType(t(float16), t0(bfloat16))).toBe(float16);
    expect(resultType(t(float16), 1.5)).toBe(float16);
    expect(resultType(t(int32), 5)).toBe(int32);
    expect(resultType(t(bool), true)).toBe(bool);
    expect(resultType(t(bool), t0(bool))).toBe(bool);
    // lower category: ignored
    expect(resultType(t(float16), t0(int32))).toBe(float16);
    expect(resultType(t(float16), true)).toBe(float16);
    expect(resultType(t(int32), t0(bool))).toBe(int32);
    expect(resultType(t(int32), false)).toBe(int32);
    // higher category: promoteTypes(upper, lower)
    expect(resultType(t(bool), t0(int32))).toBe(int32);
    expect(resultType(t(bool), t0(float16))).toBe(float16);
    expect(resultType(t(bool), 1.5)).toBe(float32);
    expect(resultType(t(int32), t0(float64))).toBe(float64);
    expect(resultType(t(int32), t0(bfloat16))).toBe(bfloat16);
    expect(resultType(t0(int32), 1.5)).toBe(float32);
    expect(resultType(t0(bool), 1)).toBe(int32);
    expect(resultType(t0(float64), 1.5)).toBe(float64);
  });

  it('TP-2: three tiers combine: dims over (0-dim over scalars)', () => {
    expect(resultType(t(int32), t0(int32), 1.5)).toBe(float32);
    expect(resultType(t(bool), t0(int32), 1.5)).toBe(float32);
    expect(resultType(t(float16), t0(float64), 1.5)).toBe(float16);
    expect(resultType(t(int32), t0(float16), 1.5)).toBe(float16);
    expect(resultType(t(bool), t0(bool), 1)).toBe(int32);
    expect(resultType(t(int32), 1, 2.5, true)).toBe(float32);
  });

  it('TP-2: rank decides the tier, not size: shapes [1] and [0] are dim>0 tensors', () => {
    expect(resultType(t(float16, [1]), t0(float32))).toBe(float16);
    expect(resultType(t(float16, [0]), t0(float32))).toBe(float16);
    expect(resultType(t(float16, [1, 1]), t(float32, [1]))).toBe(float32);
  });

  it('TP-2: resultType with no operands throws', () => {
    expect(() => resultType()).toThrow();
  });
});

describe('canCast (TP-4)', () => {
  const category = (d: DType) => (d === bool ? 'bool' : d === int32 ? 'int' : 'float');
  // PyTorch's canCast without complex: forbid float → int, float → bool, and non-bool → bool.
  const expected = (from: DType, to: DType) => {
    const f = category(from), g = category(to);
    if (f === 'float' && g !== 'float') return false;
    if (f !== 'bool' && g === 'bool') return false;
    return true;
  };

  it('TP-4: float → int is false', () => {
    for (const f of [float32, float16, bfloat16, float64]) expect(canCast(f, int32), f.name).toBe(false);
  });

  it('TP-4: float → bool is false', () => {
    for (const f of [float32, float16, bfloat16, float64]) expect(canCast(f, bool), f.name).toBe(false);
  });

  it('TP-4: int → bool is false', () => {
    expect(canCast(int32, bool)).toBe(false);
  });

  it('TP-4: bool → anything is true', () => {
    for (const d of ALL) expect(canCast(bool, d), d.name).toBe(true);
  });

  it('TP-4: int → float (and int → int) is true', () => {
    for (const f of [float32, float16, bfloat16, float64]) expect(canCast(int32, f), f.name).toBe(true);
    expect(canCast(int32, int32)).toBe(true);
  });

  it('TP-4: float → float is true in every direction, narrowing included (f16.add_(f32) stores a rounded value)', () => {
    for (const a of [float32, float16, bfloat16, float64])
      for (const b of [float32, float16, bfloat16, float64]) expect(canCast(a, b), `${a.name}→${b.name}`).toBe(true);
  });

  it('TP-4: the full 6×6 table', () => {
    for (const a of ALL) for (const b of ALL) expect(canCast(a, b), `${a.name}→${b.name}`).toBe(expected(a, b));
  });

  it('TP-4: in-place ops check canCast(resultType(self, other), self)', () => {
    // f16.add_(f32): computes in f32, may write to f16
    expect(canCast(resultType(t(float16), t(float32)), float16)).toBe(true);
    // int.add_(float tensor) and int.add_(1.5): compute in float, may not write to int
    expect(canCast(resultType(t(int32), t(float32)), int32)).toBe(false);
    expect(canCast(resultType(t(int32), 1.5), int32)).toBe(false);
    // bool.add_(1): computes in int, may not write to bool
    expect(canCast(resultType(t(bool), 1), bool)).toBe(false);
    // int.add_(1) and f16.mul_(2.0) are fine
    expect(canCast(resultType(t(int32), 1), int32)).toBe(true);
    expect(canCast(resultType(t(float16), 2.0), float16)).toBe(true);
  });
});
