// Where nvcc is: CUDACXX, CUDA_PATH/bin, CUDA_HOME/bin, /usr/local/cuda/bin, then PATH — each
// candidate verified by running `nvcc --version`.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The candidates in search order, with where each came from. */
export function nvccCandidates(env = process.env) {
  const list = [];
  if (env.CUDACXX) list.push({ path: env.CUDACXX, from: 'CUDACXX' });
  if (env.CUDA_PATH) list.push({ path: join(env.CUDA_PATH, 'bin', 'nvcc'), from: 'CUDA_PATH' });
  if (env.CUDA_HOME) list.push({ path: join(env.CUDA_HOME, 'bin', 'nvcc'), from: 'CUDA_HOME' });
  // CORE_CUDA_SEARCH_DEFAULT=0 leaves out the fixed location (the tests use it to simulate no nvcc).
  if (env.CORE_CUDA_SEARCH_DEFAULT !== '0') list.push({ path: '/usr/local/cuda/bin/nvcc', from: '/usr/local/cuda/bin' });
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) list.push({ path: join(dir, 'nvcc'), from: 'PATH' });
  return list;
}

/** The first candidate whose `--version` runs: { path, from, version } or { reason }. */
export function findNvcc(env = process.env) {
  const tried = [];
  for (const c of nvccCandidates(env)) {
    if (!existsSync(c.path)) continue;
    try {
      const out = execFileSync(c.path, ['--version'], { encoding: 'utf8', timeout: 60_000, stdio: ['ignore', 'pipe', 'pipe'] });
      const version = /release ([0-9.]+)/.exec(out)?.[1] ?? 'unknown';
      return { path: c.path, from: c.from, version };
    } catch (e) {
      tried.push(`${c.path} (${c.from}): ${e.message.split('\n')[0]}`);
    }
  }
  const where = 'CUDACXX, CUDA_PATH/bin, CUDA_HOME/bin, /usr/local/cuda/bin, PATH';
  return { reason: tried.length ? `no working nvcc (${tried.join('; ')})` : `nvcc not found (looked in ${where})` };
}
