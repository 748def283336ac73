// Headless Chromium for this package's browser runs (test/browser.test.ts, measure-compile.mjs
// --chromium): Debian's chromium driven by playwright-core, WebGPU on SwiftShader, a bundled
// script served from 127.0.0.1. Chromium missing is an error with the install hint.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** `contents` (an ES module, imports resolved from `resolveDir`) bundled for the browser. */
export async function bundle(contents, resolveDir) {
  const out = await build({
    stdin: { contents, resolveDir, loader: 'ts' },
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent',
  });
  return out.outputFiles[0].text;
}

/**
 * Serves a page that runs `script` as a module, from 127.0.0.1 (a secure context, so navigator.gpu
 * exists). `isolated` serves it cross-origin isolated, where performance.now() has 5 µs steps
 * rather than 100 µs (and SharedArrayBuffer exists).
 */
export async function serve(script, { isolated = false } = {}) {
  const html = '<!doctype html><meta charset="utf-8"><title>webgpu</title><script type="module" src="/main.js"></script>';
  const headers = isolated ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {};
  const server = createServer((req, res) => {
    if (req.url === '/main.js') res.writeHead(200, { 'content-type': 'text/javascript', ...headers }).end(script);
    else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(html);
    else res.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Headless Chromium with WebGPU on SwiftShader. */
export async function launchChromium() {
  if (!existsSync(CHROMIUM)) throw new Error(`this needs Chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader',
      '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/**
 * Runs `script` on a fresh page (served as `serve` does, with `options`) and returns what it leaves
 * in `window.__report` (waiting up to `timeoutMs`), with the page's uncaught errors.
 */
export async function runPage(script, timeoutMs, options = {}) {
  const page = await serve(script, options);
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage();
    const errors = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    await tab.goto(page.url);
    await tab.waitForFunction(() => window.__report !== undefined, null, { timeout: timeoutMs });
    return { report: await tab.evaluate(() => window.__report), errors };
  } finally {
    await browser.close();
    await page.close();
  }
}
