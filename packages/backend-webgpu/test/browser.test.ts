// The third configuration: the conformance suite's browser entry on this backend in headless
// Chromium (Debian's chromium, driven by playwright-core, page served from 127.0.0.1), where
// WebGPU comes from navigator.gpu. Chromium's WebGPU runs on SwiftShader here, so SwiftShader's
// expectations apply when the adapter says so. test/run.mjs runs this file as the `chromium`
// configuration; Chromium missing is a failure with the install hint.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundle, CHROMIUM, runPage } from './chromium.mjs';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

const ENTRY = `
import '@core/backend-cpu';
import { runInBrowser } from '@core/conformance/browser';
import { createWebGPUBackend } from '../src/index.js';
try {
  const backend = await createWebGPUBackend();
  const swiftshader = /swiftshader/i.test(backend.adapterInfo);
  const expectations = { backend: 'webgpu', expectations: [...BASE.expectations, ...(swiftshader ? SWIFTSHADER.expectations : [])] };
  const report = await runInBrowser(() => backend, { strict: true, expectations, compiled: COMPILED, ...(FILTER ? { filter: new RegExp(FILTER) } : {}) });
  window.__report = {
    ok: report.ok, counts: report.counts, adapter: backend.adapterInfo, shaderF16: backend.shaderF16,
    failures: report.cases.filter((c) => c.status === 'fail' || c.status === 'xpass').map((c) => c.id + ': ' + c.message),
  };
} catch (e) {
  window.__report = { error: String((e && e.stack) || e) };
}
`;

/** Bundles the suite's browser entry, runs it on a fresh page of headless Chromium and checks its report. */
async function runSuiteInChromium(compiled: boolean, filter?: RegExp, minPass = 3500): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`this test needs Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const base = readFileSync(here('../../conformance/expectations/webgpu.json'), 'utf8');
  const swiftshader = readFileSync(here('./expectations/swiftshader.json'), 'utf8');
  const script = await bundle(`const BASE = ${base};\nconst SWIFTSHADER = ${swiftshader};\nconst COMPILED = ${compiled};\nconst FILTER = ${JSON.stringify(filter?.source ?? null)};\n${ENTRY}`, here('.'));
  expect(script).not.toMatch(/from\s*["']node:/);
  expect(script).not.toMatch(/dawn\.node/);
  const { report, errors } = await runPage(script, 540_000);
  expect(report.error, 'the page could not start WebGPU or run the suite (is Chromium\'s WebGPU enabled?)').toBeUndefined();
  console.log(`[chromium${compiled ? ', compiled' : ''}${filter ? ` ${filter}` : ''}] ${String(report.adapter)}, shader-f16: ${String(report.shaderF16)}, ${JSON.stringify(report.counts)}`);
  expect(errors).toEqual([]);
  expect(report.failures).toEqual([]);
  expect(report.ok).toBe(true);
  expect((report.counts as Record<string, number>).pass).toBeGreaterThan(minPass);
}

describe('conformance in headless Chromium through navigator.gpu', () => {
  it('bundles for the browser without Dawn and passes the suite on the page\'s WebGPU adapter', () => runSuiteInChromium(false));

  // A page of its own: the storage cases read memory statistics that an eager run before would disturb.
  // The training goldens (100 steps of four programs, eager and compiled) get a page of their own too:
  // on SwiftShader they take minutes on a busy machine, and each page has its own hang guard.
  it('passes the suite compiled: every case wrapped in compile() and replayed through prepared programs', () => runSuiteInChromium(true, /^(?!training\/golden-)/));
  it('passes the training goldens compiled: 100 steps of each program with eager\'s loss and parameter bits', () => runSuiteInChromium(true, /^training\/golden-/, 3));
});
