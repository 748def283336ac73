// One run of the cpu backend on whichever platform runs this file (test/native-arm64.test.ts runs
// it with an arm64 Node under qemu-aarch64 and with this machine's Node): loads the package's
// build (dist/, which picks build/<platform>-<arch>/Release/core_cpu.node), runs ops that its native
// path takes through the public API, and prints one JSON line: the platform, `backend.native`, the
// addon file loaded, how often each of its entry points ran, and each op's result bits (base64).
// Plain JavaScript, no test runner: vitest's esbuild is an x64 binary that an arm64 Node cannot run.
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import '@core/backend-cpu';
import { bfloat16, float16, float32, fusedAdamStep, fusedCrossEntropy, fusedMaxPool2d, getBackend, manualSeed, rand, tensor, where } from '@core/tensor';

const require = createRequire(import.meta.url);
const native = getBackend('cpu').native;

/** The loaded addon's exports, each entry point wrapped to count its calls (the backend calls through this object). */
const calls = {};
const addonFile = Object.keys(require.cache).find((path) => basename(path) === 'core_cpu.node') ?? null;
if (addonFile !== null) {
  const exports = require.cache[addonFile].exports;
  for (const [name, fn] of Object.entries(exports)) {
    if (typeof fn !== 'function' || name === 'info') continue;
    exports[name] = (...args) => {
      calls[name] = (calls[name] ?? 0) + 1;
      return fn(...args);
    };
  }
}

/** Deterministic floats in [-scale, scale) from a linear congruential generator: the same on every platform. */
function values(count, seed, scale = 1) {
  const out = new Float32Array(count);
  let s = seed >>> 0;
  for (let i = 0; i < count; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 31 - 1) * scale;
  }
  return out;
}

const bits = (t) => {
  const data = t.dataSync();
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
};

const results = [];
/**
 * Records the result of `compute` under `name`: 'exact' results must match bit for bit across
 * platforms; 'gemm' ones within `bound`, |arm64 − x64| ≤ abs + rel·|x64|.
 */
function record(name, kind, compute, bound) {
  const t = compute();
  results.push({ name, kind, dtype: t.dtype.name, shape: [...t.shape], bits: bits(t), ...(bound ? { bound } : {}) });
}

/**
 * Two float32 sums of k products in different orders differ by at most 2·k·2^-24·Σ|a·b| ≤
 * 2·k²·2^-24·max|a|·max|b|; a 16-bit result rounds once more (one step: 2^-7 of the value for
 * bfloat16, 2^-10 for float16).
 */
const gemmBound = (k, maxA, maxB, rel = 0) => ({ abs: 2 * k * k * 2 ** -24 * maxA * maxB, rel });

const x = tensor(values(96 * 160, 1, 3)).reshape([96, 160]);
const w = tensor(values(160 * 72, 2)).reshape([72, 160]);
// float32 GEMMs: a linear's x·wᵀ and a batched product with edge tiles.
record('matmul f32 x·wᵀ', 'gemm', () => x.matmul(w.transpose(0, 1)), gemmBound(160, 3, 1));
record('bmm f32', 'gemm', () => tensor(values(3 * 37 * 45, 3)).reshape([3, 37, 45]).matmul(tensor(values(3 * 45 * 53, 4)).reshape([3, 45, 53])), gemmBound(45, 1, 1));
// bfloat16 and float16 GEMMs (summed in float32, rounded once).
record('matmul bf16', 'gemm', () => x.to(bfloat16).matmul(w.to(bfloat16).transpose(0, 1)), gemmBound(160, 3, 1, 2 ** -7));
record('matmul f16', 'gemm', () => x.to(float16).matmul(w.to(float16).transpose(0, 1)), gemmBound(160, 3, 1, 2 ** -10));
// Casts with round-to-nearest-even, subnormals, overflow to infinity, NaN.
const special = tensor(Float32Array.from([...values(40000, 5, 70000), 1e-8, -6e-8, 65520, -65504, 3.4e38, Infinity, -Infinity, NaN, 0, -0]));
record('cast f32→bf16', 'exact', () => special.to(bfloat16));
record('cast f32→f16', 'exact', () => special.to(float16));
record('cast bf16→f32', 'exact', () => special.to(bfloat16).to(float32));
record('cast f16→f32', 'exact', () => special.to(float16).to(float32));
// Strided float32 arithmetic (a convolution's data movement) and 16-bit arithmetic.
const big = tensor(values(256 * 300, 6)).reshape([256, 300]);
const other = tensor(values(300 * 256, 7)).reshape([300, 256]);
record('strided add f32', 'exact', () => big.add(other.transpose(0, 1)));
record('strided mul f32', 'exact', () => big.transpose(0, 1).mul(other));
record('strided copy f32', 'exact', () => big.transpose(0, 1).contiguous());
record('add bf16', 'exact', () => big.to(bfloat16).add(other.transpose(0, 1).to(bfloat16)));
record('div f16', 'exact', () => big.to(float16).div(other.transpose(0, 1).to(float16)));
// Unary ops of 16-bit and float32 tensors, computed in double as the TypeScript kernels do.
record('exp bf16', 'exact', () => big.to(bfloat16).exp());
record('erf f16', 'exact', () => big.mul(2.5).to(float16).erf());
record('erf f32', 'exact', () => big.mul(4).erf());
record('exp f32', 'exact', () => big.mul(10).exp());
record('relu bf16', 'exact', () => big.to(bfloat16).relu());
// Reductions, softmax and cross entropy.
record('sum f32 dim 0', 'exact', () => big.sum(0));
record('sum f32 dim 1', 'exact', () => big.sum(1));
record('amax f32', 'exact', () => big.amax(1));
record('softmax f32', 'exact', () => big.softmax(-1));
record('log-softmax f32', 'exact', () => big.logSoftmax(-1));
record('cross entropy f32', 'exact', () => fusedCrossEntropy(big, tensor(Int32Array.from({ length: 256 }, (_, i) => (i * 37) % 300)), { ignoreIndex: -100, labelSmoothing: 0.1, reduction: 'none' }));
// A relu's backward pass on bfloat16: its mask (y > 0) and the select.
record('where(y > 0) bf16', 'exact', () => {
  const y = big.to(bfloat16);
  return where(y.gt(0), other.transpose(0, 1).to(bfloat16), tensor(0).to(bfloat16));
});
// Max pooling (3×3 windows, stride 2, padding 1) of float32 and bfloat16: values and argmax indices.
const images = tensor(values(2 * 16 * 33 * 33, 8)).reshape([2, 16, 33, 33]);
const pool = { kernel: [3, 3], stride: [2, 2], padding: [1, 1], dilation: [1, 1], out: [17, 17] };
for (const dtype of [float32, bfloat16]) {
  const pooled = () => fusedMaxPool2d(images.to(dtype), pool) ?? (() => { throw new Error('fusedMaxPool2d did not apply'); })();
  record(`max-pool ${dtype.name} values`, 'exact', () => pooled().output);
  record(`max-pool ${dtype.name} indices`, 'exact', () => pooled().indices);
}
// One AdamW step in place (the optimizer's fused update).
record('adamw step f32', 'exact', () => {
  const [param, grad, expAvg, expAvgSq] = [9, 10, 11, 12].map((seed) => tensor(values(70000, seed)));
  const expAvgSqPositive = expAvgSq.abs();
  const spec = { step: 3, lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, decoupled: true, maximize: false, stepSize: 1e-3 / (1 - 0.9 ** 3), biasCorrection2Sqrt: Math.sqrt(1 - 0.999 ** 3) };
  if (!fusedAdamStep({ param, grad, expAvg, expAvgSq: expAvgSqPositive }, spec)) throw new Error('fusedAdamStep did not apply');
  return param;
});
// Random numbers: the Philox stream, the same bits everywhere.
record('rand f32', 'exact', () => {
  manualSeed(1234);
  return rand([64, 1024]);
});

console.log(JSON.stringify({
  platform: `${process.platform}-${process.arch}`,
  native,
  autocastSpeed: getBackend('cpu').capabilities.autocastSpeed,
  addon: addonFile,
  calls,
  results,
}));
