// docs/guides/support-matrix.md is generated from conformance runs (support-matrix.ts); this test
// regenerates it and fails when the committed page differs. UPDATE_DOCS=1 writes the new page.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { conformanceReports, PAGE, REGENERATE, renderSupportMatrix } from './support-matrix.js';

describe('the support matrix page', () => {
  it('matches a fresh conformance run of the cpu and jsref backends', async () => {
    const reports = await conformanceReports();
    for (const r of reports) expect(r.ok, `${r.backend.name}: conformance is not OK, so the matrix would record failures`).toBe(true);
    const page = renderSupportMatrix(reports);
    if (process.env.UPDATE_DOCS === '1') {
      writeFileSync(PAGE, page);
      return;
    }
    const committed = existsSync(PAGE) ? readFileSync(PAGE, 'utf8') : '';
    if (committed !== page) {
      const a = committed.split('\n');
      const b = page.split('\n');
      const at = b.findIndex((line, i) => line !== a[i]);
      throw new Error(
        `docs/guides/support-matrix.md is stale (first difference at line ${at + 1}:\n  committed: ${a[at] ?? '(end of file)'}\n  generated: ${b[at]})\n` +
          `Regenerate it: ${REGENERATE}`,
      );
    }
  });
});
