// The install-time side: where nvcc is looked for, and the one-line skip when it is absent.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs build script without types
import { findNvcc, nvccCandidates } from '../scripts/find-nvcc.mjs';

const script = fileURLToPath(new URL('../scripts/build-native.mjs', import.meta.url));

function fakeNvcc(dir: string, output: string, exitCode = 0): string {
  const path = join(dir, 'nvcc');
  writeFileSync(path, `#!/bin/sh\necho '${output}'\nexit ${exitCode}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe('finding nvcc', () => {
  it('searches CUDACXX, CUDA_PATH, CUDA_HOME, /usr/local/cuda/bin, then PATH, in that order', () => {
    const list = nvccCandidates({ CUDACXX: '/a/nvcc', CUDA_PATH: '/b', CUDA_HOME: '/c', PATH: '/d:/e' }) as { path: string; from: string }[];
    expect(list.map((c) => c.path)).toEqual(['/a/nvcc', '/b/bin/nvcc', '/c/bin/nvcc', '/usr/local/cuda/bin/nvcc', '/d/nvcc', '/e/nvcc']);
    expect(list.map((c) => c.from)).toEqual(['CUDACXX', 'CUDA_PATH', 'CUDA_HOME', '/usr/local/cuda/bin', 'PATH', 'PATH']);
  });

  it('verifies a candidate by running `nvcc --version`, skipping one that fails', () => {
    const broken = mkdtempSync(join(tmpdir(), 'nvcc-broken-'));
    const good = mkdtempSync(join(tmpdir(), 'nvcc-good-'));
    fakeNvcc(broken, 'boom', 3);
    fakeNvcc(good, 'Cuda compilation tools, release 13.0, V13.0.88');
    const found = findNvcc({ CUDACXX: join(broken, 'nvcc'), PATH: good, CORE_CUDA_SEARCH_DEFAULT: '0' });
    expect(found).toEqual({ path: join(good, 'nvcc'), from: 'PATH', version: '13.0' });
  });

  it('without nvcc, the package build prints one line saying why and succeeds', () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-nvcc-'));
    const r = spawnSync(process.execPath, [script, '--if-nvcc'], {
      encoding: 'utf8',
      env: { PATH: empty, CORE_CUDA_SEARCH_DEFAULT: '0', HOME: process.env.HOME ?? '/tmp' },
    });
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      '@core/backend-cuda: native addon skipped: nvcc not found (looked in CUDACXX, CUDA_PATH/bin, CUDA_HOME/bin, /usr/local/cuda/bin, PATH); the package builds and reports cuda unavailable at run time',
    );
  });

  it('build:native without nvcc fails and says why', () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-nvcc-'));
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8', env: { PATH: empty, CORE_CUDA_SEARCH_DEFAULT: '0' } });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/cannot build the native addon: nvcc not found/);
  });
});
