// Offline mode and an unreachable Hub: answers from the cache with no network, a typed error that
// says how to fill the cache when the file is not there; a cache laid out by Python's
// huggingface_hub is read as it is.
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hubDownload, HubConnectionError, LocalEntryNotFoundError, snapshotDownload } from '../src/index.js';
import { commitOf, type FakeRepo } from './helpers/fake-hub.js';
import { startHub } from './helpers/setup.js';

const MAIN = commitOf('main');
const REPO: FakeRepo = { id: 'acme/offline', commits: { [MAIN]: { 'config.json': '{}', 'model.safetensors': 'weights' } }, refs: { main: MAIN } };

/** An address where nothing listens: a server is started and closed, so its port refuses connections. */
async function deadEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

describe('offline mode', () => {
  it('resolves refs/main to the cached snapshot path without any request', async () => {
    const { hub, options } = await startHub([REPO]);
    const online = await hubDownload('acme/offline', 'config.json', options);
    const before = hub.requests.length;
    expect(await hubDownload('acme/offline', 'config.json', { ...options, offline: true })).toBe(online);
    expect(await hubDownload('acme/offline', 'config.json', { ...options, offline: true, revision: MAIN })).toBe(online);
    expect(hub.requests.length).toBe(before);
  });

  it('a file that is not cached is a LocalEntryNotFoundError saying so and how to download it, with no request', async () => {
    const { hub, options } = await startHub([REPO]);
    await hubDownload('acme/offline', 'config.json', options);
    const before = hub.requests.length;
    const error = await hubDownload('acme/offline', 'model.safetensors', { ...options, offline: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocalEntryNotFoundError);
    const e = error as LocalEntryNotFoundError;
    expect([e.repoId, e.filename, e.revision]).toEqual(['acme/offline', 'model.safetensors', 'main']);
    expect(e.message).toMatch(/'model\.safetensors' of repo 'acme\/offline' at revision 'main' is not in the cache/);
    expect(e.message).toMatch(/offline mode is on/);
    expect(e.message).toMatch(/hubDownload\('acme\/offline', 'model\.safetensors'\)/);
    expect(hub.requests.length).toBe(before);
  });

  it('a revision never downloaded is a miss too, even when another one is cached', async () => {
    const { options } = await startHub([REPO]);
    await hubDownload('acme/offline', 'config.json', options);
    await expect(hubDownload('acme/offline', 'config.json', { ...options, offline: true, revision: 'v2' })).rejects.toBeInstanceOf(LocalEntryNotFoundError);
  });

  it('reads a cache laid out by Python\'s huggingface_hub (refs/, snapshots/ symlinks into blobs/)', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'core-hub-python-cache-'));
    try {
      const repo = join(cacheDir, 'models--org--from-python');
      const commit = commitOf('python');
      await mkdir(join(repo, 'blobs'), { recursive: true });
      await mkdir(join(repo, 'refs'));
      await mkdir(join(repo, 'snapshots', commit, 'sub'), { recursive: true });
      await writeFile(join(repo, 'blobs', 'aaaa'), 'from python');
      await writeFile(join(repo, 'refs', 'main'), commit);
      await symlink(join('..', '..', '..', 'blobs', 'aaaa'), join(repo, 'snapshots', commit, 'sub', 'file.txt'));
      const path = await hubDownload('org/from-python', 'sub/file.txt', { cacheDir, offline: true, token: false });
      expect(path).toBe(join(repo, 'snapshots', commit, 'sub', 'file.txt'));
      expect(await snapshotDownload('org/from-python', { cacheDir, offline: true, token: false })).toBe(join(repo, 'snapshots', commit));
    } finally {
      await rm(cacheDir, { recursive: true, force: true });
    }
  });

  it('snapshotDownload offline returns the cached snapshot folder, and names a missing listed file', async () => {
    const { options, repoDir } = await startHub([REPO]);
    await hubDownload('acme/offline', 'config.json', options);
    const offline = { ...options, offline: true };
    expect(await snapshotDownload('acme/offline', offline)).toBe(join(repoDir('acme/offline'), 'snapshots', MAIN));
    expect(await snapshotDownload('acme/offline', { ...offline, files: ['config.json'] })).toBe(join(repoDir('acme/offline'), 'snapshots', MAIN));
    const error = await snapshotDownload('acme/offline', { ...offline, files: ['config.json', 'model.safetensors'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocalEntryNotFoundError);
    await expect(snapshotDownload('acme/never', offline)).rejects.toThrow(/The snapshot of repo 'acme\/never' at revision 'main' is not in the cache/);
  });
});

describe('an unreachable Hub', () => {
  it('falls back to the cached copy of the revision', async () => {
    const { options } = await startHub([REPO]);
    const online = await hubDownload('acme/offline', 'config.json', options);
    const endpoint = await deadEndpoint();
    expect(await hubDownload('acme/offline', 'config.json', { ...options, endpoint })).toBe(online);
    expect(await snapshotDownload('acme/offline', { ...options, endpoint })).toBe(join(online, '..'));
  });

  it('without a cached copy is a HubConnectionError naming the address and the network error', async () => {
    const { options } = await startHub([REPO]);
    const endpoint = await deadEndpoint();
    const error = await hubDownload('acme/offline', 'config.json', { ...options, endpoint }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HubConnectionError);
    expect((error as HubConnectionError).url).toBe(`${endpoint}/acme/offline/resolve/main/config.json`);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
    expect((error as HubConnectionError).cause).toBeInstanceOf(Error);
  });
});
