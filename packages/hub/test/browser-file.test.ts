// The browser build's hubFile, run in Node against the fake Hub with an in-memory stand-in for the
// Cache API (`caches`), which Node lacks: what it asks the Hub, what it stores under which key,
// offline mode, revision pins, the checks of the bytes and the typed errors. The same build runs in
// headless Chromium in test/browser/hub-page.test.ts.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EntryNotFoundError, GatedRepoError, HubError, hubFile, HubIntegrityError, LocalEntryNotFoundError, RepositoryNotFoundError,
  RevisionNotFoundError, type DownloadProgress,
} from '../src/browser.js';
import { commitOf, pattern, sha256, type FakeRepo } from './helpers/fake-hub.js';
import { startHub } from './helpers/setup.js';

/** The Cache API's `caches`, in memory: named caches of URL → stored body. */
class MemoryCaches {
  readonly stores = new Map<string, Map<string, Blob>>();
  async open(name: string) {
    const store = this.stores.get(name) ?? new Map<string, Blob>();
    this.stores.set(name, store);
    return {
      match: async (url: string) => (store.has(url) ? new Response(store.get(url)) : undefined),
      put: async (url: string, response: Response) => void store.set(url, await response.blob()),
    };
  }
}

let memory: MemoryCaches;
beforeEach(() => {
  memory = new MemoryCaches();
  (globalThis as { caches?: unknown }).caches = memory;
});
afterEach(() => {
  delete (globalThis as { caches?: unknown }).caches;
});

const MAIN = commitOf('main');
const V1 = commitOf('v1');
const weights = pattern(150_000);
const REPO: FakeRepo = {
  id: 'acme/web-model',
  commits: { [V1]: { 'config.json': '{"version":1}' }, [MAIN]: { 'config.json': '{"version":2}', 'model.safetensors': weights } },
  refs: { main: MAIN, 'v1.0': V1 },
};

/** The fake Hub and options for the browser build (no cacheDir there). */
async function setup(repos: FakeRepo[] = [REPO]) {
  const { hub } = await startHub(repos);
  return { hub, options: { endpoint: hub.endpoint, token: false as const } };
}

/** A Blob's bytes as a Buffer, whose `equals` compares large arrays fast. */
const bytesOf = async (blob: Blob) => Buffer.from(await blob.arrayBuffer());

describe('hubFile in the browser build', () => {
  it('asks the API for the commit and sizes, downloads resolve/{commit}/{file}, checks and caches it under that URL, with progress', async () => {
    const { hub, options } = await setup();
    const progress: DownloadProgress[] = [];
    const blob = await hubFile('acme/web-model', 'model.safetensors', { ...options, onProgress: (p) => progress.push(p) });
    expect((await bytesOf(blob)).equals(weights)).toBe(true);
    expect(hub.requests.map((r) => `${r.server} ${r.method} ${r.path}`)).toEqual([
      `hub GET /api/models/acme/web-model/revision/main?blobs=true`,
      `hub GET /acme/web-model/resolve/${MAIN}/model.safetensors`,
      `cdn GET /blob/${sha256(weights)}?signature=abc`,
    ]);
    const store = memory.stores.get('core-hub')!;
    expect([...store.keys()].sort()).toEqual([
      `${hub.endpoint}/acme/web-model/resolve/${MAIN}/model.safetensors`,
      `${hub.endpoint}/api/models/acme/web-model/revision/main`,
    ]);
    expect(await store.get(`${hub.endpoint}/api/models/acme/web-model/revision/main`)!.text()).toBe(MAIN);
    expect(progress[0]).toEqual({ file: 'model.safetensors', loaded: 0, total: weights.length });
    expect(progress.at(-1)).toEqual({ file: 'model.safetensors', loaded: weights.length, total: weights.length });
    expect(progress.map((p) => p.loaded)).toEqual([...progress.map((p) => p.loaded)].sort((a, b) => a - b));
  });

  it('a second call asks the API again but downloads nothing; offline and a commit hash ask nothing', async () => {
    const { hub, options } = await setup();
    await hubFile('acme/web-model', 'model.safetensors', options);
    let before = hub.requests.length;
    expect((await bytesOf(await hubFile('acme/web-model', 'model.safetensors', options))).equals(weights)).toBe(true);
    expect(hub.requests.slice(before).map((r) => r.path)).toEqual(['/api/models/acme/web-model/revision/main?blobs=true']);
    before = hub.requests.length;
    expect((await bytesOf(await hubFile('acme/web-model', 'model.safetensors', { ...options, offline: true }))).equals(weights)).toBe(true);
    expect((await bytesOf(await hubFile('acme/web-model', 'model.safetensors', { ...options, revision: MAIN }))).equals(weights)).toBe(true);
    expect(hub.requests.length).toBe(before);
  });

  it('offline, a revision whose commit was never noted, or a file not cached, is a LocalEntryNotFoundError, with no request', async () => {
    const { hub, options } = await setup();
    await hubFile('acme/web-model', 'config.json', options);
    const before = hub.requests.length;
    const error = await hubFile('acme/web-model', 'config.json', { ...options, offline: true, revision: 'v1.0' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocalEntryNotFoundError);
    expect((error as Error).message).toMatch(/'config\.json' of repo 'acme\/web-model' at revision 'v1\.0' is not in this browser's Cache API storage \('core-hub'\)/);
    await expect(hubFile('acme/web-model', 'model.safetensors', { ...options, offline: true })).rejects.toBeInstanceOf(LocalEntryNotFoundError);
    expect(hub.requests.length).toBe(before);
  });

  it('a tag reads its own commit; main and v1.0 are cached apart', async () => {
    const { options } = await setup();
    expect(await (await hubFile('acme/web-model', 'config.json', { ...options, revision: 'v1.0' })).text()).toBe('{"version":1}');
    expect(await (await hubFile('acme/web-model', 'config.json', options)).text()).toBe('{"version":2}');
    expect(await (await hubFile('acme/web-model', 'config.json', { ...options, revision: 'v1.0', offline: true })).text()).toBe('{"version":1}');
  });

  it('refuses bytes whose sha256 or size differs from what the API announced, and caches nothing', async () => {
    const { hub, options } = await setup();
    const tampered = weights.slice();
    tampered[1234]! ^= 1;
    hub.fault('model.safetensors', { body: tampered });
    const error = await hubFile('acme/web-model', 'model.safetensors', options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubIntegrityError);
    expect(error).toMatchObject({ check: 'sha256', expected: sha256(weights), got: sha256(tampered) });
    hub.fault('model.safetensors', { body: weights.subarray(0, 100) });
    await expect(hubFile('acme/web-model', 'model.safetensors', options)).rejects.toMatchObject({ check: 'size', expected: String(weights.length), got: '100' });
    const store = memory.stores.get('core-hub')!;
    expect([...store.keys()].filter((k) => k.includes('/resolve/'))).toEqual([]);
    // The next call downloads it right.
    expect((await bytesOf(await hubFile('acme/web-model', 'model.safetensors', options))).equals(weights)).toBe(true);
  });

  it('maps 401, 403 and 404 to the same typed errors as Node', async () => {
    const { options } = await setup([REPO, { ...REPO, id: 'acme/private', token: 'hf_secret' }, { ...REPO, id: 'acme/gated', token: 'hf_ok', gated: true }]);
    await expect(hubFile('acme/private', 'config.json', options)).rejects.toBeInstanceOf(RepositoryNotFoundError);
    await expect(hubFile('acme/gated', 'config.json', options)).rejects.toBeInstanceOf(GatedRepoError);
    await expect(hubFile('acme/web-model', 'config.json', { ...options, revision: 'nope' })).rejects.toBeInstanceOf(RevisionNotFoundError);
    const missing = await hubFile('acme/web-model', 'missing.json', options).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(EntryNotFoundError);
    expect(missing).toMatchObject({ status: 404, repoId: 'acme/web-model', filename: 'missing.json' });
    expect(await (await hubFile('acme/private', 'config.json', { ...options, token: 'hf_secret' })).text()).toBe('{"version":2}');
  });

  it('uses the cached copy when the Hub cannot be reached', async () => {
    const { hub, options } = await setup();
    await hubFile('acme/web-model', 'config.json', options);
    await hub.close();
    expect(await (await hubFile('acme/web-model', 'config.json', options)).text()).toBe('{"version":2}');
  });

  it('has no cacheDir option, and without the Cache API says what it needs', async () => {
    const { options } = await setup();
    await expect(hubFile('acme/web-model', 'config.json', { ...options, cacheDir: '/tmp' })).rejects.toThrow(/hubFile\(\) got an unknown option 'cacheDir'/);
    delete (globalThis as { caches?: unknown }).caches;
    const error = await hubFile('acme/web-model', 'config.json', options).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubError);
    expect((error as Error).message).toMatch(/needs the Cache API.*secure contexts/);
  });
});
