// Looking for an adapter where there is none prints nothing: Dawn's native messages (no Vulkan
// driver, no ICD) stay in the probe's pipe and come back as the one-line reason, unless
// CORE_WEBGPU_DEBUG=1 asks for them. Each case is a fresh Node process (Dawn reads the Vulkan
// environment once per process) running the built package, as a program that imports it would.
import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

// What a program does to pick a device: import the backends, then bestDevice() and availableDevices().
const PROGRAM = `
import '@core/backend-cpu';
import '@core/backend-webgpu';
const { availableDevices, bestDevice } = await import('@core/tensor');
const best = await bestDevice();
const webgpu = (await availableDevices()).find((d) => d.type === 'webgpu');
process.stdout.write(JSON.stringify({ best: String(best), available: webgpu.available, reason: webgpu.reason ?? '' }));
process.exit(0);
`;

interface Run { code: number | null; stderr: string; result: { best: string; available: boolean; reason: string } }

// What `--device auto` does: bestDevice() alone. On a software adapter the cpu wins, so Dawn need not start here.
const AUTO_PROGRAM = `
import '@core/backend-cpu';
import '@core/backend-webgpu';
const { bestDevice } = await import('@core/tensor');
process.stdout.write(JSON.stringify({ best: String(await bestDevice()) }));
process.exit(0);
`;

/** The program in a child Node process whose Vulkan loader is pointed at an ICD file that does not exist. */
function runWithoutAdapter(extraEnv: Record<string, string>): Promise<Run> {
  return run(PROGRAM, { VK_ICD_FILENAMES: '/nonexistent/core-webgpu-test-icd.json', VK_DRIVER_FILES: '/nonexistent/core-webgpu-test-icd.json', ...extraEnv });
}

/** `program` in a child Node process, with `extraEnv` over this one's (CORE_WEBGPU_DEBUG only if given). */
function run(program: string, extraEnv: Record<string, string>): Promise<Run> {
  const env: Record<string, string | undefined> = { ...process.env, ...extraEnv };
  if (!('CORE_WEBGPU_DEBUG' in extraEnv)) delete env['CORE_WEBGPU_DEBUG'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', program], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve({ code, stderr, result: JSON.parse(stdout) as Run['result'] });
      } catch {
        reject(new Error(`the program printed no result (exit ${code}):\n${stdout}\n${stderr}`));
      }
    });
  });
}

describe('probing for an adapter where there is none', () => {
  it('prints nothing, falls back to cpu, and gives the reason on one line', async () => {
    const { code, stderr, result } = await runWithoutAdapter({});
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(result.best).toBe('cpu');
    expect(result.available).toBe(false);
    // Dawn's own words, from the probe's pipe, then what to do.
    expect(result.reason).toMatch(/^no WebGPU adapter: webgpu \(Dawn\) found none \(Dawn: [^)]*(driver|ICD|JSON|Vulkan)/i);
    expect(result.reason).toContain('VK_ICD_FILENAMES');
    expect(result.reason).toContain('CORE_WEBGPU_DEBUG=1');
    expect(result.reason).not.toContain('\n');
  });

  it("with CORE_WEBGPU_DEBUG=1, Dawn's native messages reach stderr", async () => {
    const { code, stderr, result } = await runWithoutAdapter({ CORE_WEBGPU_DEBUG: '1' });
    expect(code).toBe(0);
    expect(stderr).toMatch(/^Warning: /m);
    expect(result.best).toBe('cpu');
    expect(result.reason).toMatch(/^no WebGPU adapter/);
  });
});

describe("this configuration's software adapter (lavapipe, SwiftShader) and bestDevice()", () => {
  it('picks the cpu without starting Dawn in the process, so none of its notices are printed', async () => {
    const icd = process.env['VK_ICD_FILENAMES'];
    if (!icd) throw new Error('this test runs under test/run.mjs, which points VK_ICD_FILENAMES at the configuration\'s software driver');
    const { code, stderr, result } = await run(AUTO_PROGRAM, {});
    expect(code).toBe(0);
    expect(result.best).toBe('cpu');
    // Started here, Dawn prints e.g. "Warning: maxDynamicStorageBuffersPerPipelineLayout artificially reduced …" on lavapipe.
    expect(stderr).toBe('');
  });
});
