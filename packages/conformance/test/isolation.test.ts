// The runner's isolated mode: never importing @core/backend-cpu itself, skipping (and counting) the
// cases that need the cpu device when it is absent, and saying so when isolation cannot apply
// because the cpu is registered anyway. The whole isolated suite against a real third-party backend
// runs in examples/custom-backend/test/isolated.test.ts.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createCpuBackend } from '@core/backend-cpu';
import { cpu, type Backend } from '@core/tensor';
import { buildCases, buildReport, ISOLATED_SKIP, ISOLATED_SUBSET, prepareEnv, renderMarkdown, runCase, type Env } from '../src/index.js';

const pkg = fileURLToPath(new URL('..', import.meta.url));
const dist = join(pkg, 'dist');
const built = existsSync(join(dist, 'cli.js'));

function node(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: pkg }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The cpu kernels under another name: a backend that is not the cpu, in a process where the cpu is registered. */
function renamed(name: string): Backend<unknown> {
  return { ...(createCpuBackend() as Backend<unknown>), name };
}

/** What an isolated run of the backend in `env` would see: the same backend, no cpu device. */
function isolatedView(env: Env): Env {
  return { ...env, cpu: null, cpuPresence: 'absent' };
}

describe('where a run stands with the cpu backend', () => {
  it('the cpu under test, or a cpu registered before the runner, is reported as such, isolated or not', async () => {
    expect((await prepareEnv(() => 'cpu', { isolated: true })).cpuPresence).toBe('under-test');
    for (const isolated of [true, false]) {
      const env = await prepareEnv(() => renamed(`other${Number(isolated)}`), { isolated });
      expect(env.cpuPresence).toBe('already-registered');
      expect(env.cpu).toBe(cpu);
      // The cases that need the cpu run: isolation cannot leave out what is registered.
      expect(buildCases(env).filter((c) => c.skip === ISOLATED_SKIP)).toEqual([]);
    }
  });

  it.skipIf(!built)('an isolated run never imports @core/backend-cpu; one that is not isolated does', async () => {
    // A child with no cpu: the backend under test is a factory that fails to start, so the run
    // stops after the runner has decided about the cpu, and the child prints what is registered.
    const script = (isolated: boolean) => `
      import { prepareEnv } from ${JSON.stringify(join(dist, 'index.js'))};
      import { listBackends } from '@core/tensor';
      const failing = { name: 'nodevice', priority: 0, create() { throw new Error('no device here'); } };
      const error = await prepareEnv(() => failing, { isolated: ${isolated} }).catch((e) => e.message);
      console.log(JSON.stringify({ backends: listBackends(), error }));`;
    for (const isolated of [true, false]) {
      const r = await node(['--input-type=module', '-e', script(isolated)]);
      expect(r.code, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout) as { backends: string[]; error: string };
      expect(out.error).toContain("the 'nodevice' backend is unavailable: no device here");
      expect(out.backends).toEqual(isolated ? ['nodevice'] : ['nodevice', 'cpu']);
    }
  });
});

describe('cases that need the cpu device in an isolated run', () => {
  it('are skipped with ISOLATED_SKIP: the transfers to and from the cpu, the cpu-scalar rules, comparisons with the cpu', async () => {
    const env = await prepareEnv(() => renamed('isolatedview'));
    const withCpu = buildCases(env);
    const isolated = buildCases(isolatedView(env));
    const skipped = isolated.filter((c) => c.skip === ISOLATED_SKIP).map((c) => c.id);
    for (const id of [
      'transfers/XFER-3/non-blocking-download-is-pinned', 'transfers/XFER-1/round-trip/blocking/float32', 'transfers/PIN-2/not-pinned-by-default',
      'devices/SD-3/cpu-scalar-operand', 'devices/DEV-4/factories-default-to-cpu', 'devices/SD-8/copy_-from-cpu',
      'random/same-as-cpu/rand/seed-0', 'autograd/across-devices',
    ]) expect(skipped).toContain(id);
    // Only those: every other case is the same as with the cpu, and none of them is lost.
    expect(isolated.map((c) => c.id)).toEqual(withCpu.map((c) => c.id));
    const before = new Map(withCpu.map((c) => [c.id, c.skip]));
    expect(isolated.filter((c) => c.skip !== ISOLATED_SKIP).every((c) => c.skip === before.get(c.id))).toBe(true);
    // No skip reason in an isolated run claims that the backend under test is the cpu.
    expect(isolated.filter((c) => /is (the )?cpu\b/.test(c.skip ?? '')).map((c) => c.id)).toEqual([]);
  });

  it('the report counts them and says why', async () => {
    const env = isolatedView(await prepareEnv(() => renamed('isolatedreport')));
    const cases = buildCases(env).filter((c) => c.id.startsWith('transfers/XFER-'));
    const results = await Promise.all(cases.filter((c) => c.skip !== undefined).map((c) => runCase(c)));
    const report = buildReport(env, results, { strict: true, staleExpectations: [], durationMs: 0 });
    const count = results.filter((r) => r.reason === ISOLATED_SKIP).length;
    expect(count).toBeGreaterThan(0);
    expect(report.cpu).toEqual({ presence: 'absent', skipped: count });
    const md = renderMarkdown(report);
    expect(md).toContain(`- isolated: the cpu backend was not registered; ${count} cases that need the cpu device were skipped`);
    expect(md).toContain(`- ${count} × ${ISOLATED_SKIP}`);
  });
});

describe('ISOLATED_SUBSET', () => {
  it('picks the host-reading ops, the losses, the optimizers, training and the device and transfer rules', async () => {
    const ids = buildCases(await prepareEnv(() => renamed('subset'))).map((c) => c.id).filter((id) => ISOLATED_SUBSET.test(id));
    for (const prefix of ['primitives/gather/', 'primitives/scatterAdd/', 'composites/take/', 'composites/nonzero/', 'composites/crossEntropy/', 'autograd/crossEntropy/', 'optimizers/', 'training/', 'devices/', 'transfers/']) {
      expect(ids.some((id) => id.startsWith(prefix)), prefix).toBe(true);
    }
    expect(ids.some((id) => id.startsWith('primitives/add/'))).toBe(false);
  });
});

describe.skipIf(!built)('core-conformance and the cpu', () => {
  it('says when a run is not isolated, and why', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-'));
    const cpuRun = await node([join(dist, 'cli.js'), '--backend', '@core/backend-cpu', '--filter', 'primitives/gather/float32/0-dim', '--report', join(dir, 'cpu.json'), '--quiet']);
    expect(cpuRun.code, cpuRun.stderr).toBe(0);
    expect(cpuRun.stdout).toContain('not isolated: the backend under test is the cpu');
    expect(JSON.parse(readFileSync(join(dir, 'cpu.json'), 'utf8')).cpu).toEqual({ presence: 'under-test', skipped: 0 });
    const module = await node([join(dist, 'cli.js'), '--backend', './test/fixtures/cpu-under-another-name.mjs', '--filter', 'transfers/XFER-3', '--report', join(dir, 'm.json'), '--quiet']);
    expect(module.code, module.stderr).toBe(0);
    expect(module.stdout).toContain('not isolated: the backend module registered the cpu backend too, so the cases that need the cpu device ran');
    const report = JSON.parse(readFileSync(join(dir, 'm.json'), 'utf8'));
    expect(report.cpu).toEqual({ presence: 'already-registered', skipped: 0 });
    expect(report.cases.map((c: { status: string }) => c.status)).toEqual(['pass']);
  });
});
