// Interrupted and damaged downloads: a broken connection or an abort keeps the bytes as
// blobs/{etag}.incomplete and the next call continues with a Range request; bytes that do not match
// the announced size or sha256 are deleted, never cached; progress reports only grow.
import { createHash } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hubDownload, HubConnectionError, HubIntegrityError, type DownloadProgress } from '../src/index.js';
import { commitOf, pattern, sha256, type FakeRepo } from './helpers/fake-hub.js';
import { startHub } from './helpers/setup.js';

const MAIN = commitOf('main');
const weights = pattern(300_000, 3);
const text = 'x'.repeat(50_000);
const REPO: FakeRepo = { id: 'acme/resumable', commits: { [MAIN]: { 'model.safetensors': weights, 'vocab.txt': text } }, refs: { main: MAIN } };
const HALF = 100_000;

const digest = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe('hubDownload: resuming', () => {
  it('continues a download the network cut, with Range: bytes=N-, to a byte-identical file', async () => {
    const { hub, options, repoDir } = await startHub([REPO]);
    const incomplete = join(repoDir('acme/resumable'), 'blobs', `${sha256(weights)}.incomplete`);
    hub.fault(`model.safetensors`, { hold: HALF });
    const cutOnce = (p: DownloadProgress) => { if (p.loaded === HALF) hub.cutHeld(); };
    const error = await hubDownload('acme/resumable', 'model.safetensors', { ...options, onProgress: cutOnce }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubConnectionError);
    expect((error as Error).message).toMatch(/after 100000 bytes of 'model\.safetensors'/);
    expect((await stat(incomplete)).size).toBe(HALF);
    expect(await readdir(join(repoDir('acme/resumable'), 'snapshots')).catch(() => [])).toEqual([]);

    const path = await hubDownload('acme/resumable', 'model.safetensors', options);
    const gets = hub.requests.filter((r) => r.method === 'GET');
    expect(gets.map((r) => r.range)).toEqual([undefined, `bytes=${HALF}-`]);
    const got = new Uint8Array(await readFile(path));
    expect(got.length).toBe(weights.length);
    expect(digest(got)).toBe(sha256(weights));
    await expect(stat(incomplete)).rejects.toThrow(/ENOENT/);
  });

  it('resumes a regular (non-LFS) file on the Hub itself too', async () => {
    const { hub, options } = await startHub([REPO]);
    hub.fault('vocab.txt', { hold: 20_000 });
    const cut = (p: DownloadProgress) => { if (p.loaded === 20_000) hub.cutHeld(); };
    await expect(hubDownload('acme/resumable', 'vocab.txt', { ...options, onProgress: cut })).rejects.toBeInstanceOf(HubConnectionError);
    const path = await hubDownload('acme/resumable', 'vocab.txt', options);
    expect(await readFile(path, 'utf8')).toBe(text);
    expect(hub.requests.filter((r) => r.method === 'GET').map((r) => r.range)).toEqual([undefined, 'bytes=20000-']);
  });

  it('aborting through the signal rejects with its reason and leaves a .incomplete the next call resumes', async () => {
    const { hub, options, repoDir } = await startHub([REPO]);
    hub.fault('model.safetensors', { hold: HALF });
    const controller = new AbortController();
    const reason = new Error('stopped by the user');
    const stopHalfway = (p: DownloadProgress) => { if (p.loaded === HALF) controller.abort(reason); };
    const error = await hubDownload('acme/resumable', 'model.safetensors', { ...options, signal: controller.signal, onProgress: stopHalfway })
      .catch((e: unknown) => e);
    expect(error).toBe(reason);
    expect((await stat(join(repoDir('acme/resumable'), 'blobs', `${sha256(weights)}.incomplete`))).size).toBe(HALF);

    const seen: number[] = [];
    const path = await hubDownload('acme/resumable', 'model.safetensors', { ...options, onProgress: (p) => seen.push(p.loaded) });
    expect(hub.requests.filter((r) => r.method === 'GET').at(-1)!.range).toBe(`bytes=${HALF}-`);
    expect(seen[0]).toBe(HALF); // the resumed part counts from where it left off
    expect(digest(new Uint8Array(await readFile(path)))).toBe(sha256(weights));
  });

  it('an already aborted signal rejects before any request', async () => {
    const { hub, options } = await startHub([REPO]);
    const controller = new AbortController();
    controller.abort(new Error('never mind'));
    await expect(hubDownload('acme/resumable', 'model.safetensors', { ...options, signal: controller.signal })).rejects.toThrow('never mind');
    expect(hub.count('GET')).toBe(0);
  });

  it('starts again from byte 0 when the server answers a Range request with the whole file (200)', async () => {
    const { hub, options } = await startHub([REPO]);
    hub.fault('model.safetensors', { hold: HALF });
    await expect(hubDownload('acme/resumable', 'model.safetensors', { ...options, onProgress: (p) => { if (p.loaded === HALF) hub.cutHeld(); } }))
      .rejects.toBeInstanceOf(HubConnectionError);
    hub.fault('model.safetensors', { ignoreRange: true });
    const seen: number[] = [];
    const path = await hubDownload('acme/resumable', 'model.safetensors', { ...options, onProgress: (p) => seen.push(p.loaded) });
    expect(seen[0]).toBe(0);
    expect(digest(new Uint8Array(await readFile(path)))).toBe(sha256(weights));
  });

  it('forceDownload discards a partial download and starts from byte 0', async () => {
    const { hub, options } = await startHub([REPO]);
    hub.fault('model.safetensors', { hold: HALF });
    await expect(hubDownload('acme/resumable', 'model.safetensors', { ...options, onProgress: (p) => { if (p.loaded === HALF) hub.cutHeld(); } }))
      .rejects.toBeInstanceOf(HubConnectionError);
    await hubDownload('acme/resumable', 'model.safetensors', { ...options, forceDownload: true });
    expect(hub.requests.filter((r) => r.method === 'GET').map((r) => r.range)).toEqual([undefined, undefined]);
  });
});

describe('hubDownload: damaged downloads are refused', () => {
  it('bytes whose sha256 differs from the LFS ETag: HubIntegrityError, nothing left in blobs/ or snapshots/', async () => {
    const { hub, options, repoDir } = await startHub([REPO]);
    const corrupt = weights.slice();
    corrupt[1234] ^= 0xff;
    hub.fault('model.safetensors', { body: corrupt });
    const error = await hubDownload('acme/resumable', 'model.safetensors', options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubIntegrityError);
    const e = error as HubIntegrityError;
    expect([e.check, e.expected, e.got, e.filename]).toEqual(['sha256', sha256(weights), digest(corrupt), 'model.safetensors']);
    expect(e.message).toMatch(/'model\.safetensors'.*'acme\/resumable'.*deleted, not cached/);
    const dir = repoDir('acme/resumable');
    expect(await readdir(join(dir, 'blobs'))).toEqual([]);
    expect(await readdir(join(dir, 'snapshots')).catch(() => [])).toEqual([]);
    // The next call downloads it whole and right.
    const path = await hubDownload('acme/resumable', 'model.safetensors', options);
    expect(digest(new Uint8Array(await readFile(path)))).toBe(sha256(weights));
  });

  it('a body shorter than the announced size: HubIntegrityError on the size, nothing cached', async () => {
    const { hub, options, repoDir } = await startHub([REPO]);
    hub.fault('vocab.txt', { body: new TextEncoder().encode('x'.repeat(49_000)) });
    const error = await hubDownload('acme/resumable', 'vocab.txt', options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubIntegrityError);
    expect([(error as HubIntegrityError).check, (error as HubIntegrityError).expected, (error as HubIntegrityError).got]).toEqual(['size', '50000', '49000']);
    expect(await readdir(join(repoDir('acme/resumable'), 'blobs'))).toEqual([]);
  });

  it('a body longer than the announced size is cut off and refused', async () => {
    const { hub, options, repoDir } = await startHub([REPO]);
    hub.fault('vocab.txt', { body: new TextEncoder().encode('x'.repeat(60_000)) });
    const seen: number[] = [];
    const error = await hubDownload('acme/resumable', 'vocab.txt', { ...options, onProgress: (p) => seen.push(p.loaded) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubIntegrityError);
    expect((error as HubIntegrityError).check).toBe('size');
    expect(Math.max(...seen)).toBeLessThanOrEqual(50_000);
    expect(await readdir(join(repoDir('acme/resumable'), 'blobs'))).toEqual([]);
  });
});

describe('hubDownload: progress', () => {
  it('reports growing byte counts of the file, with its total, ending at the total', async () => {
    const { options } = await startHub([REPO]);
    const seen: DownloadProgress[] = [];
    await hubDownload('acme/resumable', 'model.safetensors', { ...options, onProgress: (p) => seen.push(p) });
    expect(seen.length).toBeGreaterThan(2);
    for (const p of seen) expect([p.file, p.total]).toEqual(['model.safetensors', weights.length]);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.loaded).toBeGreaterThanOrEqual(seen[i - 1]!.loaded);
    expect(seen[0]!.loaded).toBe(0);
    expect(seen.at(-1)!.loaded).toBe(weights.length);
  });

  it('reports nothing for a file served from the cache', async () => {
    const { options } = await startHub([REPO]);
    await hubDownload('acme/resumable', 'vocab.txt', options);
    const seen: DownloadProgress[] = [];
    await hubDownload('acme/resumable', 'vocab.txt', { ...options, onProgress: (p) => seen.push(p) });
    expect(seen).toEqual([]);
  });
});
