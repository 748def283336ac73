#!/usr/bin/env node
// The kernel tests on the CPU: native/cuda/kernels compiled by the host C++ compiler against the
// fiber emulation (native/cuda/emu), driven by native/cuda/test/kernel_test.cpp. Needs g++ (or
// CXX), not nvcc; without a C++ compiler it says so in one line and exits 0. Also compiles
// native/cuda/test/api_check.cpp where cuda.h exists (our hand-written driver declarations vs cuda.h),
// and builds the fake driver that test/fake-driver.test.ts loads.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findNvcc } from './find-nvcc.mjs';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..');
const native = join(pkg, '..', '..', 'native', 'cuda');
const outDir = join(pkg, 'build', 'kernel-test');
const cxx = process.env.CXX ?? 'g++';

try {
  execFileSync(cxx, ['--version'], { stdio: 'ignore', timeout: 30_000 });
} catch {
  console.log(`@core/backend-cuda: kernel tests skipped: no C++ compiler (${cxx}) on PATH`);
  process.exit(0);
}
mkdirSync(outDir, { recursive: true });

function compile(args, what) {
  const started = Date.now();
  const r = spawnSync(cxx, args, { stdio: 'inherit', timeout: 600_000 });
  if (r.status !== 0) {
    console.error(`@core/backend-cuda: compiling ${what} failed`);
    process.exit(1);
  }
  console.log(`@core/backend-cuda: compiled ${what} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

// -ffp-contract=off: every float operation rounds on its own, as emu/emu.h's __fmul_rn/__fadd_rn
// promise; g++ would otherwise fuse a*b + c into an FMA where the target has one (aarch64, -march=native).
const KERNEL_FLAGS = ['-std=c++17', '-O1', '-ffp-contract=off'];
const exe = join(outDir, 'kernel_test');
compile([...KERNEL_FLAGS, '-Wall', '-Wno-unused-function', '-o', exe, join(native, 'test', 'kernel_test.cpp'), join(native, 'emu', 'emu.cpp'), join(native, 'src', 'layouts.cpp')],
  'the kernel tests (host C++ + emulation)');
const run = spawnSync(exe, [], { stdio: 'inherit', timeout: 600_000 });
if (run.status !== 0) process.exit(run.status ?? 1);

// The fake driver (native/cuda/test/fake_libcuda.cpp): libcuda.so.1 on host memory with the kernels
// on the emulation, so test/fake-driver.test.ts runs the whole backend end to end without a GPU.
mkdirSync(join(pkg, 'build', 'fake-driver'), { recursive: true });
compile([...KERNEL_FLAGS, '-shared', '-fPIC', '-o', join(pkg, 'build', 'fake-driver', 'libcuda.so.1'), join(native, 'test', 'fake_libcuda.cpp'),
  join(native, 'emu', 'emu.cpp')], 'the fake driver (libcuda.so.1 over the emulation)');
compile(['-std=c++17', '-O1', '-shared', '-fPIC', '-DCK_HOST_ONLY', '-o', join(pkg, 'build', 'fake-driver', 'libcublasLt.so.13'),
  join(native, 'test', 'fake_cublaslt.cpp'), '-ldl'], 'the fake cuBLASLt (libcublasLt.so.13 on the host)');
// The fake NVRTC (native/cuda/test/fake_nvrtc.cpp): compiles compile()'s fused kernels for the
// emulation. In its own directory, so the fake driver runs without NVRTC unless a test names it
// (CORE_CUDA_NVRTC=build/fake-nvrtc/libnvrtc.so.13).
mkdirSync(join(pkg, 'build', 'fake-nvrtc'), { recursive: true });
compile(['-std=c++17', '-O1', '-shared', '-fPIC', `-DFAKE_NVRTC_EMU_DIR="${join(native, 'emu')}"`, '-o', join(pkg, 'build', 'fake-nvrtc', 'libnvrtc.so.13'),
  join(native, 'test', 'fake_nvrtc.cpp')], 'the fake NVRTC (libnvrtc.so.13 compiling for the emulation)');

// The driver declarations are checked against cuda.h from the toolkit nvcc belongs to.
const nvcc = findNvcc();
const include = 'path' in nvcc ? join(dirname(dirname(realpathSync(nvcc.path))), 'include') : null;
if (include && existsSync(join(include, 'cuda.h'))) {
  compile(['-std=c++17', '-fsyntax-only', `-I${include}`, join(native, 'test', 'api_check.cpp')], `api_check.cpp against ${join(include, 'cuda.h')}`);
} else {
  console.log('@core/backend-cuda: driver API declaration check skipped: no cuda.h (the CUDA toolkit is not installed)');
}
