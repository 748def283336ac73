// Crash safety: the demo (built, as the README runs it) is SIGKILLed at 20 points of its checkpoint
// saves, chosen at random with a fixed seed. TRAIN_MNIST_KILL_AT makes the process kill itself at
// the n-th save point, so each kill lands exactly where it is meant to, with no timing involved.
// After each kill the file on disk must be the last complete checkpoint (or none, and --resume says
// so); the next run resumes from it (and is killed again), and the last resume must finish the run
// bit for bit like one uninterrupted run.
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nn } from '@core/nn';
import { afterAll, describe, expect, it } from 'vitest';
import { SAVE_POINTS, STATE_KEY } from '../src/checkpoint.js';
import { seeded } from './helpers.js';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const EPOCHS = 4;
const STEPS_PER_EPOCH = 3; // 96 digits in batches of 32
const FLAGS = ['--device', 'cpu', '--model', 'mlp', '--epochs', String(EPOCHS), '--batch-size', '32', '--train-limit', '96', '--seed', '3'];
const KILLS = 20;
/** Points from here on find the new checkpoint in place. */
const RENAMED = SAVE_POINTS.indexOf('renamed');
const dirs: string[] = [];

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Run the demo as a child process (never blocking this one's event loop). */
function demo(args: string[], killAt?: number): Promise<Exit> {
  const env = { ...process.env };
  delete env.TRAIN_MNIST_KILL_AT;
  if (killAt !== undefined) env.TRAIN_MNIST_KILL_AT = String(killAt);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

async function scratch(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'train-mnist-kill-'));
  dirs.push(dir);
  return dir;
}

/** A checkpoint file's training state and the bytes of its tensors. */
async function checkpointIn(dir: string): Promise<{ state: { epoch: number; history: { stepLosses: number[] } }; data: Uint8Array }> {
  const bytes = new Uint8Array(await readFile(join(dir, 'checkpoint.safetensors')));
  const header = nn.parseSafetensorsHeader(bytes);
  return { state: JSON.parse(header.metadata[STATE_KEY]!), data: bytes.subarray(header.dataStart) };
}

async function runLog(dir: string): Promise<{ stepLosses: number[]; epochs: Array<{ testAccuracy: number }> }> {
  return JSON.parse(await readFile(join(dir, 'log.json'), 'utf8'));
}

/** One run that kills itself: where it starts, where it dies, and what must be on disk after. */
interface Kill {
  /** Epochs in the checkpoint it resumes from (0: a fresh run). */
  readonly from: number;
  /** TRAIN_MNIST_KILL_AT: the save point, counted over this run's own saves. */
  readonly at: number;
  /** The epoch whose save it dies in, and the point of that save. */
  readonly epoch: number;
  readonly point: (typeof SAVE_POINTS)[number];
  /** Epochs in the last complete checkpoint after the kill. */
  readonly complete: number;
}

/**
 * `count` kills in chains: each run after a kill resumes from what the kill left (or starts afresh
 * when nothing was saved yet) and is killed at a random point of its own saves, until a chain's
 * checkpoint holds every epoch; the next chain starts from scratch. The points are drawn with a
 * fixed seed, so the plan is the same on every run of the test.
 */
function plan(count: number, seed: number): Kill[][] {
  const random = seeded(seed);
  const chains: Kill[][] = [];
  let chain: Kill[] = [];
  let complete = 0;
  for (let k = 0; k < count; k++) {
    const from = complete;
    const at = Math.floor(random() * (EPOCHS - from) * SAVE_POINTS.length);
    const epoch = from + Math.floor(at / SAVE_POINTS.length) + 1;
    const index = at % SAVE_POINTS.length;
    complete = index >= RENAMED ? epoch : epoch - 1;
    chain.push({ from, at, epoch, point: SAVE_POINTS[index]!, complete });
    if (complete === EPOCHS || k === count - 1) {
      chains.push(chain);
      chain = [];
      complete = 0;
    }
  }
  return chains;
}

/** Run `task` over `items`, two at a time (the CI machine has two cores). */
async function twoAtATime<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all([worker(), worker()]);
}

describe('a crash while a checkpoint is written', () => {
  it(`SIGKILL at ${KILLS} seeded points of the saves: each resume continues from the last complete checkpoint, and the run ends bit for bit as an uninterrupted one`, async () => {
    const reference = await scratch();
    const whole = await demo([...FLAGS, '--out', reference]);
    expect(whole.code, whole.stderr).toBe(0);
    const expected = await runLog(reference);
    const expectedFinal = await checkpointIn(reference);
    expect(expected.stepLosses).toHaveLength(EPOCHS * STEPS_PER_EPOCH);

    const chains = plan(KILLS, 20_251_201);
    const seen = new Set<string>();
    await twoAtATime(chains, async (chain) => {
      const dir = await scratch();
      const resume = [...FLAGS, '--out', dir, '--resume', join(dir, 'checkpoint')];
      let leftover = false; // a temporary file from an earlier kill
      for (const kill of chain) {
        const where = `killed at '${kill.point}' of epoch ${kill.epoch}'s save (${kill.from > 0 ? `resumed after epoch ${kill.from}` : 'a fresh run'})`;
        seen.add(kill.point);
        const run = await demo(kill.from > 0 ? resume : [...FLAGS, '--out', dir], kill.at);
        expect(run.signal, `${where}: ${run.stderr}`).toBe('SIGKILL');
        if (kill.from > 0) expect(run.stderr, where).toContain(`resumed from ${join(dir, 'checkpoint.safetensors')} after epoch ${kill.from} (step ${kill.from * STEPS_PER_EPOCH})`);
        // Killed mid-write, the temporary file is still there: the kill really hit the write. Any
        // earlier one is gone once a save of this run got past 'clean'.
        const midWrite = ['created', 'half-written', 'written', 'synced'].includes(kill.point);
        leftover = midWrite || (leftover && kill.point === 'clean' && kill.epoch === kill.from + 1);
        const files = await readdir(dir);
        expect(files.filter((f) => f.startsWith('checkpoint.safetensors.tmp-')), where).toHaveLength(leftover ? 1 : 0);
        if (kill.complete === 0) {
          // No save completed yet: a resume refuses, saying why (and the next run starts afresh).
          expect(files, where).not.toContain('checkpoint.safetensors');
          const refused = await demo(resume);
          expect(refused.code, where).toBe(1);
          expect(refused.stderr, where).toMatch(/CheckpointError: checkpoint .*checkpoint\.safetensors does not exist/);
          continue;
        }
        // On disk: one whole epoch's checkpoint, the last complete one, with the reference run's history.
        const onDisk = await checkpointIn(dir);
        expect(onDisk.state.epoch, where).toBe(kill.complete);
        expect(onDisk.state.history.stepLosses, where).toEqual(expected.stepLosses.slice(0, kill.complete * STEPS_PER_EPOCH));
      }
      const last = chain.at(-1)!;
      if (last.complete === 0) return;
      const finish = await demo(resume);
      expect(finish.code, finish.stderr).toBe(0);
      expect(finish.stderr).toContain(`after epoch ${last.complete}`);
      const log = await runLog(dir);
      expect(log.stepLosses).toEqual(expected.stepLosses);
      expect(log.epochs.map((e) => e.testAccuracy)).toEqual(expected.epochs.map((e) => e.testAccuracy));
      const final = await checkpointIn(dir);
      expect(final.state.epoch).toBe(EPOCHS);
      expect(Buffer.compare(final.data, expectedFinal.data), "final weights and optimizer state differ from the uninterrupted run's").toBe(0);
      expect((await readdir(dir)).filter((f) => f.includes('.tmp-')), 'a later save removes the leftovers').toEqual([]);
    });
    expect(chains.flat()).toHaveLength(KILLS);
    // The seeded plan reaches every point of the save sequence.
    expect([...seen].sort()).toEqual([...SAVE_POINTS].sort());
  }, 600_000);
});
