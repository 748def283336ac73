// The conformance suite's browser entry, bundled for the web and run in a real page on the CPU
// backend: the same cases, no Node APIs.
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { launchChromium, servePage } from './page.js';

// The wasm kernels compile asynchronously in pages: wait for them, so the suite checks them.
const ENTRY = `
import '@core/backend-cpu';
import { getBackend } from '@core/tensor';
import { runInBrowser, renderMarkdown } from '@core/conformance/browser';
await getBackend('cpu').wasm.ready;
if (!getBackend('cpu').wasm.active) throw new Error('wasm kernels inactive: ' + getBackend('cpu').wasm.failure);
const report = await runInBrowser(() => 'cpu', { strict: true });
window.__report = { ok: report.ok, counts: report.counts, markdown: renderMarkdown(report), failures: report.cases.filter((c) => c.status === 'fail').map((c) => c.id + ': ' + c.message) };
`;

describe('conformance in a browser page', () => {
  it('bundles with no Node APIs and passes on the cpu backend in headless Chromium', async () => {
    const bundle = await build({
      stdin: { contents: ENTRY, resolveDir: import.meta.dirname, loader: 'ts' },
      bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent',
    });
    const script = bundle.outputFiles[0]!.text;
    expect(script).not.toMatch(/from\s*["']node:/);
    const page = await servePage(script);
    const browser = await launchChromium();
    try {
      const tab = await browser.newPage();
      const errors: string[] = [];
      tab.on('pageerror', (e) => errors.push(e.message));
      await tab.goto(page.url);
      await tab.waitForFunction(() => (window as { __report?: unknown }).__report !== undefined || document.title === 'error', null, { timeout: 90_000 });
      const report = await tab.evaluate(() => (window as unknown as { __report: { ok: boolean; counts: Record<string, number>; markdown: string; failures: string[] } }).__report);
      expect(errors).toEqual([]);
      expect(report.failures).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.counts['pass']).toBeGreaterThan(1500);
      expect(report.markdown).toContain('cpu');
    } finally {
      await browser.close();
      await page.close();
    }
  });
});
