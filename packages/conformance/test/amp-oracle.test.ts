// The oracle's GradScaler arithmetic against the spec's worked statements (GS-5, GS-6, GS-9, GS-10).
import { describe, expect, it } from 'vitest';
import { invScale, scaleTrajectory, unscaleValue, updateScale } from '../src/oracle/amp.js';

describe('GS-9/GS-10 scale updates', () => {
  it('an overflow takes 65536 to 32768 and resets the tracker', () => {
    expect(updateScale({ scale: 65536, tracker: 1234 }, true, 2, 0.5, 2000)).toEqual({ scale: 32768, tracker: 0 });
  });
  it('grows on exactly the 2000th consecutive clean update, then the tracker restarts', () => {
    const t = scaleTrajectory({ scale: 65536, tracker: 0 }, Array<boolean>(2001).fill(false), 2, 0.5, 2000);
    expect(t[1998]).toEqual({ scale: 65536, tracker: 1999 });
    expect(t[1999]).toEqual({ scale: 131072, tracker: 0 });
    expect(t[2000]).toEqual({ scale: 131072, tracker: 1 });
  });
  it('never grows to Inf, and can fall below 1', () => {
    expect(updateScale({ scale: 2 ** 127, tracker: 0 }, false, 2, 0.5, 1)).toEqual({ scale: 2 ** 127, tracker: 0 });
    expect(scaleTrajectory({ scale: 1, tracker: 0 }, [true, true], 2, 0.5, 10).at(-1)).toEqual({ scale: 0.25, tracker: 0 });
  });
  it('rounds float64 products once to float32', () => {
    const s = Math.fround(1002.74);
    expect(updateScale({ scale: s, tracker: 0 }, true, 2, 0.3, 5).scale).toBe(Math.fround(s * 0.3));
    expect(Math.fround(s * 0.3)).not.toBe(Math.fround(s * Math.fround(0.3))); // the f64 product matters here
  });
});

describe('GS-5/GS-6 unscaling', () => {
  it('inv_scale is f32(1/scale) and values round into the grad dtype', () => {
    expect(invScale(65536)).toBe(2 ** -16);
    expect(invScale(3)).toBe(Math.fround(1 / 3));
    expect(unscaleValue(3, 'float32', invScale(3))).toBe(Math.fround(3 * Math.fround(1 / 3)));
    expect(unscaleValue(3, 'bfloat16', invScale(3))).toBe(1);
    expect(unscaleValue(3, 'float64', invScale(3))).toBe(3 * Math.fround(1 / 3));
    expect(unscaleValue(Infinity, 'float16', 0.5)).toBe(Infinity);
    expect(unscaleValue(NaN, 'float32', 0.5)).toBeNaN();
  });
});
