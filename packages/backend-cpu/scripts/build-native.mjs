#!/usr/bin/env node
// Builds the CPU addon (native/cpu) with cmake-js into build/Release/core_cpu.node.
//   node scripts/build-native.mjs                build, or fail saying why not (pnpm build:native)
//   node scripts/build-native.mjs --if-compiler  the package build: skip with one line when cmake or a C++ compiler is absent
// Nothing is downloaded: `binary.napi_versions` makes cmake-js use its bundled Node-API headers.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const optional = process.argv.includes('--if-compiler');
const addon = join(pkg, 'build', 'Release', 'core_cpu.node');

function skipOrFail(reason) {
  if (optional) {
    console.log(`@core/backend-cpu: native addon skipped: ${reason}; the cpu backend runs its wasm kernels`);
    process.exit(0);
  }
  console.error(`@core/backend-cpu: cannot build the native addon: ${reason}`);
  process.exit(1);
}

/** The first command of `candidates` that answers --version, or null. */
function firstWorking(candidates) {
  for (const command of candidates) {
    try {
      execFileSync(command, ['--version'], { stdio: 'ignore', timeout: 30_000 });
      return command;
    } catch {
      // try the next
    }
  }
  return null;
}

if (!firstWorking(['cmake'])) skipOrFail('cmake not found on PATH');
const compiler = firstWorking(process.env.CXX ? [process.env.CXX] : ['c++', 'g++', 'clang++']);
if (!compiler) skipOrFail(process.env.CXX ? `the C++ compiler CXX=${process.env.CXX} does not run` : 'no C++ compiler (c++, g++ or clang++) on PATH');

const require = createRequire(import.meta.url);
const cmakeJs = join(dirname(require.resolve('cmake-js/package.json')), 'bin', 'cmake-js');
const args = [cmakeJs, 'build', '--out', 'build', '--parallel', String(Math.max(2, Math.min(4, availableParallelism())))];
console.log(`@core/backend-cpu: building the native addon with ${compiler}`);
const started = Date.now();
const run = spawnSync(process.execPath, args, { cwd: pkg, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: { ...process.env, CXX: compiler } });
const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (run.status !== 0 || !existsSync(addon)) {
  process.stderr.write(run.stdout ?? '');
  process.stderr.write(run.stderr ?? '');
  // The wasm kernels still work: the package build goes on without the addon, saying why.
  if (optional) skipOrFail(`the native build failed after ${seconds} s (output above)`);
  console.error(`@core/backend-cpu: the native build failed after ${seconds} s`);
  process.exit(1);
}
console.log(`@core/backend-cpu: built build/Release/core_cpu.node in ${seconds} s`);
