// jsref as a program that imports only it uses it: in child processes that never import
// @core/backend-cpu, the conformance CLI's isolated mode (its default) passes the whole suite, for
// jsref as shipped (asynchronous reads) and with a synchronous read (test/sync-jsref.mjs), and the
// README's training loop trains, with losses that follow the cpu's. Each child asserts for itself
// that no cpu backend is registered; the CLI's report says so too.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ISOLATED_SKIP, type Report } from '@core/conformance';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(dirname(createRequire(import.meta.url).resolve('@core/conformance/package.json')), 'dist', 'cli.js');

function node(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: root, maxBuffer: 64 * 2 ** 20 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The CLI's JSON report of a run with `args`, after checking that it exited 0. */
async function conformance(args: string[]): Promise<{ report: Report; stdout: string }> {
  const file = join(mkdtempSync(join(tmpdir(), 'jsref-isolated-')), 'report.json');
  const r = await node([cli, ...args, '--strict', '--quiet', '--report', file]);
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  return { report: JSON.parse(readFileSync(file, 'utf8')) as Report, stdout: r.stdout };
}

describe('conformance without the cpu backend (the CLI\'s isolated mode)', () => {
  for (const [label, module] of [['as shipped', './dist/index.js'], ['with synchronous reads', './test/sync-jsref.mjs']] as const) {
    it(`passes every case but those that need the cpu device: jsref ${label}`, async () => {
      const { report, stdout } = await conformance(['--backend', module]);
      expect(report.backend.capabilities.syncRead).toBe(module.includes('sync'));
      expect(report.cpu.presence).toBe('absent');
      const needCpu = report.cases.filter((c) => c.reason === ISOLATED_SKIP);
      expect(needCpu.length).toBeGreaterThan(0);
      expect(report.cpu.skipped).toBe(needCpu.length);
      expect(needCpu.every((c) => c.status === 'skip')).toBe(true);
      expect(needCpu.map((c) => c.id)).toContain('transfers/XFER-3/non-blocking-download-is-pinned');
      expect(stdout).toContain(`isolated: the cpu backend is not registered; ${needCpu.length} cases that need the cpu device skipped`);
      expect(report.counts.fail).toBe(0);
    });
  }
  it('--with-cpu registers the cpu and runs those cases', async () => {
    const { report, stdout } = await conformance(['--backend', './dist/index.js', '--with-cpu', '--filter', 'transfers/XFER-3']);
    expect(report.cpu).toEqual({ presence: 'registered-by-runner', skipped: 0 });
    expect(report.cases.map((c) => [c.id, c.status])).toEqual([['transfers/XFER-3/non-blocking-download-is-pinned', 'pass']]);
    expect(stdout).not.toContain('isolated');
  });
});

interface LoopResult {
  readonly backends: string[];
  readonly syncRead: boolean;
  readonly amp: string;
  readonly losses: number[];
}

async function readmeLoop(args: string[]): Promise<LoopResult> {
  const r = await node(['test/readme-loop.mjs', ...args]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as LoopResult;
}

describe('the README\'s training loop without the cpu backend', () => {
  it('trains on jsref (F.crossEntropy, AdamW, GradScaler) and follows the cpu\'s losses', async () => {
    const shipped = await readmeLoop(['jsref:0']);
    const sync = await readmeLoop(['jsref:0', '--sync-reads']);
    expect([shipped.backends, shipped.syncRead]).toEqual([['jsref'], false]);
    expect([sync.backends, sync.syncRead]).toEqual([['jsref'], true]);
    // jsref computes no half type, so 'auto' leaves autocast off; the cpu runs in float32 too.
    expect(shipped.amp).toBe('off');
    const cpu = await readmeLoop(['cpu', '--amp', shipped.amp]);
    expect(cpu.backends).toEqual(['cpu']);
    expect(shipped.losses).toHaveLength(20);
    expect(shipped.losses.at(-1)!).toBeLessThan(shipped.losses[0]! * 0.25);
    // Reading synchronously changes no arithmetic.
    expect(sync.losses).toEqual(shipped.losses);
    // jsref accumulates in float64 and the cpu in float32: within 1e-5 of max(1, |loss|) (~100
    // float32 ulps at 1), step by step over 20 AdamW steps.
    shipped.losses.forEach((l, i) => {
      const want = cpu.losses[i]!;
      expect(Math.abs(l - want), `step ${i}: jsref ${l}, cpu ${want}`).toBeLessThanOrEqual(1e-5 * Math.max(1, Math.abs(want)));
    });
  });
});
