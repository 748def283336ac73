// The fine-tuning demo end to end, as the README runs it, against a Hugging Face Hub on 127.0.0.1:
// a tiny GPT-2 (random weights, this repo's test tokenizer) is served under a repo id, downloaded
// into a temporary cache, fine-tuned on the start of Moby Dick, and written back as a folder that
// `GPT2LMHeadModel.fromPretrained` loads.
import '@core/backend-cpu';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { GPT2LMHeadModel } from '@core/models';
import { nn } from '@core/nn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitOf, FakeHub } from '../../../packages/hub/test/helpers/fake-hub.js';
import { tinyGpt2RepoFiles } from '../../../packages/models/test/helpers/tiny-gpt2-repo.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const REPO = 'tiny/gpt2';
const dirs: string[] = [];
let hub: FakeHub;
let cacheDir: string;
let files: Record<string, string | Uint8Array>;

/** The demo's command line with the fake Hub and a temporary cache in its environment. */
function run(...args: string[]) {
  const env = { ...process.env, HF_ENDPOINT: hub.endpoint, HF_HUB_CACHE: cacheDir, HF_HUB_OFFLINE: '0', HF_TOKEN: '' };
  return promisify(execFile)(process.execPath, [MAIN, ...args], { encoding: 'utf8', env });
}

async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

beforeAll(async () => {
  const commit = commitOf('tiny-gpt2-v1');
  files = await tinyGpt2RepoFiles();
  hub = await FakeHub.start([{ id: REPO, commits: { [commit]: files }, refs: { main: commit } }]);
  cacheDir = await tempDir('finetune-cache-');
});

afterAll(async () => {
  await hub?.close();
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('the finetune-gpt2 command line', () => {
  it('takes its flags after a leading `--`, as `pnpm demo:finetune -- --help` passes them', async () => {
    const { stdout } = await run('--', '--help');
    expect(stdout).toMatch(/--model ID\|DIR .*\[openai-community\/gpt2\]/);
    expect(stdout).toMatch(/--amp off\|fp16\|bf16\|auto .*\[off\]/);
    expect(stdout).toContain('The Hub needs network access');
  });

  it('refuses a bad flag value by name, and a block longer than the model\'s context before training', async () => {
    await expect(run('--amp', 'fp8')).rejects.toThrow(/--amp must be one of off, fp16, bf16, auto, got 'fp8'/);
    await expect(run('--model', REPO, '--device', 'cpu', '--block-size', '65', '--out', await tempDir('finetune-out-'))).rejects.toThrow(
      /--block-size 65 is longer than the model's context of 64 tokens/,
    );
  });

  it('downloads the model, fine-tunes it (the validation loss falls), and writes a model folder that fromPretrained loads, the chart and the log', async () => {
    const out = await tempDir('finetune-out-');
    const { stdout } = await run(
      '--model', REPO, '--device', 'cpu', '--chars', '6000', '--steps', '8', '--batch-size', '4', '--block-size', '32', '--lr', '0.01',
      '--warmup', '2', '--eval-interval', '4', '--tokens', '6', '--prompt', 'Call me', '--out', out,
    );
    const summary = /validation loss (\d+\.\d{4}) → (\d+\.\d{4}) nats per token/.exec(stdout);
    expect(summary).not.toBeNull();
    expect(Number(summary![2])).toBeLessThan(Number(summary![1]));
    expect(stdout).toMatch(/Fine-tuned tiny\/gpt2 \([\d,]+ parameters\) on cpu for 8 steps of 4×32 tokens/);
    expect(stdout).toMatch(/Before fine-tuning \(temperature 0\.8, top-k 40\):\n\nCall me/);
    expect(stdout).toMatch(/After:\n\nCall me/);

    const log = JSON.parse(await readFile(join(out, 'log.json'), 'utf8')) as { stepLosses: number[]; evals: { step: number }[] };
    expect(log.stepLosses).toHaveLength(8);
    expect(log.evals.map((e) => e.step)).toEqual([0, 4, 8]);
    expect(await readFile(join(out, 'loss.svg'), 'utf8')).toContain('before fine-tuning');

    const tuned = await GPT2LMHeadModel.fromPretrained(join(out, 'model'));
    const served = nn.deserializeSafetensors(files['model.safetensors'] as Uint8Array)['transformer.h.0.attn.c_attn.weight']!;
    const tunedWeight = tuned.stateDict()['transformer.h.0.attn.c_attn.weight']!;
    expect(tunedWeight.shape).toEqual(served.shape);
    expect(Array.from(await tunedWeight.data())).not.toEqual(Array.from(await served.data()));
    expect(tuned.lmHead.weight).toBe(tuned.transformer.wte.weight); // the head stays tied to the token embedding
  });
});
