// Child process of fake-driver.test.ts, started with LD_LIBRARY_PATH pointing at the fake
// libcuda.so.1 (native/cuda/test/fake_libcuda.cpp): runs the conformance suite on 'cuda' through
// the real addon, runtime and kernels (emulated), and prints one JSON line with the outcome. Mode
// 'isolated' runs ISOLATED_SUBSET (or the filter given) without ever importing @core/backend-cpu;
// 'attention' calls the fused attention kernel directly (test/attention-check.mjs); 'graphs' checks
// prepared programs (CUDA graphs) and compiled training (test/graph-check.mjs); 'compiled' runs the
// conformance suite with every case compiled.
import '../dist/index.js';
import { ISOLATED_SUBSET, runConformance } from '@core/conformance';
import { availableDevices, getBackend, listBackends } from '@core/tensor';

const mode = process.argv[2] ?? 'conformance';
const isolated = mode === 'isolated';
if (!isolated) await import('@core/backend-cpu');
if (mode === 'probe') {
  const cuda = (await availableDevices()).find((d) => d.type === 'cuda');
  console.log(JSON.stringify(cuda));
} else if (mode === 'attention') {
  const { checkAttention, EMULATED_CASES, transposedQueryError } = await import('./attention-check.mjs');
  await availableDevices();
  const cuda = getBackend('cuda');
  console.log(JSON.stringify({ ...(await checkAttention(cuda, EMULATED_CASES)), transposedQueryError: transposedQueryError(cuda), contractVersion: cuda.contractVersion }));
} else if (mode === 'graph-driver-error') {
  const { driverFailure } = await import('./graph-check.mjs');
  await availableDevices();
  console.log(JSON.stringify(await driverFailure()));
} else if (mode === 'graph-fallback') {
  // With FAKE_CUDA_CAPTURE_FAIL=1 the program's capture fails: core replays call by call.
  const { compiledTraining } = await import('./graph-check.mjs');
  await availableDevices();
  getBackend('cuda').setGemmMode(0, 'own');
  const nnLib = await import('@core/nn');
  const optim = await import('@core/optim');
  console.log(JSON.stringify(await compiledTraining({ nn: nnLib.nn, F: nnLib.F, optim }, { model: 'mlp', optimizer: 'sgd', steps: 12 })));
} else if (mode === 'graph-devices') {
  const { twoDevices } = await import('./graph-check.mjs');
  await availableDevices();
  console.log(JSON.stringify(await twoDevices()));
} else if (mode === 'fusion') {
  // compile()'s elementwise fusion (fake NVRTC through CORE_CUDA_NVRTC, or none): test/fusion-check.mjs.
  const check = await import('./fusion-check.mjs');
  await availableDevices();
  const which = process.argv[3] ?? 'chains';
  let result;
  if (which === 'fuzz') result = await check.fuzz(Number(process.argv[4] ?? 1), Number(process.argv[5] ?? 16));
  else if (which === 'dead') result = await check.deadIntermediate();
  else if (which === 'cache') result = await check.cache();
  else if (which === 'training') {
    // Compiled training with fusion: the same losses and weights as eager (test/graph-check.mjs).
    const { compiledTraining } = await import('./graph-check.mjs');
    getBackend('cuda').setGemmMode(0, 'own');
    const nnLib = await import('@core/nn');
    const optim = await import('@core/optim');
    const libs = { nn: nnLib.nn, F: nnLib.F, optim };
    result = {
      mlpSgd: await compiledTraining(libs, { model: 'mlp', optimizer: 'sgd', steps: 6 }),
      mlpAdam: await compiledTraining(libs, { model: 'mlp', optimizer: 'adam', steps: 6 }),
      convSgd: await compiledTraining(libs, { model: 'conv', optimizer: 'sgd', steps: 4 }),
    };
  } else result = await check.chains();
  console.log(JSON.stringify(result));
} else if (mode === 'graphs') {
  const { checkGraphs } = await import('./graph-check.mjs');
  await availableDevices();
  const nnLib = await import('@core/nn');
  const optim = await import('@core/optim');
  console.log(JSON.stringify(await checkGraphs({ nn: nnLib.nn, F: nnLib.F, optim })));
} else {
  await availableDevices();
  getBackend('cuda').setGemmMode(0, process.argv[4] ?? 'auto');
  const filter = process.argv[3] || (isolated ? ISOLATED_SUBSET : undefined);
  const compiled = mode === 'compiled';
  // Count the programs prepared and the prepares that threw (core then replays call by call, and the case still passes).
  const prepares = { ok: 0, failed: 0, errors: [], fused: 0, fusionOff: {} };
  const cuda = getBackend('cuda');
  const prepare = cuda.prepare;
  cuda.prepare = (...args) => {
    try {
      const p = prepare(...args);
      prepares.ok++;
      // Elementwise fusion (with CORE_CUDA_NVRTC naming the fake NVRTC): programs fused, and why others were not.
      if (/ fused kernels? of /.test(p.description)) prepares.fused++;
      const off = /; elementwise fusion off: ([^:(]*)/.exec(p.description)?.[1]?.trim();
      if (off) prepares.fusionOff[off] = (prepares.fusionOff[off] ?? 0) + 1;
      return p;
    } catch (e) {
      prepares.failed++;
      if (prepares.errors.length < 5) prepares.errors.push(String(e.message).slice(0, 300));
      throw e;
    }
  };
  const report = await runConformance(() => 'cuda', { strict: true, filter, isolated, compiled, timeoutMs: 120_000 });
  const failed = report.cases.filter((c) => c.status === 'fail' || c.status === 'xpass').map((c) => ({ id: c.id, message: String(c.message ?? '').slice(0, 300) }));
  console.log(JSON.stringify({ counts: report.counts, failed, prepares, cpu: report.cpu, backends: listBackends(), stats: getBackend('cuda').stats(0), memory: getBackend('cuda').memoryStats(0) }));
}
