// The loader reads through ModelFiles: a local folder (folderFiles), a Hub repo file by file
// through hubFile (hubFiles, here against the fake Hub of @core/hub's tests) and Blobs by name
// (blobFiles) give the same model and tokenizer; a missing or broken file is a PretrainedError
// naming it; and the browser build's platform module refuses local folders with a typed error.
import '@core/backend-cpu';
import { nn } from '@core/nn';
import { randn, type Tensor } from '@core/tensor';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commitOf } from '../../hub/test/helpers/fake-hub.js';
import { startHub } from '../../hub/test/helpers/setup.js';
import {
  blobFiles, folderFiles, GPT2LMHeadModel, hubFiles, isModelFiles, loadPretrainedWeights, PretrainedError, resolvePretrained, Tokenizer,
  type ModelFiles,
} from '../src/index.js';
import { folderFiles as browserFolderFiles, platformFiles as browserPlatformFiles } from '../src/platform-browser.js';
import { tempDir } from './helpers/checkpoints.js';
import { tinyGpt2RepoFiles } from './helpers/tiny-gpt2-repo.js';

const REPO = 'tiny/gpt2';
const COMMIT = commitOf('tiny-gpt2');

/** The repo's files written into a fresh folder. */
async function folderOf(files: Record<string, string | Uint8Array>): Promise<string> {
  const dir = await tempDir();
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

/** Every tensor of the state dict, as numbers by key. */
async function values(model: nn.Module): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const [key, t] of Object.entries(model.stateDict())) out[key] = Array.from(await t.data(), Number);
  return out;
}

const blobsOf = (files: Record<string, string | Uint8Array>) =>
  Object.fromEntries(Object.entries(files).map(([name, content]) => [name, new Blob([content as BlobPart])]));

describe('ModelFiles sources', () => {
  it('a Hub repo through hubFile, a local folder and Blobs by name load the same GPT-2 weights, equal to the served file, and the same tokenizer', async () => {
    const files = await tinyGpt2RepoFiles();
    const fixture = await startHub([{ id: REPO, commits: { [COMMIT]: files }, refs: { main: COMMIT } }]);
    const dir = await folderOf(files);

    const fromHub = await GPT2LMHeadModel.fromPretrained(hubFiles(REPO, fixture.options));
    const fromFolder = await GPT2LMHeadModel.fromPretrained(dir);
    const fromBlobs = await GPT2LMHeadModel.fromPretrained(blobsOf(files));
    const folderValues = await values(fromFolder);
    expect(await values(fromHub)).toEqual(folderValues);
    expect(await values(fromBlobs)).toEqual(folderValues);
    expect(fromHub.training).toBe(false);
    expect(fromHub.lmHead.weight).toBe(fromHub.transformer.wte.weight);
    // …and those are the file's values, not a fresh initialisation.
    const served = nn.deserializeSafetensors(files['model.safetensors'] as Uint8Array);
    expect(folderValues['transformer.h.1.mlp.c_fc.weight']).toEqual(Array.from(await served['transformer.h.1.mlp.c_fc.weight']!.data(), Number));
    // hubFile asked the fake Hub for the files (and downloaded them into the test's cache).
    const downloaded = fixture.hub.requests.filter((r) => r.server === 'hub' && r.path.includes('/resolve/')).map((r) => r.path);
    expect(downloaded.some((p) => p.endsWith('/model.safetensors'))).toBe(true);
    expect(downloaded.some((p) => p.endsWith('/config.json'))).toBe(true);

    const text = 'Call me Ishmael. Some years ago';
    const tokenizers = [await Tokenizer.fromPretrained(hubFiles(REPO, fixture.options)), await Tokenizer.fromPretrained(dir), await Tokenizer.fromPretrained(blobsOf(files))];
    const ids = tokenizers.map((t) => t.encode(text));
    expect(ids[0]!.length).toBeGreaterThan(3);
    expect(ids[1]).toEqual(ids[0]);
    expect(ids[2]).toEqual(ids[0]);
  });

  it('hubFiles: a file the repo lacks is has() false and a PretrainedError naming the repo and the file', async () => {
    const fixture = await startHub([{ id: REPO, commits: { [COMMIT]: { 'config.json': '{"n_layer": 1, "n_embd": 4, "n_head": 1, "vocab_size": 10, "n_positions": 4}' } }, refs: { main: COMMIT } }]);
    const files = hubFiles(REPO, fixture.options);
    expect(isModelFiles(files)).toBe(true);
    expect(await files.has('config.json')).toBe(true);
    expect(await files.has('model.safetensors')).toBe(false);
    const error = await files.blob('tokenizer.json').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PretrainedError);
    expect(error).toMatchObject({ reason: 'missing-file', file: 'tiny/gpt2/tokenizer.json (Hub)' });
    // A model from it fails on its weights the same way, saying what is missing.
    await expect(GPT2LMHeadModel.fromPretrained(files)).rejects.toThrow(/tiny\/gpt2\/model\.safetensors \(Hub\): the model has no model\.safetensors and no model\.safetensors\.index\.json: no weights to load/);
  });

  it('blobFiles: a sharded checkpoint loads; a missing or corrupt file is a PretrainedError naming it', async () => {
    class Net extends nn.Module<[Tensor], Tensor> {
      a = new nn.Linear(3, 2);
      b = new nn.Linear(2, 1);
      forward(x: Tensor): Tensor {
        return this.b.forward(this.a.forward(x));
      }
    }
    const first = { 'a.weight': randn([2, 3]), 'a.bias': randn([2]) };
    const second = { 'b.weight': randn([1, 2]), 'b.bias': randn([1]) };
    const weightMap = { 'a.weight': 'one.safetensors', 'a.bias': 'one.safetensors', 'b.weight': 'two.safetensors', 'b.bias': 'two.safetensors' };
    const record = {
      'one.safetensors': new Blob([nn.serializeSafetensors(first) as BlobPart]),
      'two.safetensors': new Blob([nn.serializeSafetensors(second) as BlobPart]),
      'model.safetensors.index.json': new Blob([JSON.stringify({ weight_map: weightMap })]),
    };
    const net = new Net();
    await loadPretrainedWeights(net, blobFiles(record));
    expect(Array.from(await net.b.weight.data())).toEqual(Array.from(await second['b.weight'].data()));
    expect(Array.from(await net.a.bias!.data())).toEqual(Array.from(await first['a.bias'].data()));

    const { 'two.safetensors': _two, ...withoutTwo } = record;
    await expect(loadPretrainedWeights(new Net(), blobFiles(withoutTwo))).rejects.toMatchObject({ reason: 'missing-file', file: 'two.safetensors' });
    const truncated = { ...record, 'two.safetensors': record['two.safetensors'].slice(0, 40) };
    const untouched = new Net();
    const before = Array.from(await untouched.a.weight.data());
    const error = await loadPretrainedWeights(untouched, blobFiles(truncated)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PretrainedError);
    expect(error).toMatchObject({ reason: 'bad-file', file: 'two.safetensors' });
    expect((error as Error).message).toMatch(/^two\.safetensors: /);
    expect(Array.from(await untouched.a.weight.data())).toEqual(before); // headers are checked before anything is copied
    await expect(resolvePretrained(await tempDir())).rejects.toMatchObject({ reason: 'missing-file' });
  });

  it('refuses what is not a source with a TypeError', async () => {
    await expect(loadPretrainedWeights(new nn.Linear(1, 1), 42 as never)).rejects.toThrow(/expected a folder \(a string\) or ModelFiles, got number/);
    await expect(GPT2LMHeadModel.fromPretrained(null as never)).rejects.toThrow(TypeError);
    expect(() => blobFiles({ 'config.json': '{}' as never })).toThrow(/'config\.json' must be a Blob/);
    const custom: ModelFiles = { where: (n) => `custom:${n}`, has: async () => false, blob: async (n) => Promise.reject(new Error(`no ${n}`)) };
    await expect(Tokenizer.fromPretrained(custom)).rejects.toThrow('no tokenizer.json');
    expect(folderFiles('/nowhere').where('config.json')).toBe(join('/nowhere', 'config.json'));
  });
});

describe("the browser build's platform", () => {
  it('refuses a local folder path with a PretrainedError (needs-node) that says what to give instead, and takes a repo id to the Hub', async () => {
    for (const path of ['/home/me/gpt2', './gpt2', '../models/gpt2', 'C:\\models\\gpt2']) {
      const error = await browserPlatformFiles(path, {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PretrainedError);
      expect(error).toMatchObject({ reason: 'needs-node', file: path });
      expect((error as Error).message).toMatch(/a page has no file system: give a Hub repo id/);
    }
    expect(() => browserFolderFiles('models')).toThrow(PretrainedError);
    const { dir, files } = await browserPlatformFiles('openai-community/gpt2', { revision: 'v1' });
    expect(dir).toBe('openai-community/gpt2');
    expect(files.where('config.json')).toBe('openai-community/gpt2/config.json (Hub, revision v1)');
  });
});
