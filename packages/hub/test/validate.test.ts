// Checks before any network access: repo ids with the Hub's characters, file names and revisions
// that cannot leave the cache folder, options by name and type, and fnmatch patterns.
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { HFValidationError, hubDownload, snapshotDownload } from '../src/index.js';
import { filterFiles, patternToRegExp } from '../src/snapshot.js';
import { validateRepoId, validateRepoPath, validateRevision } from '../src/validate.js';
import { commitOf, type FakeRepo } from './helpers/fake-hub.js';
import { startHub } from './helpers/setup.js';

const REPO: FakeRepo = { id: 'acme/model', commits: { [commitOf('m')]: { 'config.json': '{}' } }, refs: { main: commitOf('m') } };

describe('repo ids', () => {
  it('accept name and owner/name with letters, digits, _, - and .', () => {
    for (const id of ['gpt2', 'openai-community/gpt2', 'bert-base-uncased', 'org_1/model.v2-final', 'A/B', `a/${'x'.repeat(96)}`]) {
      expect(validateRepoId(id)).toBe(id);
    }
  });

  it('refuse other characters, separators at the ends, --, .., .git, a third segment and over-long names', () => {
    for (const id of ['', 'a/b/c', '/gpt2', 'gpt2/', 'a b', 'a/-b', 'a/b-', '.a/b', 'a--b', 'a/b..c', 'a/b.git', 'ü/b', `a/${'x'.repeat(97)}`, '../x']) {
      const error = (() => { try { validateRepoId(id); } catch (e) { return e; } })();
      expect(error, id).toBeInstanceOf(HFValidationError);
      expect((error as HFValidationError).argument).toBe('repoId');
      expect((error as Error).message).toContain(`'${id}'`);
    }
  });

  it('that is not a string is a TypeError', () => {
    expect(() => validateRepoId(3)).toThrow(TypeError);
  });
});

describe('file names: path traversal is impossible', () => {
  const bad = ['../secret', 'a/../../b', '/etc/passwd', 'C:/Windows/x', 'a\\..\\b', 'a//b', './a', 'a/.', '', 'a\u0000b', 'a/..'];

  it('refuses absolute paths, .. and . segments, backslashes, empty segments and control characters', () => {
    for (const name of bad) {
      const error = (() => { try { validateRepoPath(name, 'filename'); } catch (e) { return e; } })();
      expect(error, JSON.stringify(name)).toBeInstanceOf(HFValidationError);
      expect((error as HFValidationError).argument).toBe('filename');
    }
    expect(() => validateRepoPath('a/../../b', 'filename')).toThrow(/Invalid filename 'a\/\.\.\/\.\.\/b': it has a '\.\.' segment/);
    expect(() => validateRepoPath('/etc/passwd', 'filename')).toThrow(/it is an absolute path/);
    for (const good of ['config.json', 'onnx/model.onnx', 'a/b/c..d', '.gitattributes', 'weights-00001-of-00002.safetensors']) {
      expect(validateRepoPath(good, 'filename')).toBe(good);
    }
  });

  it('hubDownload refuses them before any request and writes nothing', async () => {
    const { hub, options, cacheDir } = await startHub([REPO]);
    for (const name of bad) {
      await expect(hubDownload('acme/model', name, options), JSON.stringify(name)).rejects.toBeInstanceOf(HFValidationError);
    }
    await expect(hubDownload('acme/model', 'config.json', { ...options, subfolder: '../..' })).rejects.toThrow(/Invalid subfolder '\.\.\/\.\.'/);
    await expect(snapshotDownload('acme/model', { ...options, files: ['ok.txt', '../x'] })).rejects.toBeInstanceOf(HFValidationError);
    expect(hub.requests).toEqual([]);
    expect(await readdir(cacheDir)).toEqual([]);
  });
});

describe('revisions', () => {
  it('take branches, tags, commits and refs/pr/N, and refuse .. segments, a leading / and backslashes', async () => {
    for (const r of ['main', 'v1.0', 'refs/pr/1', commitOf('x'), 'feature/x..y']) expect(validateRevision(r)).toBe(r);
    const { hub, options } = await startHub([REPO]);
    for (const r of ['../main', 'refs/../../x', '/main', 'a\\b', '', 'a//b']) {
      const error = await hubDownload('acme/model', 'config.json', { ...options, revision: r }).catch((e: unknown) => e);
      expect(error, r).toBeInstanceOf(HFValidationError);
      expect((error as HFValidationError).argument).toBe('revision');
    }
    expect(hub.requests).toEqual([]);
  });
});

describe('options', () => {
  it('an unknown option is a TypeError naming it and listing the known ones', async () => {
    await expect(hubDownload('acme/model', 'config.json', { cache_dir: '/tmp' } as never)).rejects.toThrow(
      /hubDownload\(\) got an unknown option 'cache_dir' \(its options are revision, repoType, cacheDir,/,
    );
    await expect(snapshotDownload('acme/model', { allow_patterns: '*.json' } as never)).rejects.toThrow(/unknown option 'allow_patterns'/);
    await expect(hubDownload('acme/model', 'config.json', { allowPatterns: '*' } as never)).rejects.toThrow(TypeError);
  });

  it('a value of the wrong type is a TypeError naming the option and what it must be', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ revision: 3 }, /option 'revision' must be a string .*got number 3/],
      [{ repoType: 'models' }, /option 'repoType' must be 'model', 'dataset' or 'space', got 'models'/],
      [{ endpoint: 'huggingface.co' }, /option 'endpoint' must be an http\(s\) address/],
      [{ token: true }, /option 'token' must be a non-empty string or false/],
      [{ offline: 'yes' }, /option 'offline' must be true or false/],
      [{ onProgress: 'bar' }, /option 'onProgress' must be a function/],
      [{ signal: {} }, /option 'signal' must be an AbortSignal/],
    ];
    for (const [options, message] of cases) {
      await expect(hubDownload('acme/model', 'config.json', options as never)).rejects.toThrow(message);
    }
    await expect(snapshotDownload('acme/model', { maxWorkers: 0 })).rejects.toThrow(/option 'maxWorkers' must be a whole number ≥ 1, got number 0/);
    await expect(snapshotDownload('acme/model', { files: [] })).rejects.toThrow(/option 'files' must be a non-empty array/);
    await expect(snapshotDownload('acme/model', { files: ['a'], allowPatterns: '*' })).rejects.toThrow(/either files or allowPatterns/);
    await expect(hubDownload('acme/model', 'config.json', 'main' as never)).rejects.toThrow(/the options must be an object, got 'main'/);
  });
});

describe('patterns (Python\'s fnmatch)', () => {
  it('* matches across /, ? one character, [seq] and [!seq] sets, other characters literally', () => {
    expect(patternToRegExp('*.json').test('sub/config.json')).toBe(true);
    expect(patternToRegExp('model-?.bin').test('model-1.bin')).toBe(true);
    expect(patternToRegExp('model-?.bin').test('model-12.bin')).toBe(false);
    expect(patternToRegExp('w[0-2].bin').test('w1.bin')).toBe(true);
    expect(patternToRegExp('w[!0-2].bin').test('w1.bin')).toBe(false);
    expect(patternToRegExp('w[!0-2].bin').test('w7.bin')).toBe(true);
    expect(patternToRegExp('a.b').test('axb')).toBe(false);
    expect(patternToRegExp('a[b').test('a[b')).toBe(true);
    expect(patternToRegExp('(x)+').test('(x)+')).toBe(true);
  });

  it('filter by allow and ignore lists; a pattern ending in / takes the folder', () => {
    const files = ['config.json', 'model.safetensors', 'onnx/model.onnx', 'onnx/config.json', 'README.md'];
    expect(filterFiles(files, ['*.json', '*.safetensors'])).toEqual(['config.json', 'model.safetensors', 'onnx/config.json']);
    expect(filterFiles(files, undefined, 'onnx/')).toEqual(['config.json', 'model.safetensors', 'README.md']);
    expect(filterFiles(files, '*.json', 'onnx/*')).toEqual(['config.json']);
    expect(filterFiles(files)).toEqual(files);
  });
});
