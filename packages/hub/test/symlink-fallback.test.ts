// Where the file system refuses symlinks (Windows without developer mode, some network drives),
// the snapshot holds a copy of the blob instead, as huggingface_hub does.
import { lstat, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { hubDownload } from '../src/index.js';
import { commitOf, gitSha1 } from './helpers/fake-hub.js';
import { startHub } from './helpers/setup.js';

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const refuse = async () => { throw Object.assign(new Error('EPERM: operation not permitted, symlink'), { code: 'EPERM' }); };
  return { ...real, default: { ...real, symlink: refuse }, symlink: refuse };
});

describe('without symlinks', () => {
  it('the snapshot file is a copy of the blob, and a second call still finds it', async () => {
    const MAIN = commitOf('main');
    const { hub, options, repoDir } = await startHub([{ id: 'acme/nolinks', commits: { [MAIN]: { 'config.json': '{"a":1}' } }, refs: { main: MAIN } }]);
    const path = await hubDownload('acme/nolinks', 'config.json', options);
    expect((await lstat(path)).isSymbolicLink()).toBe(false);
    expect(await readFile(path, 'utf8')).toBe('{"a":1}');
    expect(await readFile(join(repoDir('acme/nolinks'), 'blobs', gitSha1('{"a":1}')), 'utf8')).toBe('{"a":1}');
    expect(await readdir(join(repoDir('acme/nolinks'), 'snapshots', MAIN))).toEqual(['config.json']);
    expect(await hubDownload('acme/nolinks', 'config.json', options)).toBe(path);
    expect(hub.count('GET')).toBe(1);
  });
});
