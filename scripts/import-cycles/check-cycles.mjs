#!/usr/bin/env node
// Fails on a new runtime import cycle in packages/*/src, and on a cycle in the baseline that is
// gone, so the baseline (baseline.json beside this file) only ever shrinks.
//
// Only imports that survive compilation count: `import type`, `import { type X }`,
// `export type … from` and imports used only as types are erased by TypeScript (and esbuild), so
// they cannot make modules wait on each other. Dynamic import() does not count either: it runs
// once every module has loaded, which is how a cycle is broken.
//
// Usage (from the repository root):
//   npx -y pnpm@12.4.2 check:cycles            check (also part of `npx -y pnpm@12.4.2 test`)
//   npx -y pnpm@12.4.2 check:cycles --update   rewrite the baseline to the cycles that exist now
// For tests: --root <dir> checks another tree, --baseline <file> reads/writes another baseline.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const UPDATE_COMMAND = 'npx -y pnpm@12.4.2 check:cycles --update';
/** How many loops a message lists before it says how many more there are. */
const MAX_LISTED = 12;

let args;
try {
  args = parseArgs({
    options: { update: { type: 'boolean' }, root: { type: 'string' }, baseline: { type: 'string' } },
    strict: true,
  }).values;
} catch (error) {
  usage(error.message);
}

function fatal(problem) {
  process.stderr.write(`check-cycles: ${problem}\n`);
  process.exit(2);
}

function usage(problem) {
  process.stderr.write(`check-cycles: ${problem}\nusage: node check-cycles.mjs [--update] [--root <dir>] [--baseline <file>]\n`);
  process.exit(2);
}

const update = args.update === true;
const root = resolve(args.root ?? join(here, '..', '..'));
const baselinePath = resolve(args.baseline ?? join(here, 'baseline.json'));
// Paths in messages are relative to the repository root, where the commands in them run.
const fromRepo = relative(join(here, '..', '..'), baselinePath);
const shownBaseline = fromRepo.startsWith('..') || isAbsolute(fromRepo) ? baselinePath : fromRepo;

// Loaded after the arguments are checked: it brings in TypeScript, most of a run's start-up.
const { compareWithBaseline, cycleGroups, readImportGraph, ARROW } = await import('./cycles.mjs');
const { graph, unresolved, ignoreMarkers } = await readImportGraph(root);
const importCount = [...graph.values()].reduce((n, targets) => n + targets.length, 0);
// performance.now() counts from the process's start: the time shown is the whole run's.
const seconds = () => (performance.now() / 1000).toFixed(1);
const out = [];
let failed = false;

if (graph.size === 0) fatal(`found no TypeScript files under ${join(root, 'packages', '*', 'src')}`);

// An import the graph cannot follow could hide a cycle, so the check cannot pass with one.
if (unresolved.length > 0) {
  failed = true;
  out.push(
    `✗ ${unresolved.length} relative import(s) in packages/*/src resolve to no file, so the import-cycle check cannot follow them:`,
    ...unresolved.map((line) => `    ${line}`),
    '  Fix the import paths (`npx -y pnpm@12.4.2 typecheck` shows them too), then run the check again.',
    '',
  );
}
if (ignoreMarkers.length > 0) {
  failed = true;
  out.push(
    '✗ These files have a `@dpdm-ignore` comment, which would hide an import from the import-cycle check:',
    ...ignoreMarkers.map((file) => `    ${file}`),
    `  Remove it: a deliberate cycle goes into the baseline instead (\`${UPDATE_COMMAND}\`), where reviewers see it.`,
    '',
  );
}

if (update) {
  if (!failed) {
    const { added, gone } = compareWithBaseline(graph, readBaseline());
    const groups = cycleGroups(graph);
    writeFileSync(baselinePath, renderBaseline(groups));
    const files = groups.reduce((n, group) => n + group.files.length, 0);
    const imports = groups.reduce((n, group) => n + group.imports.length, 0);
    const addedImports = added.reduce((n, loop) => n + loop.marked.length, 0);
    const goneImports = gone.reduce((n, loop) => n + loop.marked.length, 0);
    out.push(
      `import cycles: wrote ${shownBaseline}: ${groups.length} group(s) of files in a cycle, ${files} files, ` +
        `${imports} imports on a cycle (${goneImports} gone, ${addedImports} new) (${seconds()}s)`,
    );
  }
} else {
  const baseline = readBaseline();
  const { added, gone, groups } = compareWithBaseline(graph, baseline);
  if (added.length > 0) {
    failed = true;
    out.push(
      `✗ New runtime import cycle(s) in packages/*/src, not in ${shownBaseline}.`,
      '  The shortest loop through each import that is on a cycle now and not in the baseline:',
      '',
      ...listLoops(added, 'not in the baseline'),
      '  In a cycle, which module runs first depends on which one a program imports first, and the others',
      '  can then run before it has finished loading: an export they read at load time is still undefined',
      '  (a ReferenceError, or a class that extends undefined). Break it: use `import type` where only types',
      '  are needed, move what both sides need into a module that imports neither, or pass the dependency',
      '  in (a parameter, a registry).',
      `  Only if the cycle is deliberate: record it with \`${UPDATE_COMMAND}\`, commit`,
      `  ${shownBaseline}, and say why in the pull request.`,
      '',
    );
  }
  if (gone.length > 0) {
    failed = true;
    out.push(
      `✗ ${shownBaseline} lists import cycle(s) that no longer exist.`,
      '  The shortest loop of the baseline through each import that is no longer on a cycle:',
      '',
      ...listLoops(gone, 'no longer on a cycle'),
      `  Good news: shrink the baseline so they cannot come back. Run \`${UPDATE_COMMAND}\``,
      `  and commit ${shownBaseline}.`,
      '',
    );
  }
  if (!failed) {
    const known = groups.map((group) => `${group.files.length} files`).join(', ');
    out.push(
      `import cycles: ${graph.size} files in packages/*/src, ${importCount} runtime imports; ` +
        (groups.length === 0 ? 'no cycles' : `only the baseline's cycles (${known})`) +
        ` (${seconds()}s)`,
    );
  }
}

process.stdout.write(`${out.join('\n')}\n`);
process.exit(failed ? 1 : 0);

function listLoops(loops, label) {
  const lines = [];
  for (const { path, marked } of loops.slice(0, MAX_LISTED)) {
    lines.push(`    ${path.join(ARROW)}`);
    for (const step of marked) lines.push(`      ${label}: ${step}`);
  }
  if (loops.length > MAX_LISTED) lines.push(`    … and ${loops.length - MAX_LISTED} more`);
  lines.push('');
  return lines;
}

/** The baseline's imports; a missing baseline is an empty one. */
function readBaseline() {
  if (!existsSync(baselinePath)) return [];
  let parsed;
  try {
    parsed = JSON.parse(readFileSync(baselinePath, 'utf8'));
  } catch (error) {
    fatal(`${shownBaseline} is not JSON (${error.message}); regenerate it with \`${UPDATE_COMMAND}\``);
  }
  const groups = Array.isArray(parsed?.cycles) ? parsed.cycles : fatal(`${shownBaseline} has no "cycles" list; regenerate it with \`${UPDATE_COMMAND}\``);
  return groups.flatMap((group) => (Array.isArray(group?.imports) ? group.imports : []));
}

function renderBaseline(groups) {
  const document = {
    about:
      'Runtime import cycles in packages/*/src that existed when this file was written. Each group is ' +
      'a strongly connected component of the import graph (type-only imports excluded): its files and ' +
      'the imports between them, all of which lie on a cycle. The test fails on an import on a cycle ' +
      'that is not listed here, and on a listed one that is no longer on a cycle. Written by ' +
      `\`${UPDATE_COMMAND}\`; do not edit by hand.`,
    cycles: groups,
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}
