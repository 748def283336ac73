// The third-party section of docs/guides/writing-a-backend.md ("From an empty folder to a published
// package"), run as written: its ```sh blocks in order, as one bash script, in a scratch folder
// outside the workspace, with its ```js file=NAME blocks written where the script stands when they
// come. Blocks marked ```sh no-test: <reason> are the ones it skips (packing in a clone, which this
// test does with the same script, and `npm publish`). The tarballs come from
// scripts/pack-tarballs.mjs, what `pnpm pack:tarballs` runs after building; npm installs them.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUIDES_DIR, REPO_ROOT } from './snippets.js';

const GUIDE = join(GUIDES_DIR, 'writing-a-backend.md');
const SECTION = '## From an empty folder to a published package';
/** The folder the guide creates and works in. */
const PROJECT = 'tiny-backend';
/** Packing, installing and a whole strict conformance run take well under this; it only ends a hang. */
const RUN_LIMIT_MS = 480_000;

interface Block {
  readonly lang: string;
  /** What follows the language on the fence line. */
  readonly info: string;
  readonly body: string;
  /** 1-based line of the fence in the guide. */
  readonly line: number;
}

/** The fenced code blocks of one `## ` section of a Markdown page. */
export function sectionBlocks(markdown: string, heading: string): Block[] {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`no section '${heading}'`);
  const blocks: Block[] = [];
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const open = /^```(\w*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`line ${i + 1}: unclosed code fence`);
    blocks.push({ lang: open[1]!, info: open[2]!.trim(), body: lines.slice(i + 1, end).join('\n'), line: i + 1 });
    i = end;
  }
  return blocks;
}

/** The section as one bash script: sh blocks run, js file= blocks written, no-test blocks skipped (each needs a reason). */
export function guideScript(blocks: readonly Block[]): string {
  const parts = ['set -euo pipefail'];
  for (const b of blocks) {
    if (b.lang === 'sh') {
      if (/^no-test:\s*\S.{9,}$/.test(b.info)) continue;
      if (b.info !== '') throw new Error(`line ${b.line}: unknown marker '${b.info}' (the only one is 'no-test: <reason>')`);
      parts.push(`echo "--- guide line ${b.line}"`, b.body);
    } else if (b.lang === 'js') {
      const file = /^file=(\S+)$/.exec(b.info)?.[1];
      if (!file) throw new Error(`line ${b.line}: a js block needs file=<name>`);
      parts.push(`cat > ${file} <<'GUIDE_FILE_END'\n${b.body}\nGUIDE_FILE_END`);
    }
  }
  return `${parts.join('\n')}\n`;
}

/** The environment of a shell in an unrelated folder: no npm/pnpm settings of the workspace, no vitest loader. */
function outsideEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(npm_|pnpm_|INIT_CWD$|NODE_OPTIONS$|VITEST)/i.test(k)) env[k] = v;
  }
  return { ...env, ...extra, FORCE_COLOR: '0', NO_COLOR: '1' };
}

interface Ran {
  readonly code: number | null;
  readonly output: string;
}

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_LIMIT_MS);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, output }); });
  });
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

describe('the guide\'s third-party backend, from an empty folder outside the workspace', () => {
  const blocks = sectionBlocks(readFileSync(GUIDE, 'utf8'), SECTION);
  let scratch = '';
  let ran: Ran = { code: null, output: '' };

  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'core-third-party-'));
    const tarballs = join(scratch, 'tarballs');
    const packed = await run(process.execPath, [join(REPO_ROOT, 'scripts', 'pack-tarballs.mjs'), tarballs], REPO_ROOT, outsideEnv({}));
    if (packed.code !== 0) throw new Error(`scripts/pack-tarballs.mjs failed:\n${packed.output}`);
    ran = await run('bash', ['-c', guideScript(blocks)], scratch, outsideEnv({ CORE_TARBALLS: tarballs }));
  }, RUN_LIMIT_MS * 2);
  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('the section is a script: sh blocks to run, two source files, and the blocks it skips say why', () => {
    expect(blocks.filter((b) => b.lang === 'js').map((b) => b.info)).toEqual(['file=kernels.js', 'file=index.js']);
    const skipped = blocks.filter((b) => b.lang === 'sh' && b.info.startsWith('no-test:'));
    expect(skipped.map((b) => b.body)).toEqual([expect.stringContaining('pack:tarballs'), 'npm publish']);
    expect(() => guideScript([{ lang: 'sh', info: 'no-tset: typo', body: 'true', line: 1 }])).toThrow(/unknown marker/);
    expect(() => guideScript([{ lang: 'sh', info: 'no-test: short', body: 'true', line: 1 }])).toThrow(/unknown marker/);
    // The clone's command packs with the same script the test runs.
    expect(readJson(join(REPO_ROOT, 'package.json')).scripts['pack:tarballs']).toContain('node scripts/pack-tarballs.mjs');
  });

  it('runs in a folder outside the workspace, and every command succeeds', () => {
    expect(relative(REPO_ROOT, scratch).startsWith('..')).toBe(true);
    if (ran.code !== 0) throw new Error(`the guide's commands exited with ${ran.code}:\n${ran.output.slice(-6000)}`);
  });

  it('core-conformance --strict passes the whole suite, isolated from the cpu backend', () => {
    const report = readJson(join(scratch, PROJECT, 'report.json'));
    expect(report.backend.name).toBe('tiny');
    expect(report.strict).toBe(true);
    expect(report.counts.fail).toBe(0);
    expect(report.counts.pass).toBeGreaterThan(0);
    expect(report.ok).toBe(true);
    expect(report.cpu?.presence).toBe('absent');
    expect(existsSync(join(scratch, PROJECT, 'report.md'))).toBe(true);
  });

  it('the backend works from a program: tiny doubles [1, 2, 3]', () => {
    expect(ran.output).toContain('[ 2, 4, 6 ]');
  });

  it('the package is ready to publish: a caret peer range on the @core/tensor it was built with, and only its sources', () => {
    const manifest = readJson(join(scratch, PROJECT, 'package.json'));
    const tensor = readJson(join(REPO_ROOT, 'packages', 'tensor', 'package.json'));
    expect(manifest.peerDependencies).toEqual({ '@core/tensor': `^${tensor.version}` });
    const listed = ran.output.slice(ran.output.lastIndexOf('Tarball Contents'));
    expect(listed).toMatch(/\bindex\.js\b/);
    expect(listed).toMatch(/\bkernels\.js\b/);
    expect(listed).not.toMatch(/report\.json/);
  });
});
