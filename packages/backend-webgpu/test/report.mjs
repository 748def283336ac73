// Writes the webgpu conformance report (docs/conformance/webgpu.md) and the results-only summary
// the support-matrix page reads (docs/conformance/webgpu.summary.json): no timings or error sizes,
// so the summary changes only when support does. Run on lavapipe: `npx -y pnpm@12.4.2 report`.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderMarkdown, runConformance } from '@core/conformance';

const root = (path) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const expectations = JSON.parse(readFileSync(root('packages/conformance/expectations/webgpu.json'), 'utf8'));
const report = await runConformance(async () => {
  await import('@core/backend-webgpu');
  return 'webgpu';
}, { strict: true, expectations });
writeFileSync(root('docs/conformance/webgpu.md'), renderMarkdown(report));
const summary = {
  backend: report.backend,
  ok: report.ok,
  strict: report.strict,
  counts: report.counts,
  categories: report.categories,
  matrix: report.matrix.map(({ maxAbs: _a, maxRel: _r, ...cell }) => cell),
  cases: report.cases.filter((c) => c.status !== 'pass').map((c) => ({ id: c.id, status: c.status, reason: c.reason })),
};
writeFileSync(root('docs/conformance/webgpu.summary.json'), `${JSON.stringify(summary, null, 0)}\n`);
console.log(`webgpu: ${report.counts.pass}/${report.counts.total} pass, ${report.counts.fail} fail${report.ok ? '' : ' — NOT OK'}`);
process.exit(report.ok ? 0 : 1);
