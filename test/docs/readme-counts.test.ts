// The README's op, layer and optimizer counts are generated (readme-counts.ts): this test fails
// when the README's paragraph differs from a fresh count. UPDATE_DOCS=1 writes the new one.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { END, REGENERATE, renderCounts, START } from './readme-counts.js';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));

describe("the README's counts", () => {
  it('match the op table and the exports of @core/nn and @core/optim', () => {
    const text = readFileSync(README, 'utf8');
    const from = text.indexOf(START);
    const to = text.indexOf(END);
    expect(from, `README.md has no "${START}" … "${END}" block`).toBeGreaterThanOrEqual(0);
    expect(to).toBeGreaterThan(from);
    const committed = text.slice(from, to + END.length);
    const fresh = renderCounts();
    if (process.env.UPDATE_DOCS === '1') {
      writeFileSync(README, text.slice(0, from) + fresh + text.slice(to + END.length));
      return;
    }
    expect(committed, `README.md's counts are stale; regenerate them: ${REGENERATE}`).toBe(fresh);
  });
});
