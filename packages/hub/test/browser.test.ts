// The "browser" export condition: the same names, no Node built-ins in the bundle, and the
// functions that return file-system paths failing with a HubError that points to hubFile
// (browser-file.test.ts tests hubFile itself).
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import * as browser from '../src/browser.js';
import * as node from '../src/index.js';

describe('the browser entry', () => {
  it('exports the same names as the Node entry', () => {
    expect(Object.keys(browser).sort()).toEqual(Object.keys(node).sort());
  });

  it('rejects hubDownload and snapshotDownload with a HubError pointing to hubFile, and throws on progressBar', async () => {
    await expect(browser.hubDownload('gpt2', 'config.json')).rejects.toThrow(browser.HubError);
    await expect(browser.hubDownload('gpt2', 'config.json')).rejects.toThrow(/hubDownload\(\) needs Node\.js.*use hubFile\(repoId, filename\).*Cache API/);
    await expect(browser.snapshotDownload('gpt2')).rejects.toThrow(/snapshotDownload\(\) needs Node\.js.*use hubFile/);
    expect(() => browser.progressBar()).toThrow(/progressBar\(\) needs Node\.js.*onProgress/);
  });

  it('bundles for the browser platform without any Node built-in', async () => {
    const result = await build({
      entryPoints: [fileURLToPath(new URL('../src/browser.ts', import.meta.url))],
      bundle: true, platform: 'browser', format: 'esm', write: false, metafile: true, logLevel: 'silent',
    });
    const imports = Object.values(result.metafile.inputs).flatMap((i) => i.imports.map((x) => x.path));
    expect(imports.filter((p) => p.startsWith('node:'))).toEqual([]);
    // The Node entry does import them: the check above would see them.
    const nodeBuild = await build({
      entryPoints: [fileURLToPath(new URL('../src/index.ts', import.meta.url))],
      bundle: true, platform: 'node', format: 'esm', write: false, metafile: true, logLevel: 'silent',
    });
    expect(Object.values(nodeBuild.metafile.inputs).flatMap((i) => i.imports.map((x) => x.path))).toContain('node:fs/promises');
  });
});
