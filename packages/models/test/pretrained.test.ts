import '@core/backend-cpu';
import { nn } from '@core/nn';
import { bfloat16, float16, float32, int32, ones, randn, tensor, type Tensor } from '@core/tensor';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_SYNC } from '../../optim/test/fake-device.js';
import { loadPretrainedWeights, PretrainedError, resolvePretrained } from '../src/index.js';
import { tempDir, writeCheckpoint, writeIndex } from './helpers/checkpoints.js';

/** A small model with Hugging Face-style names: a tied head, an int buffer and a non-persistent buffer. */
class Tiny extends nn.Module<[Tensor], Tensor> {
  static override readonly registeredNames = { layerNorm: 'LayerNorm', lmHead: 'lm_head' };
  wte = new nn.Embedding(5, 4);
  proj = new nn.Linear(4, 3);
  layerNorm = new nn.LayerNorm(3);
  lmHead = new nn.Linear(4, 5, false);
  declare steps: Tensor;
  declare scale: Tensor;

  constructor() {
    super();
    this.lmHead.weight = this.wte.weight; // tied, as GPT-2's head is
    this.registerBuffer('steps', tensor([7, 8], { dtype: int32 }));
    this.registerBuffer('scale', ones([3]), false);
  }

  forward(x: Tensor): Tensor {
    return x;
  }
}

const TIED = { 'lm_head.weight': 'wte.weight' };

/** The tensors of a checkpoint for Tiny (no lm_head.weight, as GPT-2's files have none). */
function weights(): Record<string, Tensor> {
  return {
    'wte.weight': randn([5, 4]),
    'proj.weight': randn([3, 4]),
    'proj.bias': randn([3]),
    'LayerNorm.weight': randn([3]),
    'LayerNorm.bias': randn([3]),
    steps: tensor([3, 4], { dtype: int32 }),
  };
}

async function values(t: Tensor): Promise<number[]> {
  return [...(await t.data())];
}

/** Every state-dict value of `model`, to check that a failed load changed nothing. */
async function snapshot(model: nn.AnyModule): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const [key, t] of Object.entries(model.stateDict())) out[key] = await values(t);
  return out;
}

async function expectLoaded(model: Tiny, file: Record<string, Tensor>): Promise<void> {
  for (const [key, t] of Object.entries(file)) expect(await values(model.stateDict()[key]!), key).toEqual(await values(t));
}

describe('loadPretrainedWeights', () => {
  it('copies model.safetensors into the same parameter objects, which stay leaves that require grad', async () => {
    const dir = await tempDir();
    const file = weights();
    await writeCheckpoint(dir, { 'model.safetensors': file });
    const model = new Tiny();
    const before = model.stateDict({ keepVars: true });
    await loadPretrainedWeights(model, dir, { tiedKeys: TIED });
    await expectLoaded(model, file);
    const after = model.stateDict({ keepVars: true });
    for (const key of Object.keys(before)) expect(after[key], key).toBe(before[key]);
    for (const p of model.parameters()) expect([p.isLeaf, p.requiresGrad]).toEqual([true, true]);
    expect(model.lmHead.weight).toBe(model.wte.weight);
    expect(await values(model.lmHead.weight)).toEqual(await values(file['wte.weight']!));
  });

  it('reads a sharded checkpoint through model.safetensors.index.json', async () => {
    const dir = await tempDir();
    const file = weights();
    const { steps, 'wte.weight': wte, ...rest } = file;
    await writeCheckpoint(dir, {
      'model-00001-of-00002.safetensors': { 'wte.weight': wte!, steps: steps! },
      'model-00002-of-00002.safetensors': rest,
    });
    const model = new Tiny();
    await loadPretrainedWeights(model, dir, { tiedKeys: TIED });
    await expectLoaded(model, file);
  });

  it('reads tensors larger than one 16 MiB slice in several slices, each in its place', async () => {
    const dir = await tempDir();
    const big = tensor(Float32Array.from({ length: 5_000_000 }, (_, i) => i % 1000));
    await writeCheckpoint(dir, { 'model.safetensors': { 'proj.weight': big.reshape([1000, 5000]) } });
    const model = new (class extends nn.Module<[Tensor], Tensor> {
      proj = new nn.Linear(5000, 1000, false);
      forward(x: Tensor): Tensor {
        return x;
      }
    })();
    await loadPretrainedWeights(model, dir);
    const loaded = model.proj.weight.reshape([-1]);
    expect(await loaded.eq(big).all().item()).toBe(1);
    const sliceEnd = 4 * 2 ** 20; // 16 MiB of float32
    expect(await values(loaded.narrow(0, sliceEnd - 2, 4))).toEqual([(sliceEnd - 2) % 1000, (sliceEnd - 1) % 1000, sliceEnd % 1000, (sliceEnd + 1) % 1000]);
  });

  it('converts to the requested dtype with round-to-nearest-even, casting floating buffers too and keeping int buffers', async () => {
    const dir = await tempDir();
    const file = weights();
    // Halfway cases: 1 + 2^-8 and 1 + 3·2^-8 lie between two bfloat16 values, 1 + 2^-11 and 1 + 3·2^-11 between two float16 values.
    file['proj.bias'] = tensor([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -11]);
    file['LayerNorm.bias'] = tensor([1 + 2 ** -11, 1 + 3 * 2 ** -11, -1 - 3 * 2 ** -11]);
    await writeCheckpoint(dir, { 'model.safetensors': file });

    const bf = new Tiny();
    await loadPretrainedWeights(bf, dir, { tiedKeys: TIED, dtype: bfloat16 });
    // torch.tensor([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-11]).bfloat16() → [1.0, 1.015625, 1.0]
    expect(await values(bf.proj.bias!)).toEqual([1, 1 + 2 ** -6, 1]);
    for (const [key, p] of Object.entries(bf.stateDict())) expect(p.dtype, key).toBe(key === 'steps' ? int32 : bfloat16);
    expect(bf.scale.dtype).toBe(bfloat16);
    expect(bf.lmHead.weight).toBe(bf.wte.weight);
    for (const p of bf.parameters()) expect([p.isLeaf, p.requiresGrad]).toEqual([true, true]);

    const half = new Tiny();
    await loadPretrainedWeights(half, dir, { tiedKeys: TIED, dtype: float16 });
    // torch.tensor([1 + 2**-11, 1 + 3 * 2**-11, -1 - 3 * 2**-11]).half() → [1.0, 1.001953125, -1.001953125]
    expect(await values(half.layerNorm.bias!)).toEqual([1, 1 + 2 ** -9, -1 - 2 ** -9]);
    expect(half.steps.dtype).toBe(int32);
    expect(await values(half.steps)).toEqual([3, 4]);
  });

  it('reads F16 and BF16 files into a float32 model exactly', async () => {
    const dir = await tempDir();
    const file = weights();
    const halfValues = [0.5, -2, 1 + 2 ** -10];
    await writeCheckpoint(dir, {
      'model.safetensors': { ...file, 'proj.bias': tensor(halfValues, { dtype: float16 }), 'LayerNorm.bias': tensor([0.5, -2, 1 + 2 ** -7], { dtype: bfloat16 }) },
    });
    const model = new Tiny();
    await loadPretrainedWeights(model, dir, { tiedKeys: TIED });
    expect(model.proj.bias!.dtype).toBe(float32);
    expect(await values(model.proj.bias!)).toEqual(halfValues);
    expect(await values(model.layerNorm.bias!)).toEqual([0.5, -2, 1 + 2 ** -7]);
  });

  it('maps file keys with renameKey, skipping the keys it returns undefined for', async () => {
    const dir = await tempDir();
    const file = weights();
    const prefixed = Object.fromEntries(Object.entries(file).map(([k, t]) => [`transformer.${k}`, t]));
    await writeCheckpoint(dir, { 'model.safetensors': { ...prefixed, 'transformer.h.0.attn.masked_bias': tensor([-1e4]) } });
    const model = new Tiny();
    await loadPretrainedWeights(model, dir, {
      tiedKeys: TIED,
      renameKey: (k) => (k.endsWith('.masked_bias') ? undefined : k.slice('transformer.'.length)),
    });
    await expectLoaded(model, file);

    // Keys are checked after renaming: an unexpected one is named as renamed, with its file key.
    const error = await loadPretrainedWeights(new Tiny(), dir, { tiedKeys: TIED, renameKey: (k) => k.replace('transformer.', 'model.') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PretrainedError);
    expect((error as PretrainedError).keys).toContain('model.h.0.attn.masked_bias');
    expect((error as Error).message).toMatch(/model\.wte\.weight \(from 'transformer\.wte\.weight' in .*model\.safetensors\)/);
  });

  it('applies transform before copying, and checks the shape it gives before reading anything', async () => {
    const dir = await tempDir();
    const file = weights();
    file['proj.weight'] = randn([4, 3]); // stored [in, out], as a Conv1D keeps it
    await writeCheckpoint(dir, { 'model.safetensors': file });
    const model = new Tiny();
    await loadPretrainedWeights(model, dir, { tiedKeys: TIED, transform: (key, t) => (key === 'proj.weight' ? t.t() : t) });
    expect(await values(model.proj.weight)).toEqual(await values(file['proj.weight']!.t().contiguous()));

    const other = new Tiny();
    const before = await snapshot(other);
    const error = await loadPretrainedWeights(other, dir, { tiedKeys: TIED }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PretrainedError);
    expect((error as PretrainedError).reason).toBe('shape-mismatch');
    expect((error as Error).message).toContain("'proj.weight' in");
    expect((error as Error).message).toContain('the model expects shape [3, 4], the checkpoint has [4, 3]');
    expect(await snapshot(other)).toEqual(before);
  });

  it('accepts a tied key present in the file with equal values, and refuses different ones', async () => {
    const dir = await tempDir();
    const file = weights();
    await writeCheckpoint(dir, { 'model.safetensors': { ...file, 'lm_head.weight': file['wte.weight']! } });
    const model = new Tiny();
    await loadPretrainedWeights(model, dir, { tiedKeys: TIED });
    await expectLoaded(model, file);

    const untied = await tempDir();
    await writeCheckpoint(untied, { 'model.safetensors': { ...file, 'lm_head.weight': randn([5, 4]) } });
    const error = await loadPretrainedWeights(new Tiny(), untied, { tiedKeys: TIED }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PretrainedError);
    expect((error as PretrainedError).reason).toBe('tied-mismatch');
    expect((error as PretrainedError).keys).toEqual(['lm_head.weight']);
    expect((error as Error).message).toMatch(/'lm_head\.weight' in .*model\.safetensors differs from 'wte\.weight'/);
  });

  it('moves the whole model, tensors not in the file included, to the requested device and dtype', async () => {
    const dir = await tempDir();
    await writeCheckpoint(dir, { 'model.safetensors': weights() });
    const model = new Tiny();
    await loadPretrainedWeights(model, dir, { tiedKeys: TIED, device: 'cpu', dtype: float16 });
    for (const t of [...model.parameters(), ...model.buffers()]) expect(String(t.device)).toBe('cpu');
    expect(model.scale.dtype).toBe(float16);
    expect(await values(model.scale)).toEqual([1, 1, 1]);
  });

  it('writes the values straight into tensors on the target device, here a GPU-like device that reads only asynchronously', async () => {
    const dir = await tempDir();
    const file = weights();
    await writeCheckpoint(dir, { 'model.safetensors': { ...file, 'lm_head.weight': file['wte.weight']! } });
    const model = new Tiny();
    await loadPretrainedWeights(model, dir, { tiedKeys: TIED, device: NO_SYNC });
    for (const [key, t] of Object.entries(model.stateDict())) {
      expect(t.device.type, key).toBe(NO_SYNC);
      expect([...(await t.toAsync('cpu').then((c) => c.data()))], key).toEqual(await values(file[key === 'lm_head.weight' ? 'wte.weight' : key]!));
    }
    expect(model.scale.device.type).toBe(NO_SYNC);
    expect(model.lmHead.weight).toBe(model.wte.weight);
  });

  describe('a checkpoint that does not fit is a PretrainedError naming keys and files, and the model is left unchanged', () => {
    async function refused(files: Record<string, Record<string, Tensor>>, index?: Record<string, string>): Promise<PretrainedError> {
      const dir = await tempDir();
      await writeCheckpoint(dir, files);
      if (index) await writeIndex(dir, index);
      const model = new Tiny();
      const before = await snapshot(model);
      const error = await loadPretrainedWeights(model, dir, { tiedKeys: TIED }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PretrainedError);
      expect(await snapshot(model)).toEqual(before);
      return error as PretrainedError;
    }

    it('missing keys, with the files read', async () => {
      const { 'proj.bias': _, steps: __, ...file } = weights();
      const error = await refused({ 'model.safetensors': file });
      expect(error.reason).toBe('missing-keys');
      expect(error.keys).toEqual(['steps', 'proj.bias']);
      expect(error.message).toMatch(/Missing key\(s\) in the checkpoint: steps, proj\.bias \(read: .*model\.safetensors\)/);
    });

    it('unexpected keys, with the file each is in', async () => {
      const error = await refused({ 'model.safetensors': { ...weights(), 'h.0.attn.bias': randn([2]) } });
      expect(error.reason).toBe('unexpected-keys');
      expect(error.keys).toEqual(['h.0.attn.bias']);
      expect(error.message).toMatch(/Unexpected key\(s\).*h\.0\.attn\.bias \(in .*model\.safetensors\)/);
    });

    it('a shape that differs, expected vs found', async () => {
      const error = await refused({ 'model.safetensors': { ...weights(), 'proj.bias': randn([4]) } });
      expect(error.reason).toBe('shape-mismatch');
      expect(error.keys).toEqual(['proj.bias']);
      expect(error.message).toMatch(/'proj\.bias' in .*model\.safetensors: the model expects shape \[3\], the checkpoint has \[4\]/);
    });

    it('a float tensor in the file for an int buffer', async () => {
      const error = await refused({ 'model.safetensors': { ...weights(), steps: tensor([1, 2]) } });
      expect(error.reason).toBe('dtype-mismatch');
      expect(error.message).toMatch(/'steps' in .*model\.safetensors is F32, which cannot be loaded into the model's int32 tensor/);
    });

    it('a shard the index lists that is missing', async () => {
      const file = weights();
      const error = await refused(
        { 'model-00001-of-00002.safetensors': file },
        { ...Object.fromEntries(Object.keys(file).map((k) => [k, 'model-00001-of-00002.safetensors'])), 'proj.bias': 'model-00002-of-00002.safetensors' },
      );
      expect(error.reason).toBe('missing-file');
      expect(error.message).toMatch(/model\.safetensors\.index\.json lists shard 'model-00002-of-00002\.safetensors', which is missing/);
    });

    it('a key the index puts in a shard that lacks it', async () => {
      const { 'proj.bias': bias, ...file } = weights();
      const error = await refused(
        { 'model-00001-of-00002.safetensors': file, 'model-00002-of-00002.safetensors': { 'proj.bias': bias! } },
        { ...Object.fromEntries(Object.keys(file).map((k) => [k, 'model-00001-of-00002.safetensors'])), 'proj.bias': 'model-00001-of-00002.safetensors' },
      );
      expect(error.keys).toEqual(['proj.bias']);
      expect(error.message).toMatch(/puts 'proj\.bias' in .*model-00001-of-00002\.safetensors, which has no such tensor/);
    });

    it('a folder with no weights', async () => {
      const error = await refused({});
      expect(error.reason).toBe('missing-file');
      expect(error.message).toContain('has no model.safetensors and no model.safetensors.index.json');
    });
  });

  it('names a bad keyword in a TypeError', async () => {
    const dir = await tempDir();
    await writeCheckpoint(dir, { 'model.safetensors': weights() });
    await expect(loadPretrainedWeights(new Tiny(), dir, { tiedKeys: TIED, dtyp: float16 } as never)).rejects.toThrow(
      new TypeError("loadPretrainedWeights() got an unexpected keyword argument 'dtyp' (it takes device, dtype, renameKey, transform, tiedKeys)"),
    );
    await expect(loadPretrainedWeights(new Tiny(), dir, { dtype: int32 })).rejects.toThrow(TypeError);
  });
});

describe('resolvePretrained', () => {
  it('uses a local folder as it is and parses its config.json', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'config.json'), JSON.stringify({ model_type: 'gpt2', n_layer: 2 }));
    const resolved = await resolvePretrained(dir);
    expect(resolved).toMatchObject({ dir, config: { model_type: 'gpt2', n_layer: 2 } });
    expect(resolved.files.where('config.json')).toBe(join(dir, 'config.json'));
    expect(await resolved.files.has('config.json')).toBe(true);
  });

  it('refuses a folder whose config.json is missing or not a JSON object, naming the file', async () => {
    const dir = await tempDir();
    await expect(resolvePretrained(dir)).rejects.toMatchObject({ reason: 'missing-file', file: join(dir, 'config.json') });
    await writeFile(join(dir, 'config.json'), '{"n_layer": 2,');
    await expect(resolvePretrained(dir)).rejects.toThrow(/config\.json: config\.json is not valid JSON/);
    await writeFile(join(dir, 'config.json'), '[1, 2]');
    await expect(resolvePretrained(dir)).rejects.toThrow(PretrainedError);
  });

  it('names a bad keyword in a TypeError', async () => {
    const dir = await tempDir();
    await expect(resolvePretrained(dir, { revison: 'main' } as never)).rejects.toThrow(/unexpected keyword argument 'revison'/);
  });
});
