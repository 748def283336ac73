// The conformance suite against every backend installed in this repository. cpu always runs; the
// webgpu and cuda backends run when their packages are installed and their device starts, and are
// skipped with the printed reason only when the package or the device is really absent.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { availableDevices, getBackend } from '@core/tensor';
import { describeConformance } from '@core/conformance/vitest';

/** The expectations file of a backend, kept with the suite (absent: every case must pass). */
function expectationsFor(type: string): string | undefined {
  const path = fileURLToPath(new URL(`../../packages/conformance/expectations/${type}.json`, import.meta.url));
  return existsSync(path) ? path : undefined;
}

// The cpu backend as users get it: WebAssembly SIMD kernels on (cpu-typescript.test.ts runs it with them off).
async function loadCpu(): Promise<string> {
  await import('@core/backend-cpu');
  const wasm = (getBackend('cpu') as { wasm?: { active: boolean; failure: string | null } | null }).wasm;
  if (!wasm?.active) throw new Error(`the cpu backend's wasm kernels are not running: ${wasm?.failure ?? 'disabled'}`);
  return 'cpu';
}
describeConformance(loadCpu, { name: 'cpu', expectations: expectationsFor('cpu'), strict: true });
// Every case compiled too: wrapped in compile() and called until it replays. The webgpu and cuda
// backends' own tests run the suite compiled (on lavapipe, SwiftShader and Chromium; through the
// fake CUDA driver).
describeConformance(loadCpu, { name: 'cpu', compiled: true, expectations: expectationsFor('cpu.compiled'), strict: true });

/** Backends that register a device when their package is imported. */
const OPTIONAL = [
  { pkg: '@core/backend-webgpu', type: 'webgpu' },
  { pkg: '@core/backend-cuda', type: 'cuda' },
] as const;

for (const { pkg, type } of OPTIONAL) {
  const reason = await whyAbsent(pkg, type);
  if (reason) {
    console.log(`[conformance] ${type}: skipped — ${reason}`);
    describe.skip(`conformance: ${type} — ${reason}`, () => it('runs when the backend is present', () => {}));
    continue;
  }
  describeConformance(() => type, { name: type, expectations: expectationsFor(type), strict: true });
}

/** Why a backend cannot run here (its package is not installed, or its device is unavailable), or null. */
async function whyAbsent(pkg: string, type: string): Promise<string | null> {
  try {
    await import(/* @vite-ignore */ pkg);
  } catch (e) {
    const code = (e as { code?: string }).code;
    const message = (e as Error).message ?? String(e);
    if (code === 'ERR_MODULE_NOT_FOUND' || /Cannot find (module|package)|Failed to load url|Does the file exist/i.test(message)) {
      return `${pkg} is not installed in this workspace`;
    }
    throw e; // installed but broken: that is a failure, not a skip
  }
  const status = (await availableDevices()).find((d) => d.type === type);
  if (!status) return `${pkg} registered no '${type}' backend`;
  return status.available ? null : `the ${type} device is unavailable: ${status.reason}`;
}
