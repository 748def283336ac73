// The CPU backend's WebAssembly kernels in a real page: with cross-origin isolation they run on a
// shared memory over Web Workers; without it, on a plain memory in one thread. Both compile
// asynchronously (Chrome refuses large synchronous compiles on the main thread) and must match a
// plain JavaScript matmul.
import { describe, expect, it } from 'vitest';
import { CROSS_ORIGIN_ISOLATION, runEntryInPage } from './page.js';

const ENTRY = `
import '@core/backend-cpu';
import { getBackend, manualSeed, randn } from '@core/tensor';
const backend = getBackend('cpu');
await backend.wasm.ready;
manualSeed(1);
const n = 300;
const a = randn([n, n]);
const b = randn([n, n]);
const c = a.matmul(b).dataSync();
const A = a.dataSync(), B = b.dataSync();
let maxErr = 0;
for (let i = 0; i < n; i += 7) for (let j = 0; j < n; j += 5) {
  let s = 0;
  for (let p = 0; p < n; p++) s += A[i * n + p] * B[p * n + j];
  maxErr = Math.max(maxErr, Math.abs(s - c[i * n + j]));
}
// Workers join once they have instantiated the module: run large kernels until one has taken a task.
const deadline = performance.now() + 20000;
while (backend.wasm.threads > 1 && !(backend.wasm.tasksRun()[1] > 0) && performance.now() < deadline) {
  a.matmul(b).dataSync();
  await new Promise((resolve) => setTimeout(resolve, 5));
}
const { active, threads, shared, failure } = backend.wasm;
window.__result = { active, threads, shared, failure, isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency, maxErr, tasksRun: backend.wasm.tasksRun() };
`;

interface PageResult { active: boolean; threads: number; shared: boolean; failure: string | null; isolated: boolean; cores: number; maxErr: number; tasksRun: number[] }

async function runPage(headers: Record<string, string>): Promise<PageResult> {
  const { result, errors } = await runEntryInPage<PageResult>(ENTRY, '__result', { headers });
  expect(errors).toEqual([]);
  return result;
}

describe('cpu wasm kernels in headless Chromium', () => {
  it('cross-origin isolated page: shared memory, one thread per core (Web Workers), correct matmul', async () => {
    const r = await runPage(CROSS_ORIGIN_ISOLATION);
    expect(r.isolated).toBe(true);
    expect(r).toMatchObject({ active: true, shared: true, failure: null });
    expect(r.threads).toBe(Math.min(8, r.cores));
    expect(r.threads).toBeGreaterThan(1);
    expect(r.tasksRun[1]).toBeGreaterThan(0); // a Web Worker ran kernel tasks
    expect(r.maxErr).toBeLessThan(1e-3);
  });

  it('page without isolation: no SharedArrayBuffer, so a plain memory and one thread, still correct', async () => {
    const r = await runPage({});
    expect(r.isolated).toBe(false);
    expect(r).toMatchObject({ active: true, shared: false, threads: 1, failure: null });
    expect(r.maxErr).toBeLessThan(1e-3);
  });
});
