// hubDownload against a fake Hub on 127.0.0.1: the cache layout Python's huggingface_hub uses,
// cache hits, revisions, the token and where it goes, and the typed HTTP errors.
import { lstat, readFile, readlink, readdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAbsolute, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  EntryNotFoundError, GatedRepoError, HfHubHTTPError, hubDownload, HubError, RepositoryNotFoundError, RevisionNotFoundError,
} from '../src/index.js';
import { commitOf, gitSha1, pattern, sha256, type FakeRepo } from './helpers/fake-hub.js';
import { startHub } from './helpers/setup.js';

const MAIN = commitOf('main');
const V1 = commitOf('v1');
const weights = pattern(200_000);
const oldWeights = pattern(5_000, 2);
const REPO: FakeRepo = {
  id: 'acme/tiny-model',
  commits: {
    [V1]: { 'config.json': '{"version":1}', 'model.safetensors': oldWeights },
    [MAIN]: { 'config.json': '{"version":2}', 'model.safetensors': weights, 'onnx/model.onnx': 'onnx bytes' },
  },
  refs: { main: MAIN, 'v1.0': V1, 'refs/pr/1': V1 },
};

describe('hubDownload: the cache layout of huggingface_hub', () => {
  it('stores an LFS file as blobs/{sha256}, links snapshots/{commit}/{file} to it relatively, and records refs/main', async () => {
    const { hub, options, repoDir, list } = await startHub([REPO]);
    const path = await hubDownload('acme/tiny-model', 'model.safetensors', options);
    const dir = repoDir('acme/tiny-model');
    expect(isAbsolute(path)).toBe(true);
    expect(path).toBe(join(dir, 'snapshots', MAIN, 'model.safetensors'));
    expect((await lstat(path)).isSymbolicLink()).toBe(true);
    expect(await readlink(path)).toBe(join('..', '..', 'blobs', sha256(weights)));
    expect(new Uint8Array(await readFile(path))).toEqual(weights);
    expect(await readFile(join(dir, 'refs', 'main'), 'utf8')).toBe(MAIN);
    expect(await list(join(dir, 'blobs'))).toEqual([sha256(weights)]);
    // HEAD on the Hub (stops at the CDN redirect), then GET on the CDN.
    expect(hub.requests.map((r) => `${r.server} ${r.method}`)).toEqual(['hub HEAD', 'cdn GET']);
  });

  it('names a regular file\'s blob by its git sha1 and links nested files with the right depth', async () => {
    const { options, repoDir } = await startHub([REPO]);
    const path = await hubDownload('acme/tiny-model', 'onnx/model.onnx', options);
    const dir = repoDir('acme/tiny-model');
    expect(path).toBe(join(dir, 'snapshots', MAIN, 'onnx', 'model.onnx'));
    expect(await readlink(path)).toBe(join('..', '..', '..', 'blobs', gitSha1('onnx bytes')));
    expect(await readFile(path, 'utf8')).toBe('onnx bytes');
  });

  it('takes subfolder and filename apart, as Python does', async () => {
    const { options } = await startHub([REPO]);
    const path = await hubDownload('acme/tiny-model', 'model.onnx', { ...options, subfolder: 'onnx' });
    expect(path.endsWith(join(MAIN, 'onnx', 'model.onnx'))).toBe(true);
  });

  it('serves a second call from the cache: one HEAD, no GET', async () => {
    const { hub, options } = await startHub([REPO]);
    const first = await hubDownload('acme/tiny-model', 'model.safetensors', options);
    const before = hub.requests.length;
    const second = await hubDownload('acme/tiny-model', 'model.safetensors', options);
    expect(second).toBe(first);
    expect(hub.requests.slice(before).map((r) => `${r.server} ${r.method}`)).toEqual(['hub HEAD']);
  });

  it('does not download a blob again for another commit that has the same content', async () => {
    const same = commitOf('same');
    const repo: FakeRepo = { ...REPO, commits: { ...REPO.commits, [same]: { 'model.safetensors': weights } }, refs: { ...REPO.refs, same } };
    const { hub, options, repoDir } = await startHub([repo]);
    await hubDownload('acme/tiny-model', 'model.safetensors', options);
    const path = await hubDownload('acme/tiny-model', 'model.safetensors', { ...options, revision: 'same' });
    expect(path).toBe(join(repoDir('acme/tiny-model'), 'snapshots', same, 'model.safetensors'));
    expect(hub.count('GET')).toBe(1);
  });

  it('downloads again with forceDownload, replacing the blob with the same bytes', async () => {
    const { hub, options } = await startHub([REPO]);
    await hubDownload('acme/tiny-model', 'model.safetensors', options);
    const path = await hubDownload('acme/tiny-model', 'model.safetensors', { ...options, forceDownload: true });
    expect(hub.count('GET')).toBe(2);
    expect(new Uint8Array(await readFile(path))).toEqual(weights);
  });

  it('follows a branch or tag to its commit and records it under refs/, slashes included', async () => {
    const { options, repoDir } = await startHub([REPO]);
    const dir = repoDir('acme/tiny-model');
    const tagged = await hubDownload('acme/tiny-model', 'config.json', { ...options, revision: 'v1.0' });
    expect(tagged).toBe(join(dir, 'snapshots', V1, 'config.json'));
    expect(await readFile(tagged, 'utf8')).toBe('{"version":1}');
    expect(await readFile(join(dir, 'refs', 'v1.0'), 'utf8')).toBe(V1);
    await hubDownload('acme/tiny-model', 'config.json', { ...options, revision: 'refs/pr/1' });
    expect(await readFile(join(dir, 'refs', 'refs', 'pr', '1'), 'utf8')).toBe(V1);
  });

  it('takes a commit hash as the revision, records no ref, and serves it from the cache without any request', async () => {
    const { hub, options, repoDir } = await startHub([REPO]);
    const path = await hubDownload('acme/tiny-model', 'model.safetensors', { ...options, revision: V1 });
    expect(new Uint8Array(await readFile(path))).toEqual(oldWeights);
    expect(await readdir(repoDir('acme/tiny-model'))).not.toContain('refs');
    const before = hub.requests.length;
    expect(await hubDownload('acme/tiny-model', 'model.safetensors', { ...options, revision: V1 })).toBe(path);
    expect(hub.requests.length).toBe(before);
  });

  it('uses the datasets/ URL prefix and the datasets-- cache folder for repoType dataset', async () => {
    const data: FakeRepo = { id: 'acme/tiny-data', type: 'dataset', commits: { [MAIN]: { 'train.csv': 'a,b\n1,2\n' } }, refs: { main: MAIN } };
    const { hub, options, repoDir } = await startHub([data]);
    const path = await hubDownload('acme/tiny-data', 'train.csv', { ...options, repoType: 'dataset' });
    expect(path).toBe(join(repoDir('acme/tiny-data', 'dataset'), 'snapshots', MAIN, 'train.csv'));
    expect(hub.requests[0]!.path).toBe('/datasets/acme/tiny-data/resolve/main/train.csv');
  });
});

describe('hubDownload: the token', () => {
  const privateRepo: FakeRepo = { ...REPO, id: 'acme/private', token: 'hf_secret' };

  it('is sent as a Bearer token to the Hub and never to the host a download is redirected to', async () => {
    const { hub, options } = await startHub([privateRepo]);
    const path = await hubDownload('acme/private', 'model.safetensors', { ...options, token: 'hf_secret' });
    expect(new Uint8Array(await readFile(path))).toEqual(weights);
    const onHub = hub.requests.filter((r) => r.server === 'hub');
    const onCdn = hub.requests.filter((r) => r.server === 'cdn');
    expect(onHub.length).toBeGreaterThan(0);
    expect(onCdn.length).toBeGreaterThan(0);
    for (const r of onHub) expect(r.authorization).toBe('Bearer hf_secret');
    for (const r of onCdn) expect(r.authorization).toBeUndefined();
  });

  it('is not sent with token: false', async () => {
    const { hub, options } = await startHub([REPO]);
    await hubDownload('acme/tiny-model', 'config.json', options);
    expect(hub.requests.every((r) => r.authorization === undefined)).toBe(true);
  });
});

describe('hubDownload: HTTP errors are typed and say what to do', () => {
  it('401 without a token is a RepositoryNotFoundError naming the repo and HF_TOKEN; nothing is cached', async () => {
    const { options, cacheDir } = await startHub([{ ...REPO, id: 'acme/private', token: 'hf_secret' }]);
    const error = await hubDownload('acme/private', 'config.json', options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RepositoryNotFoundError);
    expect(error).toBeInstanceOf(HfHubHTTPError);
    expect(error).toBeInstanceOf(HubError);
    const e = error as RepositoryNotFoundError;
    expect(e.status).toBe(401);
    expect(e.repoId).toBe('acme/private');
    expect(e.message).toMatch(/'acme\/private'/);
    expect(e.message).toMatch(/HF_TOKEN/);
    expect(e.message).toMatch(/accept the model's terms/);
    expect(e.serverMessage).toBe('Repository not found');
    expect(await readdir(cacheDir)).toEqual([]);
  });

  it('403 on a gated repo is a GatedRepoError that says to accept the terms and set HF_TOKEN', async () => {
    const { options } = await startHub([{ ...REPO, id: 'acme/gated', token: 'hf_ok', gated: true }]);
    const error = await hubDownload('acme/gated', 'config.json', { ...options, token: 'hf_wrong' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatedRepoError);
    expect(error).toBeInstanceOf(RepositoryNotFoundError);
    expect((error as GatedRepoError).status).toBe(403);
    expect((error as Error).message).toMatch(/repo 'acme\/gated'.*gated.*accept the model's terms.*HF_TOKEN/s);
  });

  it('404 for a missing file is an EntryNotFoundError naming the repo, the file and the revision', async () => {
    const { options } = await startHub([REPO]);
    const error = await hubDownload('acme/tiny-model', 'missing.bin', { ...options, revision: 'v1.0' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EntryNotFoundError);
    const e = error as EntryNotFoundError;
    expect([e.status, e.repoId, e.filename, e.revision]).toEqual([404, 'acme/tiny-model', 'missing.bin', 'v1.0']);
    expect(e.message).toMatch(/'missing\.bin'.*'acme\/tiny-model'.*'v1\.0'/);
  });

  it('404 for a missing revision is a RevisionNotFoundError', async () => {
    const { options } = await startHub([REPO]);
    const error = await hubDownload('acme/tiny-model', 'config.json', { ...options, revision: 'nope' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RevisionNotFoundError);
    expect((error as Error).message).toMatch(/Revision 'nope'.*'acme\/tiny-model'/);
  });

  it('a server without the Hub\'s X-Repo-Commit header is refused by name, and nothing is cached', async () => {
    const { options, cacheDir } = await startHub([REPO]);
    const plain = createServer((_req, res) => res.writeHead(200, { 'Content-Length': '2', ETag: '"abc"' }).end('ok'));
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const endpoint = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
      const error = await hubDownload('acme/tiny-model', 'config.json', { ...options, endpoint }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HubError);
      expect((error as Error).message).toMatch(/X-Repo-Commit.*does not speak the Hub's protocol/);
      expect(await readdir(cacheDir)).toEqual([]);
    } finally {
      plain.closeAllConnections();
      await new Promise((resolve) => plain.close(resolve));
    }
  });
});
