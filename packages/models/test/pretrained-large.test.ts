// A sharded checkpoint of more than 2 GiB, one shard itself over 2 GiB, made of sparse files (the
// data are holes that read as zeros, apart from a few marked values), loaded in a child process
// that measures its own peak resident memory: the loader must hold about one tensor slice at a
// time, never a whole tensor's bytes next to the model, let alone a whole file.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { tempDir, writeIndex, writeSparseSafetensors } from './helpers/checkpoints.js';

const CHILD = fileURLToPath(new URL('./helpers/load-large-child.mjs', import.meta.url));
const GiB = 2 ** 30;

interface ChildReport {
  baseline: number;
  peak: number;
  modelBytes: number;
  values: Record<string, number[]>;
  requiresGrad: boolean;
}

/** Runs the child on `args`, killing it if it takes longer than `limitMs`. */
function runChild(args: string[], limitMs: number): Promise<ChildReport> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', CHILD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(JSON.parse(stdout) as ChildReport);
      else reject(new Error(`the child exited with ${code ?? signal}:\n${stderr}`));
    });
  });
}

it('loads a sparse 2.1 GiB sharded checkpoint with peak memory under 1.3 × the largest tensor + the model + the empty process', async () => {
  const dir = await tempDir();
  const shapes = { big: [17_000, 16_384], wide: [16_384, 16_384], norm: [16_384] };
  const last = 17_000 * 16_384 - 1;
  // 'big' comes second in its shard, so its last value sits past byte 2^31 of the file.
  await writeSparseSafetensors(join(dir, 'model-00001-of-00002.safetensors'), [
    { name: 'wide', shape: shapes.wide, marks: { 0: 1.5, 12_345_678: -2.25 } },
    { name: 'big', shape: shapes.big, marks: { 0: 3, [last]: 7.5 } },
  ]);
  await writeSparseSafetensors(join(dir, 'model-00002-of-00002.safetensors'), [{ name: 'norm', shape: shapes.norm, marks: { 16_383: 0.5 } }]);
  await writeIndex(dir, { wide: 'model-00001-of-00002.safetensors', big: 'model-00001-of-00002.safetensors', norm: 'model-00002-of-00002.safetensors' });
  const probes = { wide: [0, 1, 12_345_678], big: [0, 4_000_000, last], norm: [0, 16_383] };

  const report = await runChild([dir, JSON.stringify(shapes), JSON.stringify(probes)], 480_000);

  const largest = 17_000 * 16_384 * 4;
  expect(report.modelBytes).toBeGreaterThan(2 * GiB);
  expect(report.values).toEqual({ wide: [1.5, 0, -2.25], big: [3, 0, 7.5], norm: [0, 0.5] });
  expect(report.requiresGrad).toBe(true);
  expect(report.peak).toBeLessThan(report.baseline + report.modelBytes + 1.3 * largest);
});
