// Headless Chromium for browser tests: Debian's chromium driven by playwright-core (never a
// downloaded browser), pages served from 127.0.0.1 by a throwaway HTTP server.
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Launch the system Chromium, or fail saying how to install it (.ci/run does). */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`browser tests need Chromium at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    // The machine has no network beyond the registries: keep Chromium from reaching out.
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
  });
}

/** The headers that make a page cross-origin isolated, so it gets SharedArrayBuffer (and wasm threads). */
export const CROSS_ORIGIN_ISOLATION = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };

/** Serve one HTML page and one script on 127.0.0.1 (with extra response headers); returns its URL and a close function. */
export async function servePage(script: string, headers: Record<string, string> = {}): Promise<{ url: string; close: () => Promise<void> }> {
  const html = '<!doctype html><meta charset="utf-8"><title>test</title><script type="module" src="/main.js"></script>';
  const server: Server = createServer((req, res) => {
    if (req.url === '/main.js') res.writeHead(200, { 'content-type': 'text/javascript', ...headers }).end(script);
    else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(html);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Bundle `entry` (TypeScript, resolved from test/browser) for the web, serve it, open it in
 * headless Chromium and return what the page stores in `window[resultKey]` (waiting up to
 * `timeoutMs`), with the page errors and the bundle's text.
 */
export async function runEntryInPage<R>(
  entry: string,
  resultKey: string,
  { headers = {}, timeoutMs = 300_000 }: { headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<{ result: R; errors: string[]; script: string }> {
  const { build } = await import('esbuild');
  const bundle = await build({
    stdin: { contents: entry, resolveDir: import.meta.dirname, loader: 'ts' },
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent',
  });
  const script = bundle.outputFiles[0]!.text;
  const page = await servePage(script, headers);
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    await tab.goto(page.url);
    await tab.waitForFunction((key) => (window as unknown as Record<string, unknown>)[key] !== undefined || document.title === 'error', resultKey, { timeout: timeoutMs });
    const result = await tab.evaluate((key) => (window as unknown as Record<string, unknown>)[key], resultKey) as R;
    return { result, errors, script };
  } finally {
    await browser.close();
    await page.close();
  }
}
