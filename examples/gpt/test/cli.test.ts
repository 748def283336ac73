// The command line as the README runs it: `pnpm demo:gpt -- --flags` hands the script a literal
// `--` before the flags (pnpm passes the separator through), which must not end flag parsing.
import '@core/backend-cpu';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { loadModel } from '../src/checkpoint.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const run = (...args: string[]) => promisify(execFile)(process.execPath, [MAIN, ...args], { encoding: 'utf8' });
const dirs: string[] = [];

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('the gpt command line', () => {
  it('takes its flags after a leading `--`, as `pnpm demo:gpt -- --help` passes them', async () => {
    const { stdout } = await run('--', '--help');
    expect(stdout).toContain('--device auto|cpu|webgpu|cuda');
    expect(stdout).toMatch(/--amp off\|fp16\|bf16\|auto .*\[off\]/);
    expect(stdout).toMatch(/--top-k N .*\[20\]/);
  });

  it('refuses a stray positional argument and a bad flag value, by name', async () => {
    await expect(run('oops')).rejects.toThrow(/positional/);
    await expect(run('--amp', 'fp8')).rejects.toThrow(/--amp must be one of off, fp16, bf16, auto, got 'fp8'/);
    await expect(run('--warmup=-1')).rejects.toThrow(/--warmup must be a non-negative integer, got '-1'/);
    await expect(run('--prompt', 'Ahab ☃')).rejects.toThrow(/the character "☃" at position 5 is not in the vocabulary/);
  });

  it('trains, reports the loss against the unigram baseline, writes the chart, log and checkpoint, and prints a sample', async () => {
    const out = await mkdtemp(join(tmpdir(), 'gpt-cli-'));
    dirs.push(out);
    const { stdout, stderr } = await run(
      '--device', 'cpu', '--steps', '6', '--layers', '1', '--heads', '2', '--embd', '16', '--block-size', '16', '--batch-size', '4',
      '--eval-interval', '3', '--warmup', '2', '--tokens', '40', '--prompt', 'Ahab', '--out', out,
    );
    expect(stderr).toMatch(/Unigram baseline of the validation text: 3\.07\d\d nats per character/);
    expect(stderr).toMatch(/step 6\/6 {2}train loss \d\.\d{4} {2}val loss \d\.\d{4}/);
    expect(stdout).toMatch(/Trained [\d,]+ parameters on cpu for 6 steps .*: validation loss \d\.\d{4} nats against the unigram baseline's 3\.07\d\d/);
    const sample = stdout.split('\n\n')[2]!;
    expect(sample.startsWith('Ahab')).toBe(true);
    expect([...sample].length).toBe(44);
    expect(await readFile(join(out, 'loss.svg'), 'utf8')).toMatch(/^<svg[\s\S]*validation loss[\s\S]*<\/svg>$/);
    const log = JSON.parse(await readFile(join(out, 'log.json'), 'utf8')) as { stepLosses: number[]; evals: { step: number }[] };
    expect(log.stepLosses).toHaveLength(6);
    expect(log.evals.map((e) => e.step)).toEqual([0, 3, 6]);
    expect((await loadModel(join(out, 'gpt.safetensors'))).model.config).toMatchObject({ nLayer: 1, nEmbd: 16, blockSize: 16, vocabSize: 89 });
  });

  it('--compile says the step is compiled and logs the losses the eager run logs, bit for bit; it takes no value', async () => {
    const args = ['--device', 'cpu', '--steps', '6', '--layers', '1', '--heads', '2', '--embd', '16', '--block-size', '16', '--batch-size', '4', '--eval-interval', '3', '--tokens', '8'];
    const losses = async (...extra: string[]) => {
      const out = await mkdtemp(join(tmpdir(), 'gpt-cli-'));
      dirs.push(out);
      const { stderr } = await run(...args, '--out', out, ...extra);
      const log = JSON.parse(await readFile(join(out, 'log.json'), 'utf8')) as { stepLosses: number[] };
      return { stderr, stepLosses: log.stepLosses };
    };
    const eager = await losses();
    const compiled = await losses('--compile');
    expect(compiled.stepLosses).toEqual(eager.stepLosses);
    expect(compiled.stderr).toContain('note: compiled training step: 3 of 6 calls replayed');
    expect(eager.stderr).not.toContain('compiled');
    await expect(run('--compile=on')).rejects.toThrow(/--compile takes no value, got 'on'/);
  });
});
