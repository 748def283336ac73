// The third configuration: the conformance suite's browser entry on this backend in headless
// Chromium (Debian's chromium, driven by playwright-core, page served from 127.0.0.1), where
// WebGPU comes from navigator.gpu. Chromium's WebGPU runs on SwiftShader here, so SwiftShader's
// expectations apply when the adapter says so. test/run.mjs runs this file as the `chromium`
// configuration; Chromium missing is a failure with the install hint.
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

const ENTRY = `
import '@core/backend-cpu';
import { runInBrowser } from '@core/conformance/browser';
import { createWebGPUBackend } from '../src/index.js';
try {
  const backend = await createWebGPUBackend();
  const swiftshader = /swiftshader/i.test(backend.adapterInfo);
  const expectations = { backend: 'webgpu', expectations: [...BASE.expectations, ...(swiftshader ? SWIFTSHADER.expectations : [])] };
  const report = await runInBrowser(() => backend, { strict: true, expectations, compiled: COMPILED });
  window.__report = {
    ok: report.ok, counts: report.counts, adapter: backend.adapterInfo, shaderF16: backend.shaderF16,
    failures: report.cases.filter((c) => c.status === 'fail' || c.status === 'xpass').map((c) => c.id + ': ' + c.message),
  };
} catch (e) {
  window.__report = { error: String((e && e.stack) || e) };
}
`;

async function serve(script: string): Promise<{ url: string; close: () => Promise<void> }> {
  const html = '<!doctype html><meta charset="utf-8"><title>webgpu conformance</title><script type="module" src="/main.js"></script>';
  const server: Server = createServer((req, res) => {
    if (req.url === '/main.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Bundles the suite's browser entry, runs it on a fresh page of headless Chromium and checks its report. */
async function runSuiteInChromium(compiled: boolean): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`this test needs Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  const base = readFileSync(here('../../conformance/expectations/webgpu.json'), 'utf8');
  const swiftshader = readFileSync(here('./expectations/swiftshader.json'), 'utf8');
  const bundle = await build({
    stdin: { contents: `const BASE = ${base};\nconst SWIFTSHADER = ${swiftshader};\nconst COMPILED = ${compiled};\n${ENTRY}`, resolveDir: here('.'), loader: 'ts' },
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]!.text;
  expect(script).not.toMatch(/from\s*["']node:/);
  expect(script).not.toMatch(/dawn\.node/);
  const page = await serve(script);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  try {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    await tab.goto(page.url);
    await tab.waitForFunction(() => (window as { __report?: unknown }).__report !== undefined, null, { timeout: 540_000 });
    const report = await tab.evaluate(() => (window as unknown as { __report: Record<string, unknown> }).__report);
    expect(report.error, 'the page could not start WebGPU or run the suite (is Chromium\'s WebGPU enabled?)').toBeUndefined();
    console.log(`[chromium${compiled ? ', compiled' : ''}] ${String(report.adapter)}, shader-f16: ${String(report.shaderF16)}, ${JSON.stringify(report.counts)}`);
    expect(errors).toEqual([]);
    expect(report.failures).toEqual([]);
    expect(report.ok).toBe(true);
    expect((report.counts as Record<string, number>).pass).toBeGreaterThan(3500);
  } finally {
    await browser.close();
    await page.close();
  }
}

describe('conformance in headless Chromium through navigator.gpu', () => {
  it('bundles for the browser without Dawn and passes the suite on the page\'s WebGPU adapter', () => runSuiteInChromium(false));

  // A page of its own: the storage cases read memory statistics that an eager run before would disturb.
  it('passes the suite compiled: every case wrapped in compile() and replayed through prepared programs', () => runSuiteInChromium(true));
});
