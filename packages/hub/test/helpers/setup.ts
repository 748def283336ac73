// Per-test setup: a fake Hub, a fresh temporary cache folder, and the options that point a download
// at both (token and offline given explicitly, so the machine's HF_* variables never leak in).
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { FakeHub, type FakeRepo } from './fake-hub.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

export interface HubFixture {
  readonly hub: FakeHub;
  readonly cacheDir: string;
  /** Options for hubDownload/snapshotDownload that use the fake Hub and the temporary cache. */
  readonly options: { endpoint: string; cacheDir: string; token: false; offline: false };
  /** The cache folder of a model repo. */
  repoDir(repoId: string, type?: string): string;
  /** Every file name under `dir` (recursive), sorted, relative to it. */
  list(dir: string): Promise<string[]>;
}

export async function startHub(repos: FakeRepo[]): Promise<HubFixture> {
  const hub = await FakeHub.start(repos);
  const cacheDir = await mkdtemp(join(tmpdir(), 'core-hub-test-'));
  cleanups.push(async () => {
    await hub.close();
    await rm(cacheDir, { recursive: true, force: true });
  });
  return {
    hub,
    cacheDir,
    options: { endpoint: hub.endpoint, cacheDir, token: false, offline: false },
    repoDir: (repoId, type = 'model') => join(cacheDir, `${type}s--${repoId.replace('/', '--')}`),
    list: async (dir) => (await readdir(dir, { recursive: true })).sort(),
  };
}
