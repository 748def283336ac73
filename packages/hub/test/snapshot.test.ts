// snapshotDownload: one API call for the commit and the file list, then every wanted file into the
// snapshot folder of that commit, each the way hubDownload caches it.
import { readFile, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RepositoryNotFoundError, RevisionNotFoundError, snapshotDownload, type DownloadProgress } from '../src/index.js';
import { commitOf, pattern, sha256, type FakeRepo } from './helpers/fake-hub.js';
import { startHub } from './helpers/setup.js';

const MAIN = commitOf('main');
const shard = pattern(40_000, 5);
const REPO: FakeRepo = {
  id: 'acme/snap',
  commits: {
    [MAIN]: {
      'config.json': '{"layers":2}',
      'tokenizer.json': '{"vocab":{}}',
      'model-00001-of-00002.safetensors': pattern(30_000, 4),
      'model-00002-of-00002.safetensors': shard,
      'copy/model-00002-of-00002.safetensors': shard,
      'onnx/model.onnx': 'onnx',
      'README.md': '# snap',
    },
  },
  refs: { main: MAIN },
};
const ALL = Object.keys(REPO.commits[MAIN]!);

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => !e.isDirectory()).map((e) => join(e.parentPath ?? e.path, e.name).slice(dir.length + 1)).sort();
}

describe('snapshotDownload', () => {
  it('downloads every file at the revision\'s commit and returns snapshots/{commit}, with refs/main recorded', async () => {
    const { hub, options, repoDir } = await startHub([REPO]);
    const folder = await snapshotDownload('acme/snap', options);
    const dir = repoDir('acme/snap');
    expect(folder).toBe(join(dir, 'snapshots', MAIN));
    expect(await filesUnder(folder)).toEqual([...ALL].sort());
    expect(await readFile(join(folder, 'config.json'), 'utf8')).toBe('{"layers":2}');
    expect(await readFile(join(dir, 'refs', 'main'), 'utf8')).toBe(MAIN);
    const api = hub.requests.filter((r) => r.path.startsWith('/api/'));
    expect(api.map((r) => r.path)).toEqual(['/api/models/acme/snap/revision/main']);
    // Each file is asked for at the commit, not at the branch that might move meanwhile.
    for (const r of hub.requests.filter((q) => q.method === 'HEAD')) expect(r.path).toContain(`/resolve/${MAIN}/`);
  });

  it('downloads a blob two files share once, and links both to it', async () => {
    const { hub, options, repoDir } = await startHub([REPO]);
    const folder = await snapshotDownload('acme/snap', { ...options, allowPatterns: '*model-00002-of-00002.safetensors' });
    expect(hub.requests.filter((r) => r.server === 'cdn' && r.method === 'GET')).toHaveLength(1);
    const blob = join(repoDir('acme/snap'), 'blobs', sha256(shard));
    for (const f of ['model-00002-of-00002.safetensors', 'copy/model-00002-of-00002.safetensors']) {
      expect(join(folder, f, '..', await readlink(join(folder, f)))).toBe(blob);
    }
  });

  it('takes only the files allowPatterns match and ignorePatterns do not', async () => {
    const { options } = await startHub([REPO]);
    const folder = await snapshotDownload('acme/snap', { ...options, allowPatterns: ['*.json', '*.safetensors'], ignorePatterns: 'copy/' });
    expect(await filesUnder(folder)).toEqual(['config.json', 'model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors', 'tokenizer.json']);
  });

  it('a second call costs one API request: the files are cached at that commit', async () => {
    const { hub, options } = await startHub([REPO]);
    const first = await snapshotDownload('acme/snap', options);
    const before = hub.requests.length;
    expect(await snapshotDownload('acme/snap', options)).toBe(first);
    expect(hub.requests.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/models/acme/snap/revision/main']);
  });

  it('with files, asks no API: the first file\'s HEAD gives the commit, the rest are fetched at it', async () => {
    const { hub, options } = await startHub([REPO]);
    const folder = await snapshotDownload('acme/snap', { ...options, files: ['config.json', 'onnx/model.onnx', 'config.json'] });
    expect(await filesUnder(folder)).toEqual(['config.json', 'onnx/model.onnx']);
    expect(hub.requests.some((r) => r.path.startsWith('/api/'))).toBe(false);
    expect(hub.requests.filter((r) => r.method === 'HEAD').map((r) => r.path)).toEqual([
      '/acme/snap/resolve/main/config.json', `/acme/snap/resolve/${MAIN}/onnx/model.onnx`,
    ]);
  });

  it('reports each file\'s progress under its own name, each ending at its size', async () => {
    const { options } = await startHub([REPO]);
    const last = new Map<string, DownloadProgress>();
    await snapshotDownload('acme/snap', { ...options, ignorePatterns: 'copy/', maxWorkers: 2, onProgress: (p) => last.set(p.file, p) });
    expect([...last.keys()].sort()).toEqual(ALL.filter((f) => !f.startsWith('copy/')).sort());
    for (const p of last.values()) expect(p.loaded).toBe(p.total);
  });

  it('API errors are typed: 401 RepositoryNotFoundError, 404 RevisionNotFoundError', async () => {
    const { options } = await startHub([REPO]);
    const missing = await snapshotDownload('acme/missing', options).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(RepositoryNotFoundError);
    expect((missing as Error).message).toMatch(/Repo 'acme\/missing'.*HF_TOKEN/);
    await expect(snapshotDownload('acme/snap', { ...options, revision: 'v9' })).rejects.toBeInstanceOf(RevisionNotFoundError);
  });
});
