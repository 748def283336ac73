// docs/guides/benchmarks.md is generated from the benchmark results in docs/benchmarks/*.json by
// test/bench/guide.mjs (the bench commands regenerate it after each run). This test regenerates it
// and fails when the committed page differs: a json file committed without its page, or a page
// edited by hand. UPDATE_DOCS=1 writes the new page.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GUIDE, loadResults, REGENERATE, renderGuide } from '../bench/guide.mjs';

describe('the benchmarks guide', () => {
  it('has results to show: docs/benchmarks/cpu.json is committed', () => {
    expect(loadResults().map((r) => (r as { bench: string }).bench)).toContain('cpu');
  });

  it('matches the committed results in docs/benchmarks/*.json', () => {
    const page = renderGuide();
    if (process.env.UPDATE_DOCS === '1') {
      writeFileSync(GUIDE, page);
      return;
    }
    const committed = existsSync(GUIDE) ? readFileSync(GUIDE, 'utf8') : '';
    if (committed !== page) {
      const a = committed.split('\n');
      const b = page.split('\n');
      let at = 0;
      while (a[at] === b[at]) at++;
      throw new Error(
        `docs/guides/benchmarks.md is stale (first difference at line ${at + 1}:\n  committed: ${a[at] ?? '(end of file)'}\n  generated: ${b[at]})\n` +
          `Regenerate it: ${REGENERATE}`,
      );
    }
  });
});
