// The GPU check's Node side, bundled by `gpu-check.sh prepare` into one file (one copy of core):
//   node gpu-check.mjs probe
//   node gpu-check.mjs conformance OUT_PREFIX [--gemm auto|own] [--filter SUBSTRING] [--compiled]
//   node gpu-check.mjs compiled OUT.json [--quick]   compiled training steps (CUDA graphs) against eager
//   node gpu-check.mjs train OUT.json --amp fp16|bf16|off [--epochs N] [--device cuda]
//   node gpu-check.mjs bench OUT.json [--quick]
//   node gpu-check.mjs attention OUT.json [--quick]
//   node gpu-check.mjs fusion OUT.json [--quick]    compile()'s elementwise fusion (NVRTC) against eager, bit for bit
// Every subcommand prints one JSON summary line last ("RESULT {...}") for gpu-check.sh's report.
import { writeFileSync } from 'node:fs';
import '@core/backend-cpu';
import '@core/backend-cuda';
import { probeCuda } from '@core/backend-cuda';
import { renderMarkdown, runConformance } from '@core/conformance';
import { availableDevices, getBackend } from '@core/tensor';
import { F, nn } from '@core/nn';
import * as optim from '@core/optim';
import { train } from '../../../examples/train-mnist/src/train.ts';
import { runCudaBench } from '../../../test/bench/cuda.mjs';
import { checkAttention, EMULATED_CASES, GPU_CASES } from '../../../packages/backend-cuda/test/attention-check.mjs';
import { compiledTraining } from '../../../packages/backend-cuda/test/graph-check.mjs';
import { chains, deadIntermediate, fuzz } from '../../../packages/backend-cuda/test/fusion-check.mjs';

const [command, out, ...rest] = process.argv.slice(2);
const flag = (name, fallback) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : fallback);
const result = (value) => console.log(`RESULT ${JSON.stringify(value)}`);

switch (command) {
  case 'probe': {
    result({ probe: probeCuda(), devices: await availableDevices() });
    break;
  }
  case 'conformance': {
    const device = flag('--device', 'cuda');
    await availableDevices();
    const gemm = flag('--gemm', 'auto');
    if (device === 'cuda') getBackend('cuda').setGemmMode(0, gemm);
    const filter = flag('--filter', undefined);
    const compiled = rest.includes('--compiled');
    let done = 0;
    const report = await runConformance(() => device, {
      strict: false,
      filter,
      compiled,
      onResult: () => { if (++done % 500 === 0) console.log(`  ${done} cases`); },
    });
    writeFileSync(`${out}.json`, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(`${out}.md`, renderMarkdown(report));
    const failed = report.cases.filter((r) => r.status === 'fail').map((r) => `${r.id}: ${String(r.message ?? '').split('\n')[0]}`);
    result({ gemm, compiled, counts: report.counts, ok: report.ok, failed: failed.slice(0, 40), failedTotal: failed.length, stats: device === 'cuda' ? getBackend('cuda').stats(0) : null });
    break;
  }
  case 'train': {
    const amp = flag('--amp', 'off');
    const epochs = Number(flag('--epochs', '2'));
    const run = await train(
      { device: flag('--device', 'cuda'), model: flag('--model', 'cnn'), epochs, batchSize: 64, lr: 0.002, seed: 0, amp },
      { onEpoch: (e) => console.log(`  epoch ${e.epoch}: loss ${e.trainLoss.toFixed(4)}, test accuracy ${(100 * e.testAccuracy).toFixed(2)}%, ${e.stepsPerSecond.toFixed(1)} steps/s, amp ${e.amp}`) },
    );
    writeFileSync(out, `${JSON.stringify(run, null, 2)}\n`);
    const last = run.epochs.at(-1);
    result({ amp, device: run.device, epochs: run.epochs.length, testAccuracy: last?.testAccuracy, trainLoss: last?.trainLoss, stepsPerSecond: last?.stepsPerSecond,
      skippedSteps: run.epochs.reduce((s, e) => s + e.skippedSteps, 0), endedIn: last?.amp, notices: run.notices });
    break;
  }
  case 'compiled': {
    // compile()'s replays through CUDA graphs on the GPU: each step's loss and the final parameters
    // against eager's, bit for bit, on both GEMM paths (cuBLASLt matmuls are made as calls between graphs).
    await availableDevices();
    const cuda = getBackend('cuda');
    const steps = rest.includes('--quick') ? 12 : 60;
    const runs = [];
    for (const gemm of ['own', 'auto']) {
      cuda.setGemmMode(0, gemm);
      for (const [model, optimizer] of [['mlp', 'sgd'], ['mlp', 'adam'], ['conv', 'sgd']]) {
        const r = await compiledTraining({ nn, F, optim }, { model, optimizer, steps });
        const ok = r.firstLossDiff === -1 && r.paramsSame && r.replay.every((line) => line.startsWith('prepared (cuda:'));
        console.log(`  ${ok ? 'ok' : 'FAIL'} ${model} ${optimizer} gemm ${gemm}: ${r.replays} replays, ${r.graphLaunches} graph launches, first loss difference at ${r.firstLossDiff}; ${r.replay.join('; ')}`);
        runs.push({ gemm, model, optimizer, ok, ...r });
      }
    }
    cuda.setGemmMode(0, 'auto');
    writeFileSync(out, `${JSON.stringify(runs, null, 2)}\n`);
    result({ ok: runs.every((r) => r.ok), runs });
    break;
  }
  case 'bench': {
    const bench = await runCudaBench({ quick: rest.includes('--quick') });
    writeFileSync(out, `${JSON.stringify(bench, null, 2)}\n`);
    result(bench);
    break;
  }
  case 'attention': {
    // The fused attention kernel at realistic sizes (--quick: the fake driver's small ones) against the contract's formula in float64 on the host.
    await availableDevices();
    const report = await checkAttention(getBackend('cuda'), rest.includes('--quick') ? EMULATED_CASES : GPU_CASES);
    for (const r of report.results) console.log(`  ${r.ok ? 'ok' : 'FAIL'} ${r.name}: out ${r.out.mismatches} mismatches, logSumExp ${r.logSumExp.mismatches}`);
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    result(report);
    break;
  }
  case 'fusion': {
    // Elementwise fusion through NVRTC: fused chains and a seeded fuzz against eager, bit for bit (NaN
    // included: a GPU gives canonical NaNs), and a dead intermediate kept in registers. Without NVRTC
    // the same checks run on graphs of the eager kernels, and the report says NVRTC is absent.
    await availableDevices();
    const cuda = getBackend('cuda');
    const nvrtc = cuda.fusionStatus();
    console.log(`  NVRTC: ${nvrtc.available ? `${nvrtc.library} ${nvrtc.version}` : `absent (${nvrtc.reason})`}`);
    const fixed = await chains({ nan: 'strict' });
    for (const [dtype, r] of Object.entries(fixed)) console.log(`  ${r.same ? 'ok' : 'FAIL'} chains ${dtype}: ${r.replay.join('; ')}`);
    const fuzzed = await fuzz(20261203, rest.includes('--quick') ? 48 : 800, { nan: 'strict' });
    console.log(`  ${fuzzed.failed === 0 ? 'ok' : 'FAIL'} fuzz: ${fuzzed.functions} functions, ${fuzzed.fusedKernels} fused kernels, ${fuzzed.failed} differ`);
    const dead = await deadIntermediate();
    console.log(`  ${dead.same ? 'ok' : 'FAIL'} dead intermediate: ${dead.description}`);
    const report = { nvrtc, chains: fixed, fuzz: fuzzed, dead };
    writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
    result({ ok: Object.values(fixed).every((r) => r.same) && fuzzed.failed === 0 && dead.same, ...report });
    break;
  }
  default:
    console.error('usage: gpu-check.mjs probe | conformance OUT_PREFIX [--gemm auto|own] [--compiled] | compiled OUT.json | train OUT.json --amp fp16|bf16 | bench OUT.json | attention OUT.json | fusion OUT.json');
    process.exit(2);
}
