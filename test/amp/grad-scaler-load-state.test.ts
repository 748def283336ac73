// GS-13's loadStateDict on damaged input: every field's type and range is checked before anything
// changes, and the error names the field and the value it got.
import '@core/backend-cpu';
import { AmpError, GradScaler, ValueError, tensor, type GradScalerStateDict } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { expectError } from '../helpers/assert.js';

const GOOD: GradScalerStateDict = { scale: 256, growthFactor: 4, backoffFactor: 0.25, growthInterval: 3, _growthTracker: 2 };

/** A scaler whose device scale exists (after a first scale()), with non-default values everywhere. */
function liveScaler(): GradScaler {
  const s = new GradScaler('cpu', { initScale: 32, growthFactor: 3, backoffFactor: 0.5, growthInterval: 7 });
  s.scale(tensor([1]));
  return s;
}

/** Everything the scaler exposes, the device tensors' values included. */
function snapshot(s: GradScaler) {
  return { state: s.stateDict(), scaleT: Array.from(s._scale!.dataSync()), trackerT: Array.from(s._growthTracker!.dataSync()) };
}

const INT32_MAX = 2 ** 31 - 1;

/** [field, a bad value, what the message says about it]: each is outside the range GS-13 accepts. */
const OUT_OF_RANGE: Array<[keyof GradScalerStateDict, number, string]> = [
  ['scale', 0, "'scale' must be finite and > 0 as a float32, got 0"],
  ['scale', -1, 'got -1'],
  ['scale', Infinity, 'got Infinity'],
  ['scale', NaN, 'got NaN'],
  ['scale', 1e39, 'got 1e+39'], // finite as a double, Inf as the float32 the device holds
  ['scale', 1e-50, 'got 1e-50'], // rounds to 0 in float32
  ['growthFactor', 1, "'growthFactor' must be a finite number > 1, got 1"],
  ['growthFactor', 0.5, 'got 0.5'],
  ['growthFactor', Infinity, 'got Infinity'],
  ['growthFactor', NaN, 'got NaN'],
  ['backoffFactor', 1, "'backoffFactor' must be in (0, 1), got 1"],
  ['backoffFactor', 0, 'got 0'],
  ['backoffFactor', -0.5, 'got -0.5'],
  ['backoffFactor', NaN, 'got NaN'],
  ['growthInterval', 0, `'growthInterval' must be an integer in [1, ${INT32_MAX}], got 0`],
  ['growthInterval', 2.5, 'got 2.5'],
  ['growthInterval', -3, 'got -3'],
  ['growthInterval', 2 ** 31, `got ${2 ** 31}`],
  ['growthInterval', Infinity, 'got Infinity'],
  ['_growthTracker', -1, `'_growthTracker' must be an integer in [0, ${INT32_MAX}], got -1`],
  ['_growthTracker', 0.5, 'got 0.5'],
  ['_growthTracker', 2 ** 31, `got ${2 ** 31}`],
  ['_growthTracker', NaN, 'got NaN'],
];

describe('GS-13 loadStateDict validation', () => {
  it.each(OUT_OF_RANGE)("GS-13: '%s' = %s is a ValueError naming the field and the value; nothing changes", (key, value, message) => {
    for (const s of [liveScaler(), new GradScaler('cpu', { initScale: 32, growthInterval: 7 })]) {
      const before = s._scale === null ? s.stateDict() : snapshot(s);
      const e = expectError(() => s.loadStateDict({ ...GOOD, [key]: value }), ValueError, message);
      expect(e.message).toContain(`'${key}'`);
      expect(s._scale === null ? s.stateDict() : snapshot(s)).toEqual(before);
    }
  });

  it.each([
    ['scale', '256', 'got string "256"'],
    ['growthFactor', null, 'got null'],
    ['backoffFactor', [0.5], 'got an array'],
    ['growthInterval', { n: 3 }, 'got an object'],
    ['_growthTracker', undefined, 'got nothing (the key is missing)'],
    ['_growthTracker', true, 'got boolean "true"'],
    ['scale', 256n, 'got bigint "256"'],
  ] as Array<[keyof GradScalerStateDict, unknown, string]>)("GS-13: '%s' = %s is a TypeError naming the field and what it got; nothing changes", (key, value, message) => {
    const s = liveScaler();
    const before = snapshot(s);
    const bad = { ...GOOD, [key]: value } as unknown as GradScalerStateDict;
    expectError(() => s.loadStateDict(bad), TypeError, `loadStateDict(): '${key}' must be a number, ${message}`);
    expect(snapshot(s)).toEqual(before);
  });

  it('GS-13: the checks run before any field is applied, whichever field is bad', () => {
    // The last field checked is bad: the four good ones before it must not have been applied.
    const s = liveScaler();
    const before = snapshot(s);
    expectError(() => s.loadStateDict({ ...GOOD, _growthTracker: -1 }), ValueError);
    expect(snapshot(s)).toEqual(before);
    expect(s.getGrowthFactor()).toBe(3);
  });

  it('GS-13: the boundary values inside each range load', () => {
    const edge: GradScalerStateDict = {
      scale: 2 ** -149, growthFactor: 1 + 2 ** -52, backoffFactor: 2 ** -30, growthInterval: INT32_MAX, _growthTracker: 0,
    };
    const s = liveScaler();
    s.loadStateDict(edge);
    expect(s.stateDict()).toEqual(edge);
    expect(Array.from(s._growthTracker!.dataSync())).toEqual([0]);
    const big = { ...GOOD, scale: 3.4e38, growthInterval: 1, _growthTracker: INT32_MAX };
    s.loadStateDict(big);
    expect(s.getScale()).toBe(Math.fround(3.4e38));
    expect(Array.from(s._growthTracker!.dataSync())).toEqual([INT32_MAX]);
  });

  it('GS-13: a disabled scaler still ignores whatever it is given; an enabled one refuses {} and non-objects', () => {
    const off = new GradScaler('cpu', { enabled: false });
    off.loadStateDict({ ...GOOD, scale: -1 });
    expect(off.stateDict()).toEqual({});
    const s = liveScaler();
    expectError(() => s.loadStateDict({}), AmpError, 'The source state dict is empty');
    expectError(() => s.loadStateDict(null as unknown as GradScalerStateDict), TypeError, 'expected the object stateDict() returned');
  });
});
