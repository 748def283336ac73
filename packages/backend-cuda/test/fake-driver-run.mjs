// Child process of fake-driver.test.ts, started with LD_LIBRARY_PATH pointing at the fake
// libcuda.so.1 (native/cuda/test/fake_libcuda.cpp): runs the conformance suite on 'cuda' through
// the real addon, runtime and kernels (emulated), and prints one JSON line with the outcome. Mode
// 'isolated' runs ISOLATED_SUBSET (or the filter given) without ever importing @core/backend-cpu;
// 'attention' calls the fused attention kernel directly (test/attention-check.mjs).
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
} else {
  await availableDevices();
  getBackend('cuda').setGemmMode(0, process.argv[4] ?? 'auto');
  const filter = process.argv[3] || (isolated ? ISOLATED_SUBSET : undefined);
  const report = await runConformance(() => 'cuda', { strict: true, filter, isolated, timeoutMs: 120_000 });
  const failed = report.cases.filter((c) => c.status === 'fail' || c.status === 'xpass').map((c) => ({ id: c.id, message: String(c.message ?? '').slice(0, 300) }));
  console.log(JSON.stringify({ counts: report.counts, failed, cpu: report.cpu, backends: listBackends(), stats: getBackend('cuda').stats(0), memory: getBackend('cuda').memoryStats(0) }));
}
