// Builds docs/guides/support-matrix.md from conformance runs: the cpu backend (with its
// expectations file, strict, as CI runs it) and jsref, the third-party example backend in
// examples/custom-backend. Only results go into the page (no timings, no error magnitudes, which
// can differ in the last bits between Node versions), so it changes only when support does.
//
// Regenerate: cd test && UPDATE_DOCS=1 npx vitest run docs/support-matrix
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CATEGORIES, runConformance, type Category, type MatrixCell, type Report } from '@core/conformance';
import { REPO_ROOT } from './snippets.js';

export const PAGE = join(REPO_ROOT, 'docs', 'guides', 'support-matrix.md');
export const REGENERATE = 'cd test && UPDATE_DOCS=1 npx vitest run docs/support-matrix';

interface BackendInfo {
  readonly package: string;
  readonly status: string;
}

const INFO: Record<string, BackendInfo> = {
  cpu: { package: '`@core/backend-cpu`', status: 'available' },
  jsref: { package: '[`examples/custom-backend`](../../examples/custom-backend/README.md)', status: 'example of a third-party backend (not published)' },
  webgpu: { package: '`@core/backend-webgpu`', status: 'in this repository, not yet on npm; measured on lavapipe ([report](../conformance/webgpu.md))' },
};

/** Backends listed without results: not yet run on their hardware. */
const PLANNED = [
  {
    name: 'cuda',
    package: '`@core/backend-cuda`',
    status: 'in this repository, builds with nvcc; **not yet run on a GPU** (conformance passes on a fake driver over its CPU emulation; `native/cuda/gpu-check.sh` runs it on one)',
  },
];

const DTYPES = ['float32', 'float16', 'bfloat16', 'float64', 'int32', 'bool'] as const;
/** Categories whose rows are ops a user calls, shown as op × dtype tables. */
const OP_TABLES: readonly { category: Category; title: string; blurb: string }[] = [
  { category: 'primitives', title: 'Elementwise ops, reductions, matmul, indexing, casts', blurb: 'What backends implement as kernels (through the public API: `x.exp()`, `x.to(float16)`, `x.sum()`, …).' },
  { category: 'composites', title: 'Composite ops', blurb: 'Ops core builds from the primitives (`softmax` and `logSoftmax` also through a backend\'s fused kernel where it has one).' },
  { category: 'views', title: 'Views and in-place writes through views', blurb: 'Shape and stride changes that share storage, and writes that must land in the base tensor.' },
];

/** Run the suite against every backend the page covers. */
export async function conformanceReports(): Promise<Report[]> {
  const cpuExpectations = JSON.parse(readFileSync(join(REPO_ROOT, 'packages', 'conformance', 'expectations', 'cpu.json'), 'utf8')) as unknown;
  const cpu = await runConformance(async () => {
    await import('@core/backend-cpu');
    return 'cpu';
  }, { strict: true, expectations: cpuExpectations });
  // The example's source, not its build: the integration tests do not build the examples.
  const { createJsRefBackend } = await import('../../examples/custom-backend/src/backend.js');
  const jsref = await runConformance(() => createJsRefBackend(), { strict: true });
  // webgpu's results depend on the driver, so its column comes from the committed summary that
  // `npx -y pnpm@12.4.2 --filter @core/backend-webgpu report` writes on lavapipe.
  const webgpu = JSON.parse(readFileSync(join(REPO_ROOT, 'docs', 'conformance', 'webgpu.summary.json'), 'utf8')) as Report;
  return [cpu, jsref, webgpu];
}

function cellMark(c: MatrixCell | undefined): string {
  if (!c) return '';
  if (c.fail > 0) return `✗ ${c.fail}`;
  if (c.pass + c.xpass === 0 && c.xfail > 0) return 'xfail';
  if (c.pass + c.xfail + c.xpass === 0) return '—';
  return c.xfail > 0 ? '✓ (xfail)' : '✓';
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

function dtypeSummary(r: Report): { compute: string; storageOnly: string } {
  const entries = Object.entries(r.backend.capabilities.dtypes);
  const compute = entries.filter(([, s]) => s?.compute).map(([d]) => d);
  const storageOnly = entries.filter(([, s]) => s?.storage && !s.compute).map(([d]) => d);
  return { compute: compute.join(', '), storageOnly: storageOnly.join(', ') || '—' };
}

function counts(r: Report, category?: Category): string {
  const k = category ? r.categories[category] : r.counts;
  if (k.total === 0) return '';
  const extra = [k.fail ? `**${k.fail} fail**` : '', k.skip ? `${k.skip} skip` : '', k.xfail ? `${k.xfail} xfail` : '', k.xpass ? `**${k.xpass} xpass**` : '']
    .filter(Boolean).join(', ');
  return `${k.pass}/${k.total}${extra ? ` (${extra})` : ''}`;
}

/** The page. */
export function renderSupportMatrix(reports: readonly Report[]): string {
  const names = reports.map((r) => r.backend.name);
  const out: string[] = [];
  out.push(
    '# Support matrix',
    '',
    '<!-- Generated by test/docs/support-matrix.ts from conformance runs; do not edit by hand. -->',
    `<!-- Regenerate: ${REGENERATE} -->`,
    '',
    'What each backend runs, measured: this page is generated from the [conformance suite](writing-a-backend.md#running-the-conformance-suite),',
    'which compares every backend with a float64 reference oracle, and a test fails when the page no longer matches a fresh run.',
    `Regenerate it with \`${REGENERATE}\`. The per-case detail for the cpu backend, with`,
    'the largest errors measured, is in [docs/conformance/cpu.md](../conformance/cpu.md).',
    '',
    '## Backends',
    '',
  );
  const rows = reports.map((r) => {
    const info = INFO[r.backend.name] ?? { package: '', status: '' };
    const d = dtypeSummary(r);
    const caps = r.backend.capabilities;
    return [
      `\`${r.backend.name}\``, info.package, info.status, String(r.backend.deviceCount), d.compute, d.storageOnly,
      caps.syncRead ? 'yes' : 'no (await reads)', caps.pinnedMemory ? 'yes' : 'no', r.backend.fused.join(', ') || 'none',
      `${counts(r)}${r.ok ? '' : ' — **NOT OK**'}`,
    ];
  });
  for (const p of PLANNED) rows.push([`\`${p.name}\``, p.package, p.status, '', '', '', '', '', '', '']);
  out.push(table(['device type', 'package', 'status', 'devices', 'computes', 'stores only', 'sync reads', 'pinned memory', 'fused kernels', 'conformance (pass/cases)'], rows), '');
  out.push(
    'Skipped cases are ruled out by what a backend declares (a dtype it does not compute or store, fused kernels it does not have,',
    'synchronous reads), or need a second device the backend does not have; they are listed at the end with their reasons.',
    'For everything a backend does not compute, the suite checks that core raises a `DTypeError` before any kernel runs (the',
    '`capabilities` category).',
    '',
    '## By category',
    '',
  );
  const categories = CATEGORIES.filter((c) => reports.some((r) => r.categories[c].total > 0));
  out.push(table(['category', ...names], categories.map((c) => [c, ...reports.map((r) => counts(r, c))])), '');

  out.push(
    '## Ops × dtypes',
    '',
    `Each cell is ${names.map((n) => `\`${n}\``).join(' / ')}: ✓ every case passed, ✗ *n* cases failed, xfail an expected failure`,
    '(listed in the backend\'s expectations file), — ruled out by the backend\'s declared capabilities (core raises a `DTypeError`);',
    'empty where core does not define the op for that dtype. The **grad** column is the autograd category: the op\'s gradient',
    'checked against central differences in float32 and float64.',
    '',
  );
  for (const { category, title, blurb } of OP_TABLES) {
    out.push(`### ${title}`, '', blurb, '');
    const ops = [...new Set(reports.flatMap((r) => r.matrix.filter((c) => c.category === category).map((c) => c.op)))];
    const cols = DTYPES.filter((d) => reports.some((r) => r.matrix.some((c) => c.category === category && c.dtype === d)));
    const find = (r: Report, cat: Category, op: string, dtype: string) => r.matrix.find((c) => c.category === cat && c.op === op && c.dtype === dtype);
    const joinMarks = (marks: string[]) => (marks.every((m) => m === '') ? '' : marks.map((m) => m || '·').join(' / '));
    const body = ops.map((op) => {
      const cells = cols.map((d) => joinMarks(reports.map((r) => cellMark(find(r, category, op, d)))));
      const grad = joinMarks(reports.map((r) => {
        const gradCells = r.matrix.filter((c) => c.category === 'autograd' && c.op === op);
        if (gradCells.length === 0) return '';
        const merged = gradCells.reduce((a, c) => ({ ...a, pass: a.pass + c.pass, fail: a.fail + c.fail, skip: a.skip + c.skip, xfail: a.xfail + c.xfail, xpass: a.xpass + c.xpass }));
        return cellMark(merged);
      }));
      return [`\`${op}\``, ...cells, grad];
    });
    out.push(table(['op', ...cols, 'grad'], body), '');
  }

  out.push('## Skipped cases, and why', '');
  for (const r of reports) {
    const byReason = new Map<string, number>();
    for (const c of r.cases) {
      if (c.status !== 'skip') continue;
      const reason = (c.reason ?? '').replace(/ \(checked by .*\)$/, '').replace(/\s+/g, ' ');
      byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
    }
    out.push(`**${r.backend.name}** (${r.counts.skip} skipped)`, '');
    for (const [reason, n] of [...byReason].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) out.push(`- ${n} × ${reason}`);
    out.push('');
    const failed = r.cases.filter((c) => c.status === 'fail' || c.status === 'xpass');
    if (failed.length > 0) {
      out.push(`**${r.backend.name}: failures**`, '', ...failed.map((c) => `- \`${c.id}\` (${c.status})`), '');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}
