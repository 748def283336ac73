// CUDA benchmark: GEMM throughput (TFLOPS) by dtype, size and GEMM path (cuBLASLt / our kernels),
// and MLP training steps per second (fp32, bf16 autocast, fp16 autocast + GradScaler) on cuda:0.
//   node test/bench/cuda.mjs [--out report.json] [--quick]      (CORE_CUDA_BENCH_SIZES=1024,4096 picks the GEMM sizes)
// Needs a GPU: on a machine without one it prints the reason and exits 2. native/cuda/gpu-check.sh
// runs it (bundled) and puts the numbers in its report. Timing: warm-up runs first, then each
// measurement ends with an awaited device synchronize, so the time includes the work, not just queueing it.
import '@core/backend-cpu';
import '@core/backend-cuda';
import { F, nn } from '@core/nn';
import { AdamW } from '@core/optim';
import { autocast, availableDevices, bfloat16, float16, float32, getBackend, GradScaler, manualSeed, randint, randn } from '@core/tensor';
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Dense bf16 tensor-core peaks (TFLOPS, without sparsity) of common data-centre cards, by name. */
const BF16_PEAK = [
  [/H200|H100.*(SXM|HBM3)|GH200/i, 989],
  [/H100.*PCIe|H100/i, 756],
  [/A100/i, 312],
  [/L40S/i, 362],
  [/L4\b/i, 121],
  [/A10\b/i, 125],
];

/** The card's dense bf16 peak in TFLOPS, or null when we do not know the card. */
export function bf16Peak(name) {
  for (const [re, peak] of BF16_PEAK) if (re.test(name)) return peak;
  return null;
}

async function seconds(fn, sync) {
  const t0 = performance.now();
  await fn();
  await sync();
  return (performance.now() - t0) / 1000;
}

/** Run the benchmarks on cuda:0 and return the results (throws when cuda is unavailable). */
export async function runCudaBench({ quick = false, log = console.log } = {}) {
  const cuda = (await availableDevices()).find((d) => d.type === 'cuda');
  if (!cuda?.available) throw new Error(`cuda is unavailable: ${cuda?.reason ?? 'not registered'}`);
  const backend = getBackend('cuda');
  const sync = () => backend.synchronize(0);
  const device = backend.devices[0];
  const peak = bf16Peak(device.name);
  const modes = device.cublasLt ? ['auto', 'own'] : ['own'];
  const sizes = process.env.CORE_CUDA_BENCH_SIZES?.split(',').map(Number) ?? (quick ? [1024, 4096] : [1024, 2048, 4096, 8192]);
  const gemm = [];
  manualSeed(0);
  for (const dtype of [float32, float16, bfloat16]) {
    for (const n of sizes) {
      const a = randn([n, n], { device: 'cuda' }).to(dtype);
      const b = randn([n, n], { device: 'cuda' }).to(dtype);
      for (const mode of modes) {
        backend.setGemmMode(0, mode);
        const before = backend.stats(0);
        a.matmul(b).dispose(); // warm-up (and cuBLASLt's heuristic)
        await sync();
        let iters = 0;
        let total = 0;
        while (total < (quick ? 0.2 : 0.5) && iters < 50) {
          total += await seconds(() => { a.matmul(b).dispose(); }, sync);
          iters++;
        }
        const after = backend.stats(0);
        const path = after.cublasLtCalls > before.cublasLtCalls ? 'cuBLASLt' : after.wmmaCalls > before.wmmaCalls ? 'wmma (ours)' : 'tiled (ours)';
        const tflops = (2 * n ** 3 * iters) / total / 1e12;
        gemm.push({ dtype: dtype.name, n, path, iters, tflops, ofBf16Peak: peak ? tflops / peak : null });
        log(`gemm ${dtype.name.padEnd(8)} ${String(n).padStart(5)}³ ${path.padEnd(12)} ${tflops.toFixed(1).padStart(7)} TFLOPS${peak ? ` (${((100 * tflops) / peak).toFixed(1)}% of bf16 peak ${peak})` : ''}`);
      }
      a.dispose();
      b.dispose();
    }
  }
  backend.setGemmMode(0, 'auto');

  const mlp = [];
  for (const amp of ['off', 'bf16', 'fp16']) {
    manualSeed(0);
    const model = new nn.Sequential(new nn.Linear(784, 1024), new nn.ReLU(), new nn.Linear(1024, 1024), new nn.ReLU(), new nn.Linear(1024, 10)).to('cuda');
    const optimizer = new AdamW(model.parameters(), { lr: 1e-3 });
    const scaler = new GradScaler('cuda', { enabled: amp === 'fp16' });
    const x = randn([256, 784], { device: 'cuda' });
    const y = randint(0, 10, [256], { device: 'cuda' });
    const options = { deviceType: 'cuda', dtype: amp === 'fp16' ? float16 : bfloat16, enabled: amp !== 'off' };
    let lastLoss = 0;
    const step = async () => {
      const loss = autocast(options, () => F.crossEntropy(model.forward(x), y));
      optimizer.zeroGrad();
      scaler.scale(loss).backward();
      await scaler.step(optimizer);
      scaler.update();
      return loss;
    };
    for (let i = 0; i < 5; i++) await step();
    await sync();
    const steps = quick ? 20 : 100;
    const t = await seconds(async () => {
      let loss;
      for (let i = 0; i < steps; i++) loss = await step();
      lastLoss = await loss.item();
    }, sync);
    mlp.push({ amp, stepsPerSecond: steps / t, finalLoss: lastLoss });
    log(`mlp 784→1024→1024→10 batch 256 AdamW amp=${amp.padEnd(4)} ${(steps / t).toFixed(1)} steps/s (loss ${lastLoss.toFixed(3)})`);
  }
  return { device: { ...device, driverVersion: backend.driverVersion }, bf16PeakTflops: peak, gemm, mlp, dtypes: [float32.name, float16.name, bfloat16.name] };
}

// Run as a script (not when imported, nor when bundled into native/cuda/gpu-check's single file).
if (import.meta.url.endsWith('/bench/cuda.mjs') && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1] : null;
  try {
    const result = await runCudaBench({ quick: process.argv.includes('--quick') });
    if (out) writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  } catch (e) {
    console.error(`bench:cuda: ${e.message}`);
    process.exit(2);
  }
}
