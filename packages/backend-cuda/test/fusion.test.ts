// compile()'s elementwise fusion on cuda (src/fusion.ts, src/prepared.ts, native/cuda/src/fusion.cpp)
// without a GPU: the real addon with the fake driver (native/cuda/test/fake_libcuda.cpp) and the fake
// NVRTC (native/cuda/test/fake_nvrtc.cpp), which builds each generated module for the CPU emulation
// from the same source and headers NVRTC gets. Each case runs in a child (test/fake-driver-run.mjs
// 'fusion', checks in test/fusion-check.mjs). The generated source also goes through the real
// `nvcc -ptx` when the toolkit is installed, so NVIDIA's front end checks the device side too.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DTypeName, TensorRef } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { Chain, generate, moduleSource, type EltRecord } from '../src/fusion.js';
import { BINARY_CODES, COMPARE_CODES, UNARY_CODES } from '../src/generated/op-codes.js';
import { defaultAddonPath, loadAddon } from '../src/native.js';
import { CudaStorage } from '../src/storage.js';
// @ts-expect-error: a plain ES module without types
import { findNvcc } from '../scripts/find-nvcc.mjs';

const fakeDir = fileURLToPath(new URL('../build/fake-driver', import.meta.url));
const fakeNvrtc = fileURLToPath(new URL('../build/fake-nvrtc/libnvrtc.so.13', import.meta.url));
const child = fileURLToPath(new URL('./fake-driver-run.mjs', import.meta.url));
const native = fileURLToPath(new URL('../../../native/cuda', import.meta.url));
const ready = existsSync(`${fakeDir}/libcuda.so.1`) && existsSync(fakeNvrtc) && existsSync(defaultAddonPath());
if (!ready) console.log('[cuda] fusion tests skipped: the addon (nvcc), the fake driver or the fake NVRTC (g++) was not built');

const LIMIT_MS = 600_000;

function run(args: string[], env: Record<string, string>): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [child, 'fusion', ...args], {
      encoding: 'utf8',
      env: { ...process.env, LD_LIBRARY_PATH: fakeDir, ...env },
      timeout: LIMIT_MS,
      maxBuffer: 64 * 2 ** 20,
    }, (error, stdout, stderr) => {
      if (error) reject(new Error(`child failed (${error.code ?? error.message}): ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!));
    });
  });
}

const withNvrtc = { CORE_CUDA_NVRTC: fakeNvrtc };
const FUSED = /; (\d+) fused kernels? of (\d+) elementwise calls \(NVRTC 13\.0(, \d+ intermediates kept in registers)?\)\)$/;

describe.skipIf(!ready)('cuda elementwise fusion (fake driver, fake NVRTC)', () => {
  it('fused chains give eager\'s bits for float32, float16 and bfloat16 (broadcasts, scalars, casts, compare/where, NaN and ±Inf inputs)', async () => {
    const r = await run(['chains'], withNvrtc);
    for (const dtype of ['float32', 'float16', 'bfloat16']) {
      expect(r[dtype].same, dtype).toBe(true);
      expect(r[dtype].replays).toBe(2);
      // explain() names the fused kernels in the prepared program's description.
      expect(r[dtype].replay).toEqual([expect.stringMatching(FUSED)]);
    }
  }, LIMIT_MS);

  it('a seeded fuzz of random chains (unary, binary, casts, where; broadcast operands and scalars) matches eager', async () => {
    const r = await run(['fuzz', '20261203', '48'], withNvrtc);
    expect(r.failures).toEqual([]);
    expect(r.functions).toBe(12);
    expect(r.fusedKernels).toBeGreaterThan(24);
  }, LIMIT_MS);

  it('a dead intermediate (deadAfter) stays in registers: its storage is never written, the output is eager\'s', async () => {
    const r = await run(['dead'], withNvrtc);
    expect(r.description).toBe('cuda: 3 calls, 1 CUDA graph of 3 calls (1 kernels and copies), 0 made as calls; 1 fused kernel of 3 elementwise calls (NVRTC 13.0, 2 intermediates kept in registers)');
    expect(r.same).toBe(true);
    expect(r.t).toEqual(new Array(8).fill(42));
    expect(r.u).toEqual(new Array(8).fill(42));
  }, LIMIT_MS);

  it('a module is compiled once per source: the same function compiled twice reuses it', async () => {
    const counter = join(mkdtempSync(join(tmpdir(), 'cuda-fusion-count-')), 'compilations');
    try {
      const r = await run(['cache'], { ...withNvrtc, FAKE_NVRTC_COUNT: counter });
      expect(r.replays).toEqual([[expect.stringMatching(FUSED)], [expect.stringMatching(FUSED)]]);
      expect(readFileSync(counter, 'utf8').trim().split('\n')).toHaveLength(1);
    } finally {
      rmSync(join(counter, '..'), { recursive: true, force: true });
    }
  }, LIMIT_MS);

  it('compiled training with fusion (MLP with SGD and Adam, a conv net) keeps eager\'s losses and weights bit for bit', async () => {
    const r = await run(['training'], withNvrtc);
    for (const name of ['mlpSgd', 'mlpAdam', 'convSgd']) {
      const t = r[name];
      expect(t.firstLossDiff, name).toBe(-1);
      expect(t.paramsSame, name).toBe(true);
      expect(t.replays, name).toBeGreaterThan(0);
      expect(t.replay, name).toEqual([expect.stringMatching(FUSED)]);
    }
    // The MLP's SGD step: 67 captured calls become 40 kernels (13 fused kernels take 40 elementwise calls).
    expect(r.mlpSgd.replay[0]).toMatch(/of 67 calls \(40 kernels and copies\).*; 13 fused kernels of 40 elementwise calls/);
  }, LIMIT_MS);

  it('the conformance suite\'s training goldens pass compiled with fusion (MLPs, a CNN, a bf16 GPT with a GradScaler: eager\'s bits)', async () => {
    const r = await new Promise<any>((resolve, reject) => {
      execFile(process.execPath, [child, 'compiled', 'training/', 'own'], {
        encoding: 'utf8', env: { ...process.env, LD_LIBRARY_PATH: fakeDir, ...withNvrtc }, timeout: LIMIT_MS, maxBuffer: 64 * 2 ** 20,
      }, (error, stdout, stderr) => (error ? reject(new Error(`child failed: ${stderr}`)) : resolve(JSON.parse(stdout.trim().split('\n').at(-1)!))));
    });
    expect(r.failed).toEqual([]);
    expect(r.counts.fail).toBe(0);
    expect(r.counts.pass).toBeGreaterThan(3);
    expect(r.prepares.errors).toEqual([]);
    expect(r.prepares.fusionOff).toEqual({});
    expect(r.prepares.fused).toBeGreaterThan(3);
  }, LIMIT_MS);

  it('without NVRTC there is no fusion: graph replay of the eager kernels, eager\'s bits, the reason said once in the description', async () => {
    const r = await run(['chains'], { CORE_CUDA_NVRTC: join(fakeDir, 'absent', 'libnvrtc.so.13') });
    for (const dtype of ['float32', 'float16', 'bfloat16']) {
      expect(r[dtype].same, dtype).toBe(true);
      expect(r[dtype].replays).toBe(2);
      const [replay] = r[dtype].replay as string[];
      expect(replay).toMatch(/CUDA graphs? of .*; elementwise fusion off: NVRTC not found \(.*absent\/libnvrtc\.so\.13\)\)$/);
      expect(replay!.split('NVRTC not found').length).toBe(2);
      expect(replay).not.toMatch(/fused kernel/);
    }
  }, LIMIT_MS);

  it('an NVRTC compile error falls back to the unfused graphs with NVRTC\'s log in the reason, never an error', async () => {
    const r = await run(['chains'], { ...withNvrtc, FAKE_NVRTC_FAIL: '1' });
    for (const dtype of ['float32', 'float16', 'bfloat16']) {
      expect(r[dtype].same, dtype).toBe(true);
      expect(r[dtype].replays).toBe(2);
      expect(r[dtype].replay).toEqual([
        expect.stringMatching(/; elementwise fusion off: NVRTC could not compile the fused kernels: nvrtcCompileProgram: NVRTC_ERROR_COMPILATION \(nvrtcResult 6\): fake NVRTC \(--std=c\+\+17 -arch=sm_90 --fmad=true [^)]*\)\n[^]*FAKE_NVRTC_FAIL: a simulated compile error/),
      ]);
    }
  }, LIMIT_MS);
});

// ---- the generated source through NVIDIA's front end ------------------------------------------

const nvcc = findNvcc() as { path: string; version: string } | { reason: string };

/**
 * A real NVRTC to compile generated modules with (no GPU needed): CORE_CUDA_TEST_NVRTC, else the newest
 * libnvrtc.so.* the dynamic linker knows (scripts/test-deps.sh installs Debian's libnvrtc11.2 on x86-64).
 */
function findRealNvrtc(): { library: string } | { reason: string } {
  if (process.env.CORE_CUDA_TEST_NVRTC) return { library: process.env.CORE_CUDA_TEST_NVRTC };
  // The dynamic linker's cache; ldconfig lives in /sbin, which a PATH may leave out.
  const cache = ['ldconfig', '/sbin/ldconfig', '/usr/sbin/ldconfig'].map((bin) => spawnSync(bin, ['-p'], { encoding: 'utf8' })).find((r) => r.status === 0);
  const names = [...(cache?.stdout ?? '').matchAll(/^\s*(libnvrtc\.so\.[0-9.]+) \(/gm)].map((m) => m[1]!);
  const version = (n: string) => n.slice('libnvrtc.so.'.length).split('.').map(Number);
  names.sort((a, b) => version(b)[0]! - version(a)[0]! || (version(b)[1] ?? 0) - (version(a)[1] ?? 0));
  return names[0] !== undefined ? { library: names[0] } : { reason: 'no libnvrtc.so.* is installed (scripts/test-deps.sh installs one on x86-64)' };
}
const realNvrtc = findRealNvrtc();
// The suite's machines have one (scripts/test-deps.sh): there, a missing NVRTC fails rather than skips.
const needRealNvrtc = process.env.CI !== undefined && process.arch === 'x64' && nvcc !== undefined && !('reason' in nvcc);

/** Compiles `source` with the real NVRTC through the addon's NVRTC step (test/nvrtc-compile.mjs) for each compute capability. */
function compileWithRealNvrtc(source: string, ccs: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'cuda-fusion-nvrtc-'));
  try {
    writeFileSync(join(dir, 'module.cu'), source);
    const library = (realNvrtc as { library: string }).library;
    const r = spawnSync(process.execPath, [fileURLToPath(new URL('./nvrtc-compile.mjs', import.meta.url)), join(dir, 'module.cu'), ...ccs], {
      encoding: 'utf8', timeout: 300_000, env: { ...process.env, CORE_CUDA_NVRTC: library },
    });
    if (r.status !== 0) throw new Error(`nvrtc-compile.mjs exited with ${r.status}: ${r.stderr}`);
    return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
      nvrtc: { available: boolean; library: string; version: string; reason: string };
      kernels: string[];
      results: { cc: string; ok: boolean; log: string; elf: boolean; machine: number; named: string[] }[];
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let serial = 0;
function view(dtype: DTypeName, shape: number[], strides?: number[], storage?: CudaStorage): TensorRef<CudaStorage> {
  const numel = shape.reduce((a, b) => a * b, 1);
  const s = storage ?? new CudaStorage(0, 4096 * ++serial, dtype, numel);
  const st = strides ?? shape.map((_, d) => shape.slice(d + 1).reduce((a, b) => a * b, 1));
  return { storage: s, dtype, shape, strides: st, offset: 0 } as TensorRef<CudaStorage>;
}
const rec = (kind: EltRecord['kind'], op: number, inputs: TensorRef<CudaStorage>[], out: TensorRef<CudaStorage>): EltRecord => ({ kind, op, inputs, out });

/** Chains over every member kind and storage type, with broadcast operands. */
function sampleChains(): Chain[] {
  const chains: Chain[] = [];
  const make = (records: EltRecord[]) => {
    const c = new Chain({ call: 0, record: records[0]! });
    records.slice(1).forEach((record, i) => expect(c.add({ call: i + 1, record })).toBe(true));
    chains.push(c);
  };
  const shape = [3, 5];
  for (const dtype of ['float32', 'float16', 'bfloat16'] as DTypeName[]) {
    const x = view(dtype, shape), y = view(dtype, shape, [0, 1]), t = view(dtype, shape), u = view(dtype, shape), v = view(dtype, shape);
    const f = view('float32', shape), m = view('bool', shape), o = view(dtype, shape);
    make([
      rec('binary', BINARY_CODES.mul, [x, y], t), rec('binary', BINARY_CODES.add, [t, x], u), rec('binary', BINARY_CODES.sub, [u, y], v),
      rec('unary', UNARY_CODES.sigmoid, [v], t), rec('binary', BINARY_CODES.pow, [t, x], u), rec('cast', -1, [u], f),
      rec('compare', COMPARE_CODES.gt, [u, y], m), rec('where', -1, [m, u, x], v), rec('binary', BINARY_CODES.div, [v, y], o),
    ]);
  }
  // The non-float types, casts between all of them, a copy.
  const i = view('int32', shape), j = view('int32', shape, [1, 0]), k = view('int32', shape), b = view('bool', shape), h = view('bfloat16', shape);
  const g = view('float16', shape), c = view('int32', shape), w = view('bool', shape);
  make([
    rec('binary', BINARY_CODES.remainder, [i, j], k), rec('unary', UNARY_CODES.neg, [k], c), rec('cast', -1, [c], b), rec('unary', UNARY_CODES.logicalNot, [b], w),
    rec('cast', -1, [k], h), rec('cast', -1, [h], g), rec('copy', -1, [g], view('float16', shape)),
  ]);
  // Only float32 products and sums: nothing may be contracted into an FMA.
  const p = view('float32', shape), q = view('float32', shape, [1, 0]), r = view('float32', shape), s = view('float32', shape);
  make([rec('binary', BINARY_CODES.mul, [p, q], r), rec('binary', BINARY_CODES.add, [r, p], s), rec('binary', BINARY_CODES.mul, [s, q], r), rec('binary', BINARY_CODES.sub, [r, s], view('float32', shape))]);
  return chains;
}

describe('the generated fused source and NVIDIA\'s front end', () => {
  it('chains of every member kind generate one kernel each; a hazard (another view of a written storage) ends a chain', () => {
    const chains = sampleChains();
    const kernels = chains.map((c, n) => generate(c, `ck_fused_${n}`, () => false));
    const source = moduleSource(kernels);
    for (let n = 0; n < kernels.length; n++) expect(source).toContain(`extern "C" __global__ void ck_fused_${n}(ck_fused_args a)`);
    expect(source).toContain('__fmul_rn(');
    expect(source).toContain('__fadd_rn(');
    expect(source).toContain('__fsub_rn(');
    const x = view('float32', [4, 4]), t = view('float32', [4, 4]);
    const chain = new Chain({ call: 0, record: rec('unary', UNARY_CODES.exp, [x], t) });
    // t transposed: thread i would read what thread j writes.
    expect(chain.add({ call: 1, record: rec('unary', UNARY_CODES.neg, [{ ...t, strides: [1, 4] }], view('float32', [4, 4])) })).toBe(false);
    expect(chain.add({ call: 1, record: rec('unary', UNARY_CODES.neg, [t], view('float32', [4, 4])) })).toBe(true);
  });

  it.skipIf('reason' in nvcc)(`compiles with nvcc -ptx (the headers NVRTC gets, no FMA between ops)${'reason' in nvcc ? `: skipped, ${nvcc.reason}` : ''}`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'cuda-fusion-nvcc-'));
    try {
      mkdirSync(join(dir, 'kernels'));
      mkdirSync(join(dir, 'generated'));
      for (const f of ['args.h', 'common.cuh', 'elementwise.cuh']) writeFileSync(join(dir, 'kernels', f), readFileSync(join(native, 'kernels', f)));
      for (const f of ['op-codes.h', 'elementwise-expressions.cuh']) writeFileSync(join(dir, 'generated', f), readFileSync(join(native, 'generated', f)));
      const chains = sampleChains();
      const kernels = chains.map((c, n) => generate(c, `ck_fused_${n}`, () => false));
      // What NVRTC gets: the addon inlines its embedded headers (without the addon, the same headers from the tree).
      const loaded = existsSync(defaultAddonPath()) ? loadAddon() : null;
      const source = moduleSource(kernels);
      const program = loaded !== null && 'addon' in loaded ? loaded.addon.fusionProgram(source) : source;
      if (loaded !== null && 'addon' in loaded) expect(program).toContain('// ---- ../generated/elementwise-expressions.cuh (embedded) ----');
      writeFileSync(join(dir, 'kernels', 'fused.cu'), program);
      const nv = nvcc as { path: string };
      // The options fusion.cpp gives NVRTC, as nvcc spells them (-default-device is NVRTC's only).
      const r = spawnSync(nv.path, ['-std=c++17', '-ptx', '-arch=compute_90', '--fmad=true', '--prec-div=true', '--prec-sqrt=true', '--ftz=false', '-o', join(dir, 'fused.ptx'),
        join(dir, 'kernels', 'fused.cu')], { encoding: 'utf8', timeout: 300_000 });
      // Warnings only (the inlined headers' constants that these kernels do not use).
      expect((r.stderr + r.stdout).split('\n').filter((l) => /error/i.test(l))).toEqual([]);
      expect(r.status).toBe(0);
      const ptx = readFileSync(join(dir, 'fused.ptx'), 'utf8');
      for (let n = 0; n < kernels.length; n++) expect(ptx).toMatch(new RegExp(`\\.entry ck_fused_${n}\\(`));
      // float32 results of library formulas pass through the XOR with the launch's zero.
      expect(ptx).toMatch(/\bxor\.b32/);
      // The last kernel is float32 mul/add/mul/sub only: every operation rounds on its own.
      const last = ptx.slice(ptx.indexOf(`.entry ck_fused_${kernels.length - 1}(`));
      expect(last).not.toMatch(/\bfma\./);
      expect(last).not.toMatch(/\b(add|sub|mul)\.f32\b/); // without .rn ptxas may still fuse them
      expect(last).toMatch(/\bmul\.rn\.f32/);
      expect(last).toMatch(/\badd\.rn\.f32/);
      expect(last).toMatch(/\bsub\.rn\.f32/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);

  const nvrtcSkip = !existsSync(defaultAddonPath()) ? 'the addon was not built' : 'reason' in realNvrtc && !needRealNvrtc ? realNvrtc.reason : '';
  it.skipIf(nvrtcSkip !== '')(`compiles with a real NVRTC through the addon's own NVRTC step: Hopper and Ampere cubins naming every kernel; a compile error is the log${nvrtcSkip ? `: skipped, ${nvrtcSkip}` : ''}`, () => {
    if ('reason' in realNvrtc) throw new Error(`a real NVRTC is needed on this machine: ${realNvrtc.reason}`);
    const kernels = sampleChains().map((c, n) => generate(c, `ck_fused_${n}`, () => false));
    const out = compileWithRealNvrtc(moduleSource(kernels), ['9.0', '8.0']);
    expect(out.nvrtc).toMatchObject({ available: true, reason: '' });
    expect(out.kernels).toEqual(kernels.map((_, n) => `ck_fused_${n}`));
    for (const r of out.results) {
      // The options fusion.cpp gives (-arch=sm_XY, -default-device, ...) are NVRTC's spellings: no error lines.
      expect({ cc: r.cc, ok: r.ok, errors: r.log.split('\n').filter((l) => /error/i.test(l)) }).toEqual({ cc: r.cc, ok: true, errors: [] });
      // A cubin (an ELF for EM_CUDA) that cuModuleLoadData takes, with every kernel's entry by its extern "C" name.
      expect([r.elf, r.machine]).toEqual([true, 190]);
      expect(r.named).toEqual(out.kernels);
    }
    // A module NVRTC rejects: not ok, the log says why (the backend then keeps the eager kernels and quotes it).
    const broken = compileWithRealNvrtc(`${moduleSource(kernels.slice(0, 1))}\nextern "C" __global__ void ck_broken(ck_fused_args a) { undeclared_name(a); }\n`, ['9.0']);
    expect(broken.results[0]).toMatchObject({ ok: false, elf: false });
    expect(broken.results[0]!.log).toMatch(/^nvrtcCompileProgram: NVRTC_ERROR_COMPILATION \(nvrtcResult 6\): [^]*undeclared_name/);
  }, 300_000);
});
