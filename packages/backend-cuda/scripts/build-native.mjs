#!/usr/bin/env node
// Builds the CUDA addon (native/cuda) with cmake-js into build/Release/core_cuda.node.
//   node scripts/build-native.mjs            build, or fail saying why not (pnpm build:native)
//   node scripts/build-native.mjs --if-nvcc  the package build: skip with one line when nvcc is absent
// Nothing is downloaded: `binary.napi_versions` makes cmake-js use its bundled Node-API headers.
// CORE_CUDA_ARCHITECTURES overrides the targets (default "90-real;90-virtual;80-real").
import { spawnSync, execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findNvcc } from './find-nvcc.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const optional = process.argv.includes('--if-nvcc');
const addon = join(pkg, 'build', 'Release', 'core_cuda.node');

function skipOrFail(reason) {
  if (optional) {
    console.log(`@core/backend-cuda: native addon skipped: ${reason}; the package builds and reports cuda unavailable at run time`);
    process.exit(0);
  }
  console.error(`@core/backend-cuda: cannot build the native addon: ${reason}`);
  process.exit(1);
}

const nvcc = findNvcc();
if ('reason' in nvcc) skipOrFail(nvcc.reason);
try {
  execFileSync('cmake', ['--version'], { stdio: 'ignore', timeout: 30_000 });
} catch {
  skipOrFail(`cmake not found on PATH (nvcc ${nvcc.version} is at ${nvcc.path})`);
}

const require = createRequire(import.meta.url);
const cmakeJs = join(dirname(require.resolve('cmake-js/package.json')), 'bin', 'cmake-js');
const args = [cmakeJs, 'build', '--out', 'build', '--parallel', String(Math.max(2, Math.min(4, (await import('node:os')).availableParallelism()))),
  `--CDCMAKE_CUDA_COMPILER=${nvcc.path}`];
if (process.env.CORE_CUDA_ARCHITECTURES) args.push(`--CDCORE_CUDA_ARCHITECTURES=${process.env.CORE_CUDA_ARCHITECTURES}`);
// A build directory configured with another nvcc or source tree is stale: start over.
if (existsSync(join(pkg, 'build', 'CMakeCache.txt')) && process.argv.includes('--clean')) rmSync(join(pkg, 'build'), { recursive: true, force: true });

console.log(`@core/backend-cuda: building the native addon with nvcc ${nvcc.version} (${nvcc.path}, from ${nvcc.from})`);
const started = Date.now();
const run = spawnSync(process.execPath, args, { cwd: pkg, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: { ...process.env, CUDACXX: nvcc.path } });
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (run.status !== 0 || !existsSync(addon)) {
  process.stderr.write(run.stdout ?? '');
  process.stderr.write(run.stderr ?? '');
  console.error(`@core/backend-cuda: the native build failed after ${seconds} s`);
  process.exit(1);
}
console.log(`@core/backend-cuda: built build/Release/core_cuda.node in ${seconds} s`);
