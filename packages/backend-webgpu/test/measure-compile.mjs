#!/usr/bin/env node
// Measures compile() on webgpu against eager (measure-compile-lib.mjs says what) and prints a
// Markdown table. In Node through Dawn (build the package first; the adapter is the Vulkan ICD):
//   VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json node test/measure-compile.mjs [steps]
// or in headless Chromium through navigator.gpu (SwiftShader here; Debian's chromium):
//   node test/measure-compile.mjs --chromium [steps]
import { fileURLToPath } from 'node:url';

const chromium = process.argv.includes('--chromium');
const STEPS = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 20);

if (chromium) {
  const { bundle, runPage } = await import('./chromium.mjs');
  const entry = `
import { registerBackend, setDefaultDevice } from '@core/tensor';
import { createWebGPUBackend } from '../src/index.js';
import { measureCompile } from './measure-compile-lib.mjs';
try {
  const backend = await createWebGPUBackend();
  registerBackend({ name: 'webgpu', priority: 200, create: () => backend });
  setDefaultDevice('webgpu');
  window.__report = { table: await measureCompile(backend, ${STEPS}), isolated: self.crossOriginIsolated };
} catch (e) {
  window.__report = { error: String((e && e.stack) || e) };
}`;
  // Cross-origin isolated: performance.now() steps 5 µs there, 100 µs otherwise.
  const { report, errors } = await runPage(await bundle(entry, fileURLToPath(new URL('.', import.meta.url))), 1_800_000, { isolated: true });
  if (report.error || errors.length > 0) throw new Error(`the page failed: ${report.error ?? errors.join('; ')}`);
  console.log(`in headless Chromium (cross-origin isolated: ${report.isolated}); ${report.table}`);
} else {
  const { registerBackend, setDefaultDevice } = await import('@core/tensor');
  const { createWebGPUBackend } = await import('../dist/index.js');
  const { measureCompile } = await import('./measure-compile-lib.mjs');
  const backend = await createWebGPUBackend();
  registerBackend({ name: 'webgpu', priority: 200, create: () => backend });
  setDefaultDevice('webgpu');
  console.log(await measureCompile(backend, STEPS));
  backend.destroy();
}
