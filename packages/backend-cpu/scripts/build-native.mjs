#!/usr/bin/env node
// Builds the CPU addon (native/cpu) with cmake-js, one binary per platform, where the loader
// (src/native.ts) looks for it: build/<platform>-<arch>/Release/core_cpu.node.
//   - this machine's platform, with its C++ compiler (CXX, else c++, g++ or clang++);
//   - on linux-x64 also linux-arm64, cross-compiled by aarch64-linux-gnu-g++ (Debian's
//     g++-aarch64-linux-gnu; AARCH64_CXX names another) through native/cpu/cmake/aarch64-linux-gnu.cmake.
//     Without that compiler the arm64 build is skipped, saying so in one line.
//   node scripts/build-native.mjs                build, or fail saying why not (pnpm build:native)
//   node scripts/build-native.mjs --if-compiler  the package build: skip with one line when cmake or a C++ compiler is absent
//   node scripts/build-native.mjs --host-only    this machine's platform only, no cross build
// Nothing is downloaded: `binary.napi_versions` makes cmake-js use its bundled Node-API headers.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const optional = process.argv.includes('--if-compiler');
const hostOnly = process.argv.includes('--host-only');
const host = `${process.platform}-${process.arch}`;
const addonOf = (target) => join('build', target, 'Release', 'core_cpu.node');

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

/**
 * Runs cmake-js for `target` into build/<target> and returns null, or why it failed (its output
 * already written to stderr). `cmakeArgs` are extra cmake-js options; `env` the compiler's.
 */
function cmakeJsBuild(target, cmakeArgs, env) {
  const require = createRequire(import.meta.url);
  const cmakeJs = join(dirname(require.resolve('cmake-js/package.json')), 'bin', 'cmake-js');
  const args = [cmakeJs, 'build', '--out', join('build', target), '--parallel', String(Math.max(2, Math.min(4, availableParallelism()))), ...cmakeArgs];
  const started = Date.now();
  const run = spawnSync(process.execPath, args, { cwd: pkg, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', env: { ...process.env, ...env } });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (run.status !== 0 || !existsSync(join(pkg, addonOf(target)))) {
    process.stderr.write(run.stdout ?? '');
    process.stderr.write(run.stderr ?? '');
    return `the ${target} build failed after ${seconds} s (output above)`;
  }
  console.log(`@core/backend-cpu: built ${addonOf(target)} in ${seconds} s`);
  return null;
}

// The single-platform layout of earlier builds (build/Release/core_cpu.node, configured in build/)
// is no longer loaded: its leftovers go, so no stale binary sits beside the per-platform ones.
for (const stale of ['Release', 'CMakeFiles', 'native', 'CMakeCache.txt', 'build.ninja', 'cmake_install.cmake', 'Makefile', '.ninja_deps', '.ninja_log']) {
  rmSync(join(pkg, 'build', stale), { recursive: true, force: true });
}

if (!firstWorking(['cmake'])) skipOrFail('cmake not found on PATH');
const compiler = firstWorking(process.env.CXX ? [process.env.CXX] : ['c++', 'g++', 'clang++']);
if (!compiler) skipOrFail(process.env.CXX ? `the C++ compiler CXX=${process.env.CXX} does not run` : 'no C++ compiler (c++, g++ or clang++) on PATH');

console.log(`@core/backend-cpu: building the native addon for ${host} with ${compiler}`);
const hostFailure = cmakeJsBuild(host, [], { CXX: compiler });
if (hostFailure) {
  // The wasm kernels still work: the package build goes on without the addon, saying why.
  if (optional) skipOrFail(hostFailure);
  console.error(`@core/backend-cpu: ${hostFailure}`);
  process.exit(1);
}

// linux-arm64 from linux-x64: the same sources, Debian's GNU cross compiler, the same Node-API headers.
if (host === 'linux-x64' && !hostOnly) {
  const crossCompiler = process.env.AARCH64_CXX || 'aarch64-linux-gnu-g++';
  if (!firstWorking([crossCompiler])) {
    // An arm64 binary of an earlier build would not match these sources: it is not shipped either.
    rmSync(join(pkg, addonOf('linux-arm64')), { force: true });
    console.log(`@core/backend-cpu: linux-arm64 addon skipped: no ${crossCompiler} on PATH (Debian: apt-get install g++-aarch64-linux-gnu)`);
  } else {
    console.log(`@core/backend-cpu: cross-compiling the native addon for linux-arm64 with ${crossCompiler}`);
    const toolchain = join(pkg, '..', '..', 'native', 'cpu', 'cmake', 'aarch64-linux-gnu.cmake');
    const crossFailure = cmakeJsBuild('linux-arm64', ['--arch', 'arm64', `--CDCMAKE_TOOLCHAIN_FILE=${toolchain}`], { AARCH64_CXX: crossCompiler });
    if (crossFailure) {
      // A broken cross build must not hide behind a working x64 one in the strict build; the
      // package build ships what it has (the loader says on arm64 that no addon was built).
      if (!optional) {
        console.error(`@core/backend-cpu: ${crossFailure}`);
        process.exit(1);
      }
      rmSync(join(pkg, addonOf('linux-arm64')), { force: true });
      console.log(`@core/backend-cpu: linux-arm64 addon skipped: ${crossFailure}`);
    }
  }
}
