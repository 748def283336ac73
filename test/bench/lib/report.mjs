// One benchmark result format for every bench script, and its Markdown table. A bench writes
// docs/benchmarks/<bench>.json (this shape) and docs/benchmarks/<bench>.md; the benchmarks guide
// (test/bench/guide.mjs) is generated from the json files alone.
//
// {
//   bench, title, command, script, date, machine: { cpu, cores, node, platform, arch, … },
//   method: [sentences], libraries: [{ id, label, package, version, threads, completion, notes, error? }],
//   ratios: [{ numerator, denominator }],            // library ids; every unit is higher-is-better
//   rows: [{ id, workload, unit, tolerance, results: { [libraryId]: Result } }]
// }
// Result: { value, ms, reps, check?: { maxAbs, rel, ok } } | { error } (reps 0: a single cold run)
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

export function machineLine(m) {
  return `${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.platform}/${m.arch}, Node ${m.node}`;
}

function libraryOf(report, id) {
  return report.libraries.find((l) => l.id === id);
}

/** The ratio of two results of one row, or null when either is missing. */
export function ratio(row, { numerator, denominator }) {
  const a = row.results[numerator];
  const b = row.results[denominator];
  if (!a || !b || a.value == null || b.value == null || b.value === 0) return null;
  return a.value / b.value;
}

const failed = (r) => r?.check && !r.check.ok;

/** One cell: the figure, `*` for a single cold run, ✗ for a failed check, or what went wrong. */
function cell(report, row, id, notes) {
  const lib = libraryOf(report, id);
  if (lib?.error) return `not loaded (${notes.indexOf(`${lib.label}: not loaded: ${lib.error}`) + 1})`;
  const r = row.results[id];
  if (!r) return '—';
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
  const ratioLabel = (r) => `${libraryOf(report, r.numerator)?.label ?? r.numerator} / ${libraryOf(report, r.denominator)?.label ?? r.denominator}`;
  const header = ['workload', 'unit', ...report.libraries.map((l) => l.label), ...report.ratios.map(ratioLabel)];
  const align = ['---', '---', ...header.slice(2).map(() => '---:')];
  const lines = [`| ${header.join(' | ')} |`, `| ${align.join(' | ')} |`];
  for (const row of report.rows) {
    const values = ids.map((id) => cell(report, row, id, notes));
    const ratios = report.ratios.map((q) => {
      const v = ratio(row, q);
      if (v == null) return '—';
      const bad = failed(row.results[q.numerator]) || failed(row.results[q.denominator]);
      return `${v.toFixed(2)}×${bad ? ' ✗' : ''}`;
    });
    lines.push(`| ${[row.workload, row.unit, ...values, ...ratios].join(' | ')} |`);
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
