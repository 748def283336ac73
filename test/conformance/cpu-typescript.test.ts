// The conformance suite on the cpu backend with its WebAssembly kernels and its native addon off:
// the TypeScript kernels are the reference path and must stay conformant on their own
// (backends.test.ts runs the cpu backend as users get it, wasm kernels and native GEMM on).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getBackend } from '@core/tensor';
import { describeConformance } from '@core/conformance/vitest';

/** The cpu backend's expectations file for eager or compiled runs (absent: every case must pass). */
function expectationsFor(file: string): string | undefined {
  const path = fileURLToPath(new URL(`../../packages/conformance/expectations/${file}.json`, import.meta.url));
  return existsSync(path) ? path : undefined;
}

async function loadCpu(): Promise<string> {
  process.env.CORE_CPU_WASM = '0'; // read when the backend is created, on first use
  process.env.CORE_CPU_NATIVE = '0';
  await import('@core/backend-cpu');
  const { wasm, native } = getBackend('cpu') as { wasm?: unknown; native?: { loaded: boolean } };
  if (wasm !== null) throw new Error('the cpu backend still runs wasm kernels with CORE_CPU_WASM=0');
  if (native?.loaded !== false) throw new Error('the cpu backend still runs its native addon with CORE_CPU_NATIVE=0');
  return 'cpu';
}

describeConformance(loadCpu, { name: 'cpu (TypeScript kernels)', expectations: expectationsFor('cpu'), strict: true });
// Every case compiled too: wrapped in compile() and called until it replays.
describeConformance(loadCpu, { name: 'cpu (TypeScript kernels)', compiled: true, expectations: expectationsFor('cpu.compiled'), strict: true });
