// The CLI, run as users run it (node dist/cli.js, after the build that `pnpm test` does first).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const built = existsSync(cli);

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { cwd: fileURLToPath(new URL('..', import.meta.url)) }, (error, stdout, stderr) => {
      resolve({ code: error ? (error as { code?: number }).code ?? 1 : 0, stdout, stderr });
    });
  });
}

describe.skipIf(!built)('core-conformance CLI', () => {
  it('runs a filtered suite and writes the JSON and Markdown reports', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-'));
    const r = await run(['--backend', '@core/backend-cpu', '--filter', 'primitives/add/', '--report', join(dir, 'r.json'), '--markdown', join(dir, 'r.md'), '--quiet']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/cpu: \d+ cases .* 0 fail/);
    const report = JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8'));
    expect(report.backend.name).toBe('cpu');
    expect(report.cases.every((c: { id: string }) => c.id.startsWith('primitives/add/'))).toBe(true);
    expect(readFileSync(join(dir, 'r.md'), 'utf8')).toContain('# Conformance: cpu');
  });
  it('fails under --strict when an xfail passes, and exits 2 on a bad backend module', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-'));
    const file = join(dir, 'exp.json');
    writeFileSync(file, JSON.stringify({ backend: 'cpu', expectations: [{ id: 'primitives/add/float32/rand-3x4', status: 'xfail', reason: 'listed to test --strict' }] }));
    const loose = await run(['--backend', '@core/backend-cpu', '--filter', 'primitives/add/float32/rand', '--expectations', file, '--quiet']);
    expect(loose.code).toBe(0);
    expect(loose.stdout).toContain('XPASS primitives/add/float32/rand-3x4');
    const strict = await run(['--backend', '@core/backend-cpu', '--filter', 'primitives/add/float32/rand', '--expectations', file, '--strict', '--quiet']);
    expect(strict.code).toBe(1);
    const missing = await run(['--backend', './no-such-backend.js']);
    expect(missing.code).toBe(2);
  });
  it('--compiled runs the cases compiled: a data-dependent op is eager only, reported with its reason, on a backend that reads synchronously too', async () => {
    const r = await run(['--backend', '@core/backend-cpu', '--compiled', '--filter', 'composites/nonzero', '--quiet']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/cpu \(compiled\): \d+ cases .* 0 fail, \d+ skip, 0 xfail, 0 xpass/);
    expect(r.stdout).toMatch(/compiled: 0 cases replayed and passed; [1-9]\d* eager only \(nonzero, nonzero\(asTuple\), nonzeroAsync\); 0 with no compiled form/);
  });
});
