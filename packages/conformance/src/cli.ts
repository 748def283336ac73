#!/usr/bin/env node
// core-conformance --backend <module> [--device <type>] [--with-cpu] [--strict] [--report out.json]
//                  [--markdown out.md] [--expectations file.json] [--filter <substring>] [--compiled] [--quiet]
//
// <module> is imported for its side effect (it registers its backend, like '@core/backend-cpu'),
// or exports a Backend / BackendFactory / function returning one as its default export.
//
// The run is isolated unless --with-cpu is given: the CLI never imports @core/backend-cpu, so the
// backend is tested as a program that imports only it uses it, and cases that need the cpu device
// (transfers to and from it, the cpu-scalar rules) are skipped and counted. --with-cpu registers the
// cpu too and runs them. When the module registers the cpu itself (@core/backend-cpu under test, or
// a module that imports it), isolation does not apply, and the summary says so.
//
// --compiled runs every case compiled (RunOptions.compiled): wrapped in compile() and called until
// it replays; the summary counts the cases that replayed, the eager-only ones and those with no
// compiled form.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConformanceSetupError, type BackendLoader } from './runner/env.js';
import { runConformance } from './runner/run.js';
import { renderMarkdown, type Report } from './runner/report.js';
import { CATEGORIES, NO_COMPILED_FORM, type CaseResult, type CpuPresence } from './types.js';

interface Args {
  backend?: string;
  device?: string;
  strict: boolean;
  report?: string;
  markdown?: string;
  expectations?: string;
  filter?: string;
  quiet: boolean;
  withCpu: boolean;
  compiled: boolean;
}

const USAGE = 'usage: core-conformance --backend <module> [--device <type>] [--with-cpu] [--strict] [--report out.json] [--markdown out.md] [--expectations file.json] [--filter <substring>] [--compiled] [--quiet]';

function parseArgs(argv: string[]): Args {
  const args: Args = { strict: false, quiet: false, withCpu: false, compiled: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new ConformanceSetupError(`${a} needs a value\n${USAGE}`);
      return v;
    };
    switch (a) {
      case '--backend': args.backend = value(); break;
      case '--device': args.device = value(); break;
      case '--strict': args.strict = true; break;
      case '--report': args.report = value(); break;
      case '--markdown': args.markdown = value(); break;
      case '--expectations': args.expectations = value(); break;
      case '--filter': args.filter = value(); break;
      case '--quiet': args.quiet = true; break;
      case '--with-cpu': args.withCpu = true; break;
      case '--compiled': args.compiled = true; break;
      case '--help': case '-h': console.log(USAGE); process.exit(0); break;
      default: throw new ConformanceSetupError(`unknown argument ${a}\n${USAGE}`);
    }
  }
  if (!args.backend) throw new ConformanceSetupError(`--backend is required\n${USAGE}`);
  return args;
}

/** Import a path (relative to the working directory) or a package (from here, else from the working directory). */
async function importModule(spec: string): Promise<Record<string, unknown>> {
  if (spec.startsWith('.') || spec.startsWith('/') || /^[A-Za-z]:[\\/]/.test(spec)) return import(pathToFileURL(resolve(spec)).href);
  try {
    return await import(spec);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_MODULE_NOT_FOUND') throw e;
    return import(pathToFileURL(resolveEsmFromCwd(spec)).href);
  }
}

/**
 * A package's ESM entry as seen from the working directory. require.resolve would pick the CJS
 * build, which loads the CJS copy of @core/tensor next to the ESM one this CLI uses: two cores.
 */
function resolveEsmFromCwd(spec: string): string {
  const require = createRequire(join(process.cwd(), 'package.json'));
  try {
    const manifestPath = require.resolve(`${spec}/package.json`);
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { exports?: { '.'?: { import?: string | { default?: string } } }; module?: string };
    const entry = manifest.exports?.['.']?.import;
    const file = typeof entry === 'string' ? entry : entry?.default ?? manifest.module;
    if (file) return join(dirname(manifestPath), file);
  } catch {
    // No readable manifest (a plain module path): fall back to Node's own resolution.
  }
  return require.resolve(spec);
}

function loaderFor(spec: string): BackendLoader {
  return async () => {
    const mod = await importModule(spec);
    const d = mod.default as unknown;
    if (typeof d === 'function') return (d as () => ReturnType<BackendLoader>)();
    if (d && typeof d === 'object' && ('kernels' in d || 'create' in d)) return d as ReturnType<BackendLoader>;
    return undefined; // registered on import: the runner finds the new name
  };
}

const MARK: Record<CaseResult['status'], string> = { pass: '.', fail: 'F', skip: 's', xfail: 'x', xpass: 'X' };

function summary(report: Report, compiled: boolean): string {
  const lines = [`\n${report.backend.name}${compiled ? ' (compiled)' : ''}: ${report.counts.total} cases in ${(report.durationMs / 1000).toFixed(1)} s — ${report.counts.pass} pass, ${report.counts.fail} fail, ${report.counts.skip} skip, ${report.counts.xfail} xfail, ${report.counts.xpass} xpass`];
  for (const c of CATEGORIES) {
    const k = report.categories[c];
    if (k.total > 0) lines.push(`  ${c.padEnd(13)} ${String(k.total).padStart(5)}  pass ${k.pass}${k.fail ? `  FAIL ${k.fail}` : ''}${k.skip ? `  skip ${k.skip}` : ''}${k.xfail ? `  xfail ${k.xfail}` : ''}${k.xpass ? `  XPASS ${k.xpass}` : ''}`);
  }
  if (compiled) lines.push(compiledLine(report.cases));
  const isolation = isolationLine(report.cpu.presence, report.cpu.skipped);
  if (isolation) lines.push(isolation);
  for (const r of report.cases.filter((x) => x.status === 'fail')) lines.push(`FAIL ${r.id}\n     ${r.message}`);
  for (const r of report.cases.filter((x) => x.status === 'xpass')) lines.push(`XPASS ${r.id} (listed as xfail: ${r.reason})`);
  for (const id of report.staleExpectations) lines.push(`STALE expectation ${id} matches no case`);
  lines.push(report.ok ? 'OK' : `NOT OK${report.strict ? ' (strict)' : ''}`);
  return lines.join('\n');
}

/** What a compiled run covered: the cases that replayed, the eager-only ones (listed), those with no compiled form. */
function compiledLine(cases: readonly CaseResult[]): string {
  const eagerOnly = cases.filter((r) => r.status === 'skip' && r.reason?.startsWith('eager only:'));
  const noForm = cases.filter((r) => r.reason === NO_COMPILED_FORM).length;
  const replayed = cases.filter((r) => r.status === 'pass').length;
  const ops = [...new Set(eagerOnly.map((r) => r.op))].join(', ');
  return `compiled: ${replayed} cases replayed and passed; ${eagerOnly.length} eager only${ops ? ` (${ops})` : ''}; ${noForm} with no compiled form`;
}

/** What the summary says about the cpu backend: an isolated run (the CLI's default) or why the run is not one. */
function isolationLine(presence: CpuPresence, skipped: number): string | null {
  switch (presence) {
    case 'absent': return `isolated: the cpu backend is not registered; ${skipped} cases that need the cpu device skipped (--with-cpu runs them)`;
    case 'already-registered': return 'not isolated: the backend module registered the cpu backend too, so the cases that need the cpu device ran';
    case 'under-test': return 'not isolated: the backend under test is the cpu';
    case 'registered-by-runner': return null; // --with-cpu: what was asked for
    default: return presence satisfies never;
  }
}

async function write(path: string, text: string): Promise<void> {
  await mkdir(dirname(resolve(path)), { recursive: true });
  await writeFile(path, text);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const expectations = args.expectations ? JSON.parse(await readFile(args.expectations, 'utf8')) : undefined;
  let column = 0;
  const report = await runConformance(loaderFor(args.backend!), {
    ...(args.device ? { device: args.device } : {}),
    ...(args.filter ? { filter: args.filter } : {}),
    expectations,
    strict: args.strict,
    isolated: !args.withCpu,
    compiled: args.compiled,
    rerunCommand: (id) => ['core-conformance', '--backend', args.backend, ...(args.device ? ['--device', args.device] : []), ...(args.withCpu ? ['--with-cpu'] : []), ...(args.compiled ? ['--compiled'] : []), '--filter', `'${id}'`].join(' '),
    onResult: (r) => {
      if (args.quiet) return;
      process.stdout.write(MARK[r.status]);
      if (++column % 100 === 0) process.stdout.write('\n');
    },
  });
  console.log(summary(report, args.compiled));
  if (args.report) await write(args.report, `${JSON.stringify(report, null, 2)}\n`);
  if (args.markdown) await write(args.markdown, renderMarkdown(report));
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof ConformanceSetupError ? e.message : e);
    process.exit(2);
  },
);
