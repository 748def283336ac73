// examples/browser end to end: build the page with Vite (its own config, through the vite the
// example depends on), serve dist/ from 127.0.0.1, and train in headless Chromium — on WebGPU
// (SwiftShader here; a missing adapter is a failure that prints the page's reason), then once
// with ?device=cpu for the fallback path, and a few steps with the AMP switch on auto. A
// screenshot of the WebGPU run goes to $TEST_ARTIFACTS (default: <tmpdir>/core-test-artifacts).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CROSS_ORIGIN_ISOLATION, launchChromium } from './page.js';

const ROOT = fileURLToPath(new URL('../../examples/browser/', import.meta.url));
const ARTIFACTS = process.env.TEST_ARTIFACTS ?? join(tmpdir(), 'core-test-artifacts');
const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.gz': 'application/octet-stream' };

interface Demo {
  state: string;
  device: string | null;
  deviceReason: string;
  devices: { type: string; available: boolean; reason?: string }[];
  amp: string;
  losses: number[];
  accuracy: { step: number; value: number }[];
  error: string | null;
  seconds: number;
}

/** vite build into a temp folder, using the vite examples/browser depends on (not a test dependency). */
async function buildPage(outDir: string): Promise<void> {
  const vitePath = createRequire(join(ROOT, 'package.json')).resolve('vite');
  const vite = (await import(pathToFileURL(vitePath).href)) as { build(config: object): Promise<unknown> };
  await vite.build({ root: ROOT, configFile: join(ROOT, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
}

async function serveDir(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dir, path.endsWith('/') ? `${path}index.html` : path);
    try {
      if (!file.startsWith(dir) || !statSync(file).isFile()) throw new Error('not a file');
      // The headers vite.config.ts serves with: cross-origin isolation, so the cpu wasm kernels get Web Workers.
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', ...CROSS_ORIGIN_ISOLATION }).end(readFileSync(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('examples/browser: training MNIST in a page', () => {
  let outDir: string;
  let site: { url: string; close: () => Promise<void> };
  let browser: Browser;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'demo-page-'));
    await buildPage(outDir);
    site = await serveDir(outDir);
    browser = await launchChromium(['--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader']);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('builds a small bundle (< 5 MB with the digits) with no Node APIs', () => {
    const files = readdirSync(outDir, { recursive: true, withFileTypes: true }).filter((f) => f.isFile()).map((f) => join(f.parentPath, f.name));
    const js = files.filter((f) => f.endsWith('.js')).map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(js).not.toMatch(/from\s*["']node:/);
    expect(js).not.toMatch(/dawn\.node/);
    expect(files.some((f) => /mnist-digits-.*\.gz$/.test(f))).toBe(true);
    const total = files.reduce((n, f) => n + statSync(f).size, 0);
    console.log(`[demo] dist: ${files.length} files, ${(total / 1024).toFixed(0)} KiB`);
    expect(total).toBeLessThan(5 * 1024 * 1024);
  });

  async function train(query: string, screenshot?: string): Promise<Demo> {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      await tab.goto(`${site.url}?${query}`);
      await tab.click('#start');
      await tab.waitForFunction(() => ['done', 'error', 'stopped'].includes((window as unknown as { __demo: Demo }).__demo.state), null, { timeout: 300_000 });
      const demo = await tab.evaluate(() => (window as unknown as { __demo: Demo }).__demo);
      if (screenshot) {
        mkdirSync(ARTIFACTS, { recursive: true });
        await tab.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true });
      }
      const points = await tab.evaluate(() => {
        const svg = document.querySelector('#chart svg');
        const loss = svg?.querySelector('polyline.loss')?.getAttribute('points')?.trim().split(/\s+/).filter(Boolean).length ?? 0;
        return { loss, acc: svg?.querySelectorAll('circle.acc-point').length ?? 0 };
      });
      console.log(`[demo ${query}] ${demo.device}: ${demo.deviceReason}; ${demo.losses.length} steps in ${demo.seconds.toFixed(1)} s, loss ${demo.losses[0]?.toFixed(3)} → ${demo.losses.at(-1)?.toFixed(3)}, amp ${demo.amp}, acc ${demo.accuracy.map((a) => a.value.toFixed(3)).join(' ')}`);
      expect(errors).toEqual([]);
      expect(demo.error, 'the page failed').toBeNull();
      expect(demo.state).toBe('done');
      const losses = demo.losses;
      expect(losses.length).toBeGreaterThan(0);
      expect(losses.every(Number.isFinite)).toBe(true);
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      const third = Math.max(1, Math.floor(losses.length / 3));
      expect(mean(losses.slice(-third))).toBeLessThan(mean(losses.slice(0, third)));
      expect(points.loss).toBe(losses.length);
      expect(points.acc).toBe(demo.accuracy.length);
      expect(points.acc).toBeGreaterThan(0);
      return demo;
    } finally {
      await tab.close();
    }
  }

  it('auto picks the cpu over a software WebGPU adapter (SwiftShader here), and says which', async () => {
    const demo = await train('steps=4&model=mlp&amp=off&eval=4&device=auto');
    expect(demo.device).toBe('cpu');
  });

  it('trains on WebGPU: device webgpu, finite falling loss, chart drawn', async () => {
    const demo = await train('steps=20&model=mlp&amp=off&eval=10&device=webgpu', 'demo-page-webgpu.png');
    const gpu = demo.devices.find((d) => d.type === 'webgpu');
    expect(demo.device, `WebGPU missing in headless Chromium — page says: ${demo.deviceReason} (webgpu: ${gpu?.reason ?? 'not listed'})`).toBe('webgpu');
    expect(demo.accuracy.at(-1)!.value).toBeGreaterThan(0.5);
  });

  it('falls back to the cpu backend with ?device=cpu', async () => {
    const demo = await train('steps=20&model=mlp&amp=off&eval=10&device=cpu');
    expect(demo.device).toBe('cpu');
    expect(demo.deviceReason).toMatch(/cpu requested/);
  });

  it('runs the AMP switch (auto) on WebGPU', async () => {
    const demo = await train('steps=6&model=mlp&amp=auto&eval=6&device=webgpu');
    expect(demo.device).toBe('webgpu');
    expect(['bf16', 'fp16']).toContain(demo.amp);
  });
});
