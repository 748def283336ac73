// Pretrained models on cuda through the fake driver (native/cuda/test/fake_libcuda.cpp: the real
// addon and kernels, emulated on the CPU): each tiny parity fixture of @core/models (GPT-2, Llama,
// BERT, written by PyTorch 1.13) loaded straight onto the device and measured against PyTorch by
// the models' shared fixture module — float32 outputs (through the KV cache too), 32 greedy tokens,
// and a training step (loss, gradients, one AdamW step). Each model runs in a child process
// (test/pretrained-models-run.mjs) whose LD_LIBRARY_PATH makes dlopen("libcuda.so.1") find the fake driver.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultAddonPath } from '../src/native.js';
import { PARITY_FIXTURES, type ParityCheck, type ParityFixture } from '../../models/test/fixtures.js';

const fakeDir = fileURLToPath(new URL('../build/fake-driver', import.meta.url));
const child = fileURLToPath(new URL('./pretrained-models-run.mjs', import.meta.url));
const ready = existsSync(`${fakeDir}/libcuda.so.1`) && existsSync(defaultAddonPath());
if (!ready) console.log('[cuda] pretrained-models fake-driver test skipped: the addon (nvcc) or the fake driver (g++) was not built');

/** The child's checks of fixture `name` (asynchronous, so that this worker's event loop keeps running meanwhile). */
function run(name: ParityFixture): Promise<ParityCheck[]> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [child, name], {
      encoding: 'utf8', env: { ...process.env, LD_LIBRARY_PATH: fakeDir }, maxBuffer: 64 * 2 ** 20,
    }, (error, stdout, stderr) => {
      if (error) reject(new Error(`child failed (${error.code ?? error.message}): ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as ParityCheck[]);
    });
  });
}

describe.skipIf(!ready)('pretrained models on cuda (fake driver) against PyTorch', () => {
  for (const name of PARITY_FIXTURES) {
    it(`${name}: float32 outputs, greedy tokens and the training step as PyTorch's`, async () => {
      const checks = await run(name);
      expect(checks.length).toBeGreaterThan(0);
      for (const check of checks) {
        if ('diff' in check) expect.soft(check.diff, check.what).toBeLessThan(check.tol);
        else expect.soft(check.actual, check.what).toEqual(check.expected);
      }
    });
  }
});
