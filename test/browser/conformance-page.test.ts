// The conformance suite's browser entry, bundled for the web and run in a real page on the CPU
// backend: the same cases, no Node APIs.
import { describe, expect, it } from 'vitest';
import { runEntryInPage } from './page.js';

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
    const { result: report, errors, script } = await runEntryInPage<{ ok: boolean; counts: Record<string, number>; markdown: string; failures: string[] }>(
      ENTRY, '__report', { timeoutMs: 400_000 },
    );
    expect(script).not.toMatch(/from\s*["']node:/);
    expect(errors).toEqual([]);
    expect(report.failures).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.counts['pass']).toBeGreaterThan(1500);
    expect(report.markdown).toContain('cpu');
  });
});
