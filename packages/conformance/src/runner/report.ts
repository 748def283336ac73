// The report: every case's result, counts per category, and the support matrix (op × dtype, per
// backend) with pass/fail/skip/xfail counts and the largest absolute and relative errors measured.
// The Markdown rendering is deterministic (no times, no dates) so regenerated docs only change
// when results do.
import { CONTRACT_VERSION, type Capabilities } from '@core/tensor';
import { CATEGORIES, ISOLATED_SKIP, type CaseResult, type Category, type CpuPresence, type Env, type Status } from '../types.js';

/** Every case status, in report order. */
export const STATUSES: readonly Status[] = ['pass', 'fail', 'skip', 'xfail', 'xpass'];
const COLUMNS = ['float32', 'float16', 'bfloat16', 'float64', 'int32', 'bool', '-'] as const;

/** Cases per status, and in all. */
export type Counts = Record<Status, number> & {
  /** All cases counted. */
  total: number;
};

/** One cell of the support matrix: an op at one dtype, with its counts and largest errors. */
export interface MatrixCell extends Counts {
  /** The op (matrix row). */
  readonly op: string;
  /** The dtype (matrix column), or '-'. */
  readonly dtype: string;
  /** The category of the cell's cases. */
  readonly category: Category;
  /** The largest absolute error measured. */
  maxAbs: number;
  /** The largest relative error measured. */
  maxRel: number;
}

/** The result of a conformance run: the backend, every case's result, counts, and the support matrix. */
export interface Report {
  /** The backend under test, as it described itself. */
  readonly backend: {
    /** Its device type. */
    readonly name: string;
    /** The contract version it implements. */
    readonly contractVersion: string;
    /** How many devices it serves. */
    readonly deviceCount: number;
    /** What it declared it supports. */
    readonly capabilities: Capabilities;
    /** Composite ops it has fused kernels for. */
    readonly fused: string[];
  };
  /** The contract version of the @core/tensor the suite ran against. */
  readonly coreContractVersion: string;
  /** Whether the run was strict (xpass and stale expectations fail it). */
  readonly strict: boolean;
  /** No failures; under strict, also no xpass and no stale expectations. */
  readonly ok: boolean;
  /** Cases per status over the whole run. */
  readonly counts: Counts;
  /** Cases per status in each category. */
  readonly categories: Record<Category, Counts>;
  /** The support matrix: op × dtype cells. */
  readonly matrix: MatrixCell[];
  /** Expectation ids that matched no case. */
  readonly staleExpectations: string[];
  /** How the run stood with the cpu backend, and how many cases it skipped for lack of it (those with ISOLATED_SKIP as their reason). */
  readonly cpu: {
    /** Whether the cpu was under test, registered by the runner or before it, or absent (an isolated run). */
    readonly presence: CpuPresence;
    /** Cases skipped because they need the cpu device (0 unless the cpu is absent). */
    readonly skipped: number;
  };
  /** Wall time of the run. */
  readonly durationMs: number;
  /** Every case's result, in run order. */
  readonly cases: CaseResult[];
}

function emptyCounts(): Counts {
  return { pass: 0, fail: 0, skip: 0, xfail: 0, xpass: 0, total: 0 };
}

/** Assemble the report from case results (what `runConformance` does after running them). */
export function buildReport(env: Env, results: CaseResult[], o: { strict: boolean; staleExpectations: string[]; durationMs: number }): Report {
  const counts = emptyCounts();
  const categories = Object.fromEntries(CATEGORIES.map((c) => [c, emptyCounts()])) as Record<Category, Counts>;
  const cells = new Map<string, MatrixCell>();
  for (const r of results) {
    counts[r.status]++;
    counts.total++;
    categories[r.category][r.status]++;
    categories[r.category].total++;
    const key = `${r.category}\u0000${r.op}\u0000${r.dtype}`;
    let cell = cells.get(key);
    if (!cell) {
      cell = { op: r.op, dtype: r.dtype, category: r.category, ...emptyCounts(), maxAbs: 0, maxRel: 0 };
      cells.set(key, cell);
    }
    cell[r.status]++;
    cell.total++;
    if (r.status === 'pass') {
      cell.maxAbs = Math.max(cell.maxAbs, r.maxAbs ?? 0);
      cell.maxRel = Math.max(cell.maxRel, r.maxRel ?? 0);
    }
  }
  const ok = counts.fail === 0 && (!o.strict || (counts.xpass === 0 && o.staleExpectations.length === 0));
  return {
    backend: {
      name: env.name,
      contractVersion: env.backend.contractVersion,
      deviceCount: env.backend.deviceCount,
      capabilities: env.backend.capabilities,
      fused: [...env.fused],
    },
    coreContractVersion: CONTRACT_VERSION,
    strict: o.strict,
    ok,
    counts,
    categories,
    matrix: [...cells.values()],
    staleExpectations: o.staleExpectations,
    cpu: { presence: env.cpuPresence, skipped: results.filter((r) => r.status === 'skip' && r.reason === ISOLATED_SKIP).length },
    durationMs: Math.round(o.durationMs),
    cases: results,
  };
}

function sci(v: number): string {
  if (v === 0) return '0';
  return v.toExponential(1).replace('e-', 'e−');
}

function cellText(c: MatrixCell | undefined): string {
  if (!c) return '';
  if (c.fail > 0) return `**✗ ${c.fail}/${c.total - c.skip}**`;
  const ran = c.pass + c.xfail + c.xpass;
  if (ran === 0) return 'skip';
  const extra = [c.xfail ? `${c.xfail} xfail` : '', c.xpass ? `${c.xpass} xpass` : '', c.skip ? `${c.skip} skip` : ''].filter(Boolean).join(', ');
  return `✓ ${c.pass}${extra ? ` (${extra})` : ''}`;
}

function errorText(c: MatrixCell | undefined): string {
  if (!c || c.pass === 0 || (c.maxAbs === 0 && c.maxRel === 0)) return c && c.pass > 0 ? '0' : '';
  return `${sci(c.maxAbs)} / ${sci(c.maxRel)}`;
}

function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Markdown for one or more backends' reports (several: the matrix gets a row per op and backend). */
export function renderMarkdown(input: Report | readonly Report[], title?: string): string {
  const reports = Array.isArray(input) ? (input as readonly Report[]) : [input as Report];
  const names = reports.map((r) => r.backend.name).join(', ');
  const out: string[] = [];
  out.push(`# Conformance: ${title ?? names}`, '');
  out.push('Generated by `@core/conformance` (do not edit by hand). Each case compares the backend with a float64 reference oracle', 'on inputs already rounded to the tested dtype; see packages/conformance/README.md for the categories and tolerance classes.', '');
  for (const r of reports) {
    const caps = r.backend.capabilities;
    const dtypes = Object.entries(caps.dtypes).map(([d, s]) => `${d}${s?.compute ? '' : s?.storage ? ' (storage only)' : ' (none)'}`).join(', ');
    out.push(`## ${r.backend.name}`, '');
    out.push(`- contract ${r.backend.contractVersion} (core ${r.coreContractVersion}), ${r.backend.deviceCount} device(s)`);
    out.push(`- dtypes: ${dtypes}; syncRead ${caps.syncRead}; strictNumerics ${caps.strictNumerics}; pinnedMemory ${caps.pinnedMemory}; fused kernels: ${r.backend.fused.join(', ') || 'none'}`);
    if (r.cpu.presence === 'absent') out.push(`- isolated: the cpu backend was not registered; ${r.cpu.skipped} cases that need the cpu device were skipped`);
    out.push(`- **${r.counts.total} cases: ${r.counts.pass} pass, ${r.counts.fail} fail, ${r.counts.skip} skip, ${r.counts.xfail} xfail, ${r.counts.xpass} xpass**${r.strict ? ' (strict)' : ''} — ${r.ok ? 'OK' : 'NOT OK'}`, '');
    out.push(table(['category', 'cases', 'pass', 'fail', 'skip', 'xfail', 'xpass'],
      CATEGORIES.filter((c) => r.categories[c].total > 0).map((c) => {
        const k = r.categories[c];
        return [c, String(k.total), String(k.pass), String(k.fail), String(k.skip), String(k.xfail), String(k.xpass)];
      })), '');
  }

  out.push('## Support matrix', '', 'Cells: cases passed (✓), failed (✗ failed/ran), expected failures (xfail), skips. Errors: max |a − e| / max |a − e|/|e| over passing cases.', '');
  const multi = reports.length > 1;
  for (const category of CATEGORIES) {
    const ops = [...new Set(reports.flatMap((r) => r.matrix.filter((c) => c.category === category).map((c) => c.op)))];
    if (ops.length === 0) continue;
    const cols = COLUMNS.filter((d) => reports.some((r) => r.matrix.some((c) => c.category === category && c.dtype === d)));
    out.push(`### ${category}`, '');
    const rows: string[][] = [];
    const errRows: string[][] = [];
    for (const op of ops) {
      for (const r of reports) {
        const find = (d: string) => r.matrix.find((c) => c.category === category && c.op === op && c.dtype === d);
        const label = multi ? [`\`${op}\``, r.backend.name] : [`\`${op}\``];
        rows.push([...label, ...cols.map((d) => cellText(find(d)))]);
        if (cols.some((d) => errorText(find(d)) !== '' && errorText(find(d)) !== '0')) errRows.push([...label, ...cols.map((d) => errorText(find(d)))]);
      }
    }
    const head = multi ? ['op', 'backend', ...cols] : ['op', ...cols];
    out.push(table(head, rows), '');
    if (errRows.length > 0) out.push('<details><summary>max errors</summary>', '', table(head, errRows), '', '</details>', '');
  }

  for (const r of reports) {
    const fails = r.cases.filter((c) => c.status === 'fail');
    const xfails = r.cases.filter((c) => c.status === 'xfail' || c.status === 'xpass');
    const skips = r.cases.filter((c) => c.status === 'skip');
    const prefix = multi ? `${r.backend.name}: ` : '';
    if (fails.length) out.push(`## ${prefix}Failures`, '', ...fails.map((c) => `- \`${c.id}\`: ${oneLine(c.message)}`), '');
    if (xfails.length) out.push(`## ${prefix}Expected failures`, '', ...xfails.map((c) => `- \`${c.id}\` (${c.status}): ${oneLine(c.reason)}`), '');
    if (r.staleExpectations.length) out.push(`## ${prefix}Stale expectations`, '', ...r.staleExpectations.map((id) => `- \`${id}\` matches no case`), '');
    if (skips.length) {
      const byReason = new Map<string, string[]>();
      for (const c of skips) {
        const key = (c.reason ?? '').replace(/ \(checked by .*\)$/, '');
        byReason.set(key, [...(byReason.get(key) ?? []), c.id]);
      }
      out.push(`## ${prefix}Skipped (${skips.length})`, '');
      for (const [reason, ids] of [...byReason].sort((a, b) => b[1].length - a[1].length)) {
        out.push(`- ${ids.length} × ${oneLine(reason)}${ids.length <= 3 ? `: ${ids.map((i) => `\`${i}\``).join(', ')}` : ` (e.g. \`${ids[0]}\`)`}`);
      }
      out.push('');
    }
  }
  return `${out.join('\n').trimEnd()}\n`;
}

function oneLine(text: string | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').replace(/\|/g, '\\|');
}
