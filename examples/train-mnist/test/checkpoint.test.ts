// Checkpoints: one file written atomically, read and checked in full before anything changes, and
// a failed load that leaves model, optimizer, GradScaler and the loader's generator bit for bit as
// they were.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nn } from '@core/nn';
import { float64, tensor, type Tensor } from '@core/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointError, DIGEST_KEY, readCheckpoint, STATE_KEY } from '../src/checkpoint.js';
import { loadMnist } from '../src/mnist.js';
import { train, type TrainConfig } from '../src/train.js';
import { freshObjects, rewrite, snapshot } from './helpers.js';

// fp16 on the cpu, so the checkpoint carries a GradScaler's state too.
const config: TrainConfig = { device: 'cpu', model: 'cnn', epochs: 2, batchSize: 32, lr: 2e-3, seed: 5, amp: 'fp16' };
const data = loadMnist({ limit: 64 });
let dir: string;
/** After epoch 1 and after epoch 2 of one run. */
let epoch1: Uint8Array;
let epoch2: Uint8Array;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'train-mnist-checkpoint-'));
  await train({ ...config, stopAfterEpochs: 1, checkpoint: join(dir, 'run') }, {}, data);
  epoch1 = new Uint8Array(await readFile(join(dir, 'run.safetensors'))); // a copy: Buffer.slice() would share the bytes
  await train({ ...config, resume: join(dir, 'run'), checkpoint: join(dir, 'run') }, {}, data);
  epoch2 = new Uint8Array(await readFile(join(dir, 'run.safetensors')));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Write `bytes` as a checkpoint file of its own, returning its path without the extension. */
let written = 0;
async function asFile(bytes: Uint8Array): Promise<string> {
  const path = join(dir, `case-${written++}`);
  await writeFile(`${path}.safetensors`, bytes);
  return path;
}

/** Objects holding epoch 1's checkpoint, as a resumed run has them. */
async function resumedAtEpoch1() {
  const objects = freshObjects(config);
  (await readCheckpoint(await asFile(epoch1), objects)).restore(objects.scaler);
  return objects;
}

/** Load `bytes` into `objects` (read, then restore), returning the error it must fail with. */
async function failedLoad(bytes: Uint8Array, objects = freshObjects(config)): Promise<Error> {
  const path = await asFile(bytes);
  const before = snapshot(objects);
  const error = await readCheckpoint(path, objects).then((c) => c.restore(objects.scaler)).then(() => null, (e: unknown) => e);
  expect(error, 'the load should have failed').toBeInstanceOf(Error);
  expect(snapshot(objects)).toEqual(before);
  return error as Error;
}

describe('saving a checkpoint', () => {
  it('writes one .safetensors file holding the tensors, the training state and its digest; no temporary file stays', async () => {
    const files = await readdir(dir);
    expect(files.filter((f) => f.startsWith('run.'))).toEqual(['run.safetensors']);
    const header = nn.parseSafetensorsHeader(epoch2);
    expect(Object.keys(header.metadata).sort()).toEqual([STATE_KEY, DIGEST_KEY]);
    const state = JSON.parse(header.metadata[STATE_KEY]!);
    expect([state.format, state.model, state.epoch, state.step, state.amp]).toEqual(['core-train-mnist/2', 'cnn', 2, 4, 'fp16']);
    expect(state.scaler).toMatchObject({ growthFactor: 2, backoffFactor: 0.5, growthInterval: 2000 });
    expect(Object.keys(header.tensors)).toContain('model.0.weight');
    expect(Object.keys(header.tensors)).toContain('optimizer.0.expAvgSq');
  });

  it('removes temporary files a crashed save left, and only those', async () => {
    const path = join(dir, 'stale');
    await writeFile(`${path}.safetensors.tmp-999999`, 'half a checkpoint');
    await writeFile(`${path}.other.tmp-1`, 'not ours');
    await train({ ...config, epochs: 1, checkpoint: path }, {}, data);
    const files = (await readdir(dir)).filter((f) => f.startsWith('stale.'));
    expect(files.sort()).toEqual(['stale.other.tmp-1', 'stale.safetensors']);
  });

  it('resumes from a path given with or without the extension', async () => {
    for (const path of [join(dir, 'run'), join(dir, 'run.safetensors')]) {
      const objects = freshObjects(config);
      const pending = await readCheckpoint(path, objects);
      expect(pending.file).toBe(join(dir, 'run.safetensors'));
      expect(pending.progress.epoch).toBe(2);
    }
  });
});

describe('a checkpoint that does not fit is refused, naming the file and the field', () => {
  it('a missing file, an earlier version\'s checkpoint, a safetensors file of something else', async () => {
    await expect(readCheckpoint(join(dir, 'nowhere'), freshObjects(config))).rejects.toThrow(/checkpoint .*nowhere\.safetensors does not exist/);
    const plain = join(dir, 'plain');
    await nn.saveSafetensors(`${plain}.safetensors`, { w: tensor([1]) });
    await expect(readCheckpoint(plain, freshObjects(config))).rejects.toThrow(`checkpoint ${plain}.safetensors: __metadata__.${STATE_KEY}: missing`);
    await writeFile(`${plain}.json`, '{}');
    await expect(readCheckpoint(plain, freshObjects(config))).rejects.toThrow(/written by an earlier version of this demo \(its training state is in .*plain\.json\)/);
  });

  it('a changed byte anywhere fails the digest (or the file structure)', async () => {
    const header = nn.parseSafetensorsHeader(epoch2);
    const flipped = epoch2.slice();
    flipped[header.dataStart + 1000]! ^= 1; // one bit of one weight
    const e = await failedLoad(flipped);
    expect(e).toBeInstanceOf(CheckpointError);
    expect(e.message).toMatch(new RegExp(`case-\\d+\\.safetensors: __metadata__\\.${DIGEST_KEY.replace('.', '\\.')}: the contents' sha256 is [0-9a-f]{64}, not the "[0-9a-f]{64}" recorded`));
    expect((e as CheckpointError).field).toBe(`__metadata__.${DIGEST_KEY}`);
    const truncated = await failedLoad(epoch2.subarray(0, epoch2.length - 10));
    expect(truncated).toBeInstanceOf(nn.SafetensorsError);
    expect(truncated.message).toMatch(/case-\d+\.safetensors: .*data section/);
  });

  it.each([
    ['epoch as a string', (s: Record<string, any>) => { s.epoch = '1'; }, 'epoch', 'Invalid type: Expected number but received "1"'],
    ['a negative epoch', (s: Record<string, any>) => { s.epoch = -1; }, 'epoch', 'Invalid value: Expected >=0 but received -1'],
    ['no loader generator', (s: Record<string, any>) => { delete s.loaderGenerator; }, 'loaderGenerator', 'Invalid key: Expected "loaderGenerator"'],
    ['a fractional generator offset', (s: Record<string, any>) => { s.loaderGenerator.offset = 1.5; }, 'loaderGenerator.offset', 'Invalid safe integer'],
    ['a loss that is a string', (s: Record<string, any>) => { s.history.stepLosses[1] = 'abc'; }, 'history.stepLosses.1', 'Invalid type'],
    ['an unknown field', (s: Record<string, any>) => { s.extra = 1; }, 'extra', 'Invalid key'],
    ['an unknown precision', (s: Record<string, any>) => { s.amp = 'fp8'; }, 'amp', 'Invalid type: Expected ("off" | "bf16" | "fp16") but received "fp8"'],
    ['a scaler scale that is not a number', (s: Record<string, any>) => { s.scaler.scale = '65536'; }, 'scaler.scale', 'Invalid type'],
    ['an optimizer state key that is no index', (s: Record<string, any>) => { s.optimizer.state.x = { step: 1 }; }, 'optimizer.state.x', 'Invalid key: expected a parameter index'],
    ['betas of three', (s: Record<string, any>) => { s.optimizer.paramGroups[0].betas.push(0.5); }, 'optimizer.paramGroups.0.betas.2', 'Invalid type: Expected never but received 0.5'],
  ])('%s', async (_, change, field, message) => {
    const e = await failedLoad(await rewrite(epoch2, ({ state }) => change(state)));
    expect(e).toBeInstanceOf(CheckpointError);
    expect(e.message).toContain(`training state field ${field}: ${message}`);
    expect(e.message).toMatch(/case-\d+\.safetensors/);
    expect((e as CheckpointError).field).toBe(field);
  });

  it('a history that does not add up: epochs or steps from another point of the run', async () => {
    const cases: Array<[(s: Record<string, any>) => void, string]> = [
      [(s) => { s.epoch = 1; }, 'history.epochs must hold one record per completed epoch'],
      [(s) => { s.history.stepLosses.pop(); }, 'history.stepLosses must hold one loss per step'],
      [(s) => { s.history.epochs[1].epoch = 3; }, 'history.epochs must be numbered 1, 2, …'],
      [(s) => { s.step = 3; s.history.stepLosses.pop(); }, "step must be the last epoch record's step"],
    ];
    for (const [change, message] of cases) expect((await failedLoad(await rewrite(epoch2, ({ state }) => change(state)))).message).toContain(message);
  });

  it('another model, or tensors that do not fit the model and the optimizer', async () => {
    const cases: Array<[(c: { tensors: Record<string, Tensor>; state: Record<string, any> }) => void, string]> = [
      [({ state }) => { state.model = 'mlp'; }, "holds a 'mlp' model, but --model is 'cnn'"],
      [({ tensors }) => { delete tensors['model.0.bias']; }, "tensor 'model.0.bias': missing"],
      [({ tensors }) => { delete tensors['optimizer.3.expAvg']; }, "tensor 'optimizer.3.expAvg': missing"],
      [({ tensors }) => { tensors['model.5.weight'] = tensors['model.0.bias']!; }, "tensor 'model.5.weight': not a tensor of this model or its optimizer"],
      [({ tensors }) => { tensors['model.0.weight'] = tensors['model.0.weight']!.flatten(); }, "tensor 'model.0.weight': shape [72], but the model's is [8, 1, 3, 3]"],
      [({ tensors }) => { tensors['optimizer.0.expAvg'] = tensors['optimizer.0.expAvg']!.to(float64); }, "tensor 'optimizer.0.expAvg': dtype F64, but the model's is F32"],
      [({ state }) => { state.optimizer.state['99'] = { step: 1 }; }, 'optimizer.state.99: no such parameter (the optimizer has 8)'],
      [({ state }) => { state.optimizer.paramGroups[0].params.reverse(); }, "optimizer.paramGroups.0.params: must be the indices 0..7 of the optimizer's parameters"],
      [({ state }) => { state.optimizer.paramGroups.push(state.optimizer.paramGroups[0]); }, 'optimizer.paramGroups: 2 groups, but the optimizer has 1'],
    ];
    for (const [change, message] of cases) {
      const e = await failedLoad(await rewrite(epoch2, change));
      expect(e).toBeInstanceOf(CheckpointError);
      expect(e.message).toContain(message);
    }
  });
});

describe('a failed load changes nothing', () => {
  it('values the schema lets through but the optimizer or the GradScaler refuse: all of it is undone', async () => {
    // The objects hold epoch 1; the damaged checkpoints are epoch 2's, so a partial apply would show.
    const objects = await resumedAtEpoch1();
    const lr = await failedLoad(await rewrite(epoch2, ({ state }) => { (state.optimizer as any).paramGroups[0].lr = -5; }), objects);
    expect(lr.message).toMatch(/case-\d+\.safetensors: loadStateDict\(\): parameter group 0: Invalid learning rate: -5; nothing was changed/);
    // The optimizer has already taken epoch 2's state when the scaler refuses its part.
    const scaler = await failedLoad(await rewrite(epoch2, ({ state }) => { (state.scaler as any).growthFactor = 0.5; }), objects);
    expect(scaler.message).toContain("'growthFactor' must be a finite number > 1, got 0.5");
    const scale = await failedLoad(await rewrite(epoch2, ({ state }) => { (state.scaler as any).scale = -1; }), objects);
    expect(scale.message).toContain("'scale' must be finite and > 0");
    // The intact checkpoint still loads, and then everything is epoch 2's.
    const pending = await readCheckpoint(await asFile(epoch2), objects);
    pending.restore(objects.scaler);
    const fromScratch = freshObjects(config);
    (await readCheckpoint(await asFile(epoch2), fromScratch)).restore(fromScratch.scaler);
    expect(snapshot(objects)).toEqual(snapshot(fromScratch));
    expect(snapshot(objects)).not.toEqual(snapshot(await resumedAtEpoch1()));
  });

  it('through train(): a refused resume rejects before the run changes anything, and names the file', async () => {
    const path = await asFile(await rewrite(epoch2, ({ state }) => { state.epoch = '2'; }));
    await expect(train({ ...config, resume: path }, {}, data)).rejects.toThrow(`checkpoint ${path}.safetensors: training state field epoch`);
  });
});
