// Every category's case builder, in report order. Mixed precision: autocast (AC-*: the policy table
// per op through the op table and the oracle, nesting, the cast cache, gradient dtypes) and
// gradscaler (GS-*: the scale/unscale/step/update state machine, and its two device-side
// composites against the oracle's GS-6/GS-9 arithmetic).
import type { Case, Category, Env } from '../types.js';
import { autocastCases } from './autocast.js';
import { autogradCases } from './autograd.js';
import { deviceCases } from './devices.js';
import { goldenCases } from './goldens.js';
import { gradScalerCases } from './gradscaler.js';
import { optimizerCases } from './optim.js';
import { poolingCases } from './pooling.js';
import { promotionCases } from './promotion.js';
import { randomCases } from './random.js';
import { storageCases } from './storage.js';
import { tableCases } from './table.js';
import { trainingCases } from './training.js';
import { transferCases } from './transfers.js';
import { CATEGORIES } from '../types.js';

const BUILDERS: ReadonlyArray<(env: Env) => Case[]> = [
  storageCases, tableCases, promotionCases, deviceCases, transferCases, randomCases, autogradCases, poolingCases, optimizerCases, autocastCases, gradScalerCases,
  trainingCases, goldenCases,
];

/** All cases for the backend in `env`, ordered by category (report order), ids unique. */
export function buildCases(env: Env): Case[] {
  const all = BUILDERS.flatMap((build) => build(env));
  const seen = new Set<string>();
  for (const c of all) {
    if (seen.has(c.id)) throw new Error(`conformance: duplicate case id '${c.id}'`);
    seen.add(c.id);
  }
  const order = (c: Category) => CATEGORIES.indexOf(c);
  return all.map((c, i) => ({ c, i })).sort((a, b) => order(a.c.category) - order(b.c.category) || a.i - b.i).map(({ c }) => c);
}
