// One benchmark result format for every bench script, and its Markdown table. A bench writes
// docs/benchmarks/<bench>.json (this shape) and docs/benchmarks/<bench>.md; the benchmarks guide
// (test/bench/guide.mjs) is generated from the json files alone.
//
// {
//   bench, title, command, script, date, machine: { cpu, cores, node, platform, arch, … },
//   method: [sentences], libraries: [{ id, label, package, version, threads, completion, notes, error? }],
//   ratios: [{ numerator, denominator, label? }],   // library ids; a denominator list means the best of them
//   lowerIsBetter?,                                   // true: every unit is a time (µs per call); else higher-is-better
//   rows: [{ id, workload, unit, tolerance, target?, results: { [libraryId]: Result } }]
// }
// target: the figure the team aims for (a column when any row has one); 'target' as a ratio's
// denominator divides by it.
// Result: { value, ms, reps, check?: { maxAbs, rel, ok } } | { error } | { absent: why the library
// does not run this workload } (reps 0: a single cold run)
// A library's `native` (ours): the native kernels @core/backend-cpu loaded (backend.native).
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, availableParallelism, platform, arch, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { fmt } from './measure.mjs';

export const BENCHMARKS_DIR = fileURLToPath(new URL('../../../docs/benchmarks/', import.meta.url));

/** The machine, as the reports print it. */
export function machine() {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: platform(),
    arch: arch(),
  };
}

/** The fields every report starts with: which bench, the command that runs it, when and where. */
export function reportHeader(bench, title) {
  return {
    bench,
    title,
    command: `npx -y pnpm@12.4.2 bench:${bench}`,
    script: `test/bench/${bench}.mjs`,
    date: new Date().toISOString().slice(0, 10),
    machine: machine(),
  };
}

export function machineLine(m) {
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform}/${m.arch}, Node ${m.node}`;
}

function libraryOf(report, id) {
  return report.libraries.find((l) => l.id === id);
}

const failed = (r) => r?.check && !r.check.ok;

/** A row's result for a library id; for 'target', the row's target as a result. */
function resultOf(row, id) {
  return id === 'target' ? (row.target == null ? undefined : { value: row.target }) : row.results[id];
}

/**
 * The library id a ratio divides by in one row: the denominator itself, or for a list the one with
 * the best figure (lowest when lower is better) among those that have one and passed their check.
 */
function denominatorOf(report, row, { denominator }) {
  if (!Array.isArray(denominator)) return denominator;
  const usable = denominator.filter((id) => resultOf(row, id)?.value != null && !failed(resultOf(row, id)));
  const better = (a, b) => (report.lowerIsBetter ? resultOf(row, a).value < resultOf(row, b).value : resultOf(row, a).value > resultOf(row, b).value);
  return usable.reduce((best, id) => (best == null || better(id, best) ? id : best), null);
}

/** The ratio of two results of one row, or null when either is missing. */
export function ratio(report, row, q) {
  const a = resultOf(row, q.numerator);
  const b = resultOf(row, denominatorOf(report, row, q));
  if (!a || !b || a.value == null || b.value == null || b.value === 0) return null;
  return a.value / b.value;
}

/** The number of the note `text`, added unless an earlier cell gave the same. */
function noteNumber(notes, text) {
  if (!notes.includes(text)) notes.push(text);
  return notes.indexOf(text) + 1;
}

/** One cell: the figure, `*` for a single cold run, ✗ for a failed check, or why there is none. */
function cell(report, row, id, notes) {
  const lib = libraryOf(report, id);
  if (lib?.error) return `not loaded (${noteNumber(notes, `${lib.label}: not loaded: ${lib.error}`)})`;
  const r = row.results[id];
  if (!r) return '—';
  if (r.absent) return `— (${noteNumber(notes, `${lib?.label ?? id}: ${r.absent}`)})`;
  if (r.error) {
    notes.push(`${lib?.label ?? id}, ${row.workload}: ${r.error}`);
    return `error (${notes.length})`;
  }
  let text = fmt(r.value);
  if (r.reps === 0) text += '*';
  if (failed(r)) {
    notes.push(`${lib?.label ?? id}, ${row.workload}: result differs from ours, max abs error ${r.check.maxAbs.toExponential(2)}, relative ${r.check.rel.toExponential(2)} > ${row.tolerance}`);
    text += ` ✗ (${notes.length})`;
  }
  return text;
}

/** The results table in Markdown, with numbered notes under it for errors and failed checks. */
export function resultsTable(report) {
  // Libraries that failed to load: one note each, which their cells point to.
  const notes = report.libraries.filter((l) => l.error).map((l) => `${l.label}: not loaded: ${l.error}`);
  const ids = report.libraries.map((l) => l.id);
  const labelOf = (id) => libraryOf(report, id)?.label ?? id;
  const ratioLabel = (r) => r.label ?? `${labelOf(r.numerator)} / ${labelOf(r.denominator)}`;
  const targets = report.rows.some((row) => row.target != null);
  const header = ['workload', 'unit', ...report.libraries.map((l) => l.label), ...(targets ? ['target'] : []), ...report.ratios.map(ratioLabel)];
  const align = ['---', '---', ...header.slice(2).map(() => '---:')];
  const lines = [`| ${header.join(' | ')} |`, `| ${align.join(' | ')} |`];
  for (const row of report.rows) {
    const values = ids.map((id) => cell(report, row, id, notes));
    const target = targets ? [row.target == null ? '—' : `${report.lowerIsBetter ? '≤' : '≥'} ${row.target}`] : [];
    const ratios = report.ratios.map((q) => {
      const v = ratio(report, row, q);
      if (v == null) return '—';
      const by = denominatorOf(report, row, q);
      const bad = failed(row.results[q.numerator]) || failed(row.results[by]);
      return `${v.toFixed(2)}×${bad ? ' ✗' : ''}${Array.isArray(q.denominator) ? ` (${labelOf(by)})` : ''}`;
    });
    lines.push(`| ${[row.workload, row.unit, ...values, ...target, ...ratios].join(' | ')} |`);
  }
  const cold = report.rows.some((row) => Object.values(row.results).some((r) => r.reps === 0));
  const after = [];
  if (cold) after.push('\\* a single cold run: the warm-up run alone took longer than 8 s.');
  for (const [i, n] of notes.entries()) after.push(`(${i + 1}) ${n}`);
  return [...lines, ...(after.length ? ['', ...after.map((l) => `${l}  `)] : [])].join('\n').replace(/ {2}$/, '');
}

/** The libraries as a Markdown list: version, threads, how completion was awaited, notes, load errors. */
export function librariesList(report) {
  return report.libraries.map((l) => {
    const parts = [`**${l.label}**: \`${l.package}\`${l.version ? ` ${l.version}` : ''}`];
    if (l.error) parts.push(`failed to load (${l.error})`);
    else {
      if (l.threads != null) parts.push(`${l.threads} thread${l.threads === 1 ? '' : 's'}`);
      if (l.notes?.length) parts.push(l.notes.join('; '));
      if (l.completion) parts.push(`waits with ${l.completion}`);
    }
    return `- ${parts.join('; ')}`;
  }).join('\n');
}

/** A run's method paragraphs, libraries list and results table, as lines (the report and the guide both show them). */
export function runBody(report) {
  return [...report.method.flatMap((m) => [m, '']), librariesList(report), '', resultsTable(report), ''];
}

/** docs/benchmarks/<bench>.md: the whole report for one run. */
export function reportMarkdown(report) {
  return [
    `# ${report.title}`,
    '',
    `Generated by \`${report.command}\` (${report.script}) on ${report.date}.`,
    `Machine: ${machineLine(report.machine)}.`,
    '',
    ...runBody(report),
  ].join('\n');
}

/** Write docs/benchmarks/<bench>.json and .md; returns their paths. */
export function writeReport(report) {
  mkdirSync(BENCHMARKS_DIR, { recursive: true });
  const json = `${BENCHMARKS_DIR}${report.bench}.json`;
  const md = `${BENCHMARKS_DIR}${report.bench}.md`;
  writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(md, reportMarkdown(report));
  return [json, md];
}
