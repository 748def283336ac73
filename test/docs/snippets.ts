// Extracting and running the ```ts snippets of the Markdown guides. Each snippet is a complete
// program: it is written to a scratch directory (whose node_modules links to this package's, so
// `@core/*` resolve exactly as in a user's project), type-checked with the repository's compiler
// settings, transpiled, and run in its own Node process. Own process: a snippet that registers a
// backend, changes the default device or turns off creation-site tracking cannot affect another.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const TEST_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const GUIDES_DIR = join(REPO_ROOT, 'docs', 'guides');

export interface Snippet {
  /** The Markdown file, relative to the repository root. */
  readonly source: string;
  /** 1-based line of the snippet's first code line in the Markdown file. */
  readonly line: number;
  readonly code: string;
  /** Why it is not run (the fence reads ```ts no-run: reason), or null when it runs. */
  readonly noRun: string | null;
}

const FENCE_OPEN = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)\s*(.*)$/;

/**
 * Every ```ts / ```typescript block of a Markdown file. The only marker allowed after the language
 * is `no-run: <reason>` (type-checked, not run); anything else is an error, so a typo cannot
 * silently turn a snippet off.
 */
export function extractSnippets(file: string): Snippet[] {
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const source = relative(REPO_ROOT, file);
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE_OPEN.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open as unknown as [string, string, string, string, string];
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const l = lines[j]!;
      if (l.trim().startsWith(fence[0]!.repeat(fence.length)) && l.trim().replace(/[`~]/g, '') === '') break;
      body.push(indent && l.startsWith(indent) ? l.slice(indent.length) : l);
    }
    if (j === lines.length) throw new Error(`${source}:${i + 1}: unclosed code fence`);
    if (lang === 'ts' || lang === 'typescript') {
      const marker = rest.trim();
      let noRun: string | null = null;
      if (marker !== '') {
        const m = /^no-run\s*[:—-]\s*(\S.{9,})$/.exec(marker);
        if (!m) throw new Error(`${source}:${i + 1}: unknown fence marker '${marker}' (the only one is 'no-run: <reason, at least 10 characters>')`);
        noRun = m[1]!.trim();
      }
      out.push({ source, line: i + 2, code: body.join('\n'), noRun });
    }
    i = j;
  }
  return out;
}

/** A scratch directory whose node_modules is this test package's: imports resolve as in a project that installed @core/*. */
export function makeScratch(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'core-guides-'));
  symlinkSync(join(TEST_ROOT, 'node_modules'), join(dir, 'node_modules'), 'junction'); // 'junction': no admin rights needed on Windows
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The snippet's file name in the scratch directory, e.g. devices.md-L57.ts. */
export function scratchName(s: Snippet): string {
  return `${basename(s.source)}-L${s.line}.ts`;
}

/**
 * Write the snippet as a .ts file whose line numbers are the Markdown file's (blank lines in
 * front), so type errors and stack traces point into the guide.
 */
export function writeSnippet(dir: string, s: Snippet): string {
  const path = join(dir, scratchName(s));
  writeFileSync(path, `${'\n'.repeat(s.line - 1)}${s.code}\n`);
  return path;
}

function compilerOptions(): ts.CompilerOptions {
  const configPath = join(REPO_ROOT, 'tsconfig.base.json');
  const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const parsed = ts.convertCompilerOptionsFromJson(config.compilerOptions, dirname(configPath));
  if (parsed.errors.length) throw new Error(parsed.errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, '\n')).join('\n'));
  return { ...parsed.options, noEmit: true, declaration: false, sourceMap: false, noUnusedLocals: false };
}

/** Type-check snippet files together (each is its own module); returns "file:line:col message" per error. */
export function typecheck(files: readonly string[], names: ReadonlyMap<string, string>): string[] {
  const program = ts.createProgram({ rootNames: [...files], options: compilerOptions() });
  const diagnostics = ts.getPreEmitDiagnostics(program);
  return diagnostics.map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (!d.file || d.start === undefined) return text;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    return `${names.get(d.file.fileName) ?? d.file.fileName}:${line + 1}:${character + 1} ${text}`;
  });
}

/** Transpile a snippet file to an .mjs next to it, with an inline source map back to the .ts (= the guide's lines). */
export function transpile(path: string): string {
  const result = ts.transpileModule(readFileSync(path, 'utf8'), {
    fileName: basename(path),
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      inlineSourceMap: true,
      inlineSources: true,
      verbatimModuleSyntax: false,
    },
  });
  const out = path.replace(/\.ts$/, '.mjs');
  writeFileSync(out, result.outputText);
  return out;
}

export interface RunResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

/** Run an .mjs in a fresh Node process (with --expose-gc, so memory snippets can collect garbage on purpose). */
export function runNode(file: string, timeoutMs: number): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // vitest's loader hooks are not what a user's `node script.mjs` gets
    const child = spawn(process.execPath, ['--expose-gc', '--enable-source-maps', file], { cwd: dirname(file), env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr, timedOut }); });
  });
}
