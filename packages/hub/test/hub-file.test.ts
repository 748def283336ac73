// hubFile in Node: hubDownload's cached file as a lazy Blob (fs.openAsBlob), with the same cache,
// offline mode, revision pins and errors.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { hubDownload, hubFile, LocalEntryNotFoundError } from '../src/index.js';
import { commitOf, pattern, type FakeRepo } from './helpers/fake-hub.js';
import { startHub } from './helpers/setup.js';

const MAIN = commitOf('main');
const V1 = commitOf('v1');
const weights = pattern(300_000);
const REPO: FakeRepo = {
  id: 'acme/blob-model',
  commits: { [V1]: { 'config.json': '{"version":1}' }, [MAIN]: { 'config.json': '{"version":2}', 'model.safetensors': weights } },
  refs: { main: MAIN, 'v1.0': V1 },
};

/** A Blob's bytes as a Buffer, whose `equals` compares large arrays fast. */
const bytesOf = async (blob: Blob) => Buffer.from(await blob.arrayBuffer());

describe('hubFile in Node', () => {
  it('returns the cached file as a Blob with its size and bytes, filled by the same cache as hubDownload', async () => {
    const { hub, options } = await startHub([REPO]);
    const blob = await hubFile('acme/blob-model', 'model.safetensors', options);
    expect(blob).toBeInstanceOf(Blob);
    expect(blob.size).toBe(weights.length);
    expect((await bytesOf(blob)).equals(weights)).toBe(true);
    const getsBefore = hub.count('GET');
    const path = await hubDownload('acme/blob-model', 'model.safetensors', options);
    expect(new Uint8Array(await readFile(path))).toEqual(weights);
    expect(hub.count('GET')).toBe(getsBefore); // hubDownload found hubFile's blob in the cache
  });

  it('slices read just the asked bytes of the file', async () => {
    const { options } = await startHub([REPO]);
    const blob = await hubFile('acme/blob-model', 'model.safetensors', options);
    expect([...await bytesOf(blob.slice(1000, 1016))]).toEqual([...weights.subarray(1000, 1016)]);
  });

  it('offline: reads the cached file with no request, and a file never downloaded is a LocalEntryNotFoundError', async () => {
    const { hub, options } = await startHub([REPO]);
    await hubFile('acme/blob-model', 'config.json', options);
    const before = hub.requests.length;
    expect(await (await hubFile('acme/blob-model', 'config.json', { ...options, offline: true })).text()).toBe('{"version":2}');
    await expect(hubFile('acme/blob-model', 'model.safetensors', { ...options, offline: true })).rejects.toBeInstanceOf(LocalEntryNotFoundError);
    expect(hub.requests.length).toBe(before);
  });

  it('a revision pin: a tag reads that commit, and a commit hash once cached needs no request', async () => {
    const { hub, options } = await startHub([REPO]);
    expect(await (await hubFile('acme/blob-model', 'config.json', { ...options, revision: 'v1.0' })).text()).toBe('{"version":1}');
    const before = hub.requests.length;
    expect(await (await hubFile('acme/blob-model', 'config.json', { ...options, revision: V1 })).text()).toBe('{"version":1}');
    expect(hub.requests.length).toBe(before);
  });

  it('names hubFile in option errors', async () => {
    await expect(hubFile('acme/blob-model', 'config.json', { cacheDirectory: '/tmp' } as never)).rejects.toThrow(/hubFile\(\) got an unknown option 'cacheDirectory'/);
  });
});
