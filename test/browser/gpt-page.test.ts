// examples/browser's GPT page (gpt.html) end to end: build the example with Vite (its own config,
// through the vite the example depends on), serve dist/ with `vite preview` (the config's
// cross-origin isolation headers) on 127.0.0.1, and train a tiny character-level GPT in headless
// Chromium — on WebGPU (SwiftShader here; a missing adapter is a failure that prints the page's
// reason), on the cpu backend with ?device=cpu, and once stopped early. Each run must lower the
// training loss (the mean of the last 6 steps at most 0.9 × the first step's) and the validation
// loss, and end with a sample of the requested length made only of characters of the shipped text.
// A screenshot of the WebGPU run goes to $TEST_ARTIFACTS (default: <tmpdir>/core-test-artifacts).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMobyDick } from '../../examples/gpt/src/text.js';
import { launchChromium } from './page.js';

const ROOT = fileURLToPath(new URL('../../examples/browser/', import.meta.url));
const ARTIFACTS = process.env.TEST_ARTIFACTS ?? join(tmpdir(), 'core-test-artifacts');
/** The page's query for a tiny model: 36 steps of 8 windows of 32 characters, one block of width 32. */
const TINY = 'steps=36&batch=8&block=32&layers=1&heads=2&embd=32&lr=0.01&warmup=4&eval=18&prompt=CHAPTER%201&tokens=40';
const PROMPT = 'CHAPTER 1';

interface GptPage {
  state: string;
  device: string | null;
  deviceReason: string;
  devices: { type: string; available: boolean; reason?: string }[];
  amp: string;
  ampReason: string;
  text: { chars: number; bookChars: number; vocab: string; train: number; val: number; baseline: number } | null;
  params: number;
  losses: number[];
  evals: { step: number; valLoss: number; trainLoss: number }[];
  sample: string | null;
  error: string | null;
  seconds: number;
}

interface Vite {
  build(config: object): Promise<unknown>;
  preview(config: object): Promise<{ resolvedUrls: { local: string[] } | null; close(): Promise<void> }>;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** Wait until the page's run has ended: done, stopped or failed. */
async function runEnded(tab: Page): Promise<void> {
  await tab.waitForFunction(() => ['done', 'error', 'stopped'].includes((window as unknown as { __gpt: GptPage }).__gpt.state), null, { timeout: 300_000 });
}

describe('examples/browser: training the character-level GPT in a page', () => {
  let outDir: string;
  let site: Awaited<ReturnType<Vite['preview']>>;
  let url: string;
  let browser: Browser;
  let shipped: string;

  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'gpt-page-'));
    // The vite examples/browser depends on (not a test dependency), with the example's config.
    const vite = (await import(pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('vite')).href)) as Vite;
    const config = { root: ROOT, configFile: join(ROOT, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } };
    await vite.build(config);
    site = await vite.preview({ ...config, preview: { host: '127.0.0.1', port: 0 } });
    url = site.resolvedUrls!.local[0]!;
    const assets = join(outDir, 'assets');
    const textFile = readdirSync(assets).find((f) => /^moby-dick-.*\.gz$/.test(f));
    shipped = textFile ? gunzipSync(readFileSync(join(assets, textFile))).toString('utf8') : '';
    browser = await launchChromium(['--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader']);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('ships the start of the Moby Dick that demo:gpt trains on, 200–500 KB of it, gzipped, and a page script with no Node APIs', () => {
    const bytes = Buffer.byteLength(shipped);
    console.log(`[gpt page] text: ${shipped.length} characters, ${(bytes / 1024).toFixed(0)} KiB`);
    expect(bytes).toBeGreaterThanOrEqual(200 * 1024);
    expect(bytes).toBeLessThanOrEqual(500 * 1024);
    expect(loadMobyDick().startsWith(shipped)).toBe(true);
    expect(shipped.endsWith('\n')).toBe(true); // cut at a line's end
    const html = readFileSync(join(outDir, 'gpt.html'), 'utf8');
    const script = /src="\.\/assets\/(gpt-[^"]+\.js)"/.exec(html)?.[1];
    expect(script, 'gpt.html loads its script').toBeDefined();
    expect(readFileSync(join(outDir, 'assets', script!), 'utf8')).not.toMatch(/from\s*["']node:/);
  });

  /** What `open` may do besides: act on the page mid-run and after the run, and save a picture of the end. */
  interface OpenOptions {
    whileRunning?: (tab: Page) => Promise<void>;
    afterRun?: (tab: Page) => Promise<void>;
    screenshot?: string;
  }

  /** Open the page with `query`, start it, wait for the run to end and read the page's state and chart. */
  async function open(query: string, { whileRunning, afterRun, screenshot }: OpenOptions = {}): Promise<{ gpt: GptPage; errors: string[]; chart: { trainPoints: number; valDots: number } }> {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    try {
      await tab.goto(`${url}gpt.html?${query}`);
      await tab.click('#start');
      await whileRunning?.(tab);
      await runEnded(tab);
      await afterRun?.(tab);
      const gpt = await tab.evaluate(() => (window as unknown as { __gpt: GptPage }).__gpt);
      if (screenshot) {
        mkdirSync(ARTIFACTS, { recursive: true });
        await tab.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true });
      }
      const chart = await tab.evaluate(() => ({
        trainPoints: document.querySelector('#chart svg polyline')?.getAttribute('points')?.trim().split(/\s+/).length ?? 0,
        valDots: document.querySelectorAll('#chart svg circle').length,
      }));
      console.log(`[gpt page ${query}] ${gpt.device}: ${gpt.deviceReason}; ${gpt.params} parameters, ${gpt.losses.length} steps in ${gpt.seconds.toFixed(1)} s, ` +
        `loss ${gpt.losses[0]?.toFixed(3)} → ${gpt.losses.at(-1)?.toFixed(3)}, validation ${gpt.evals.map((e) => e.valLoss.toFixed(3)).join(' → ')}; sample ${JSON.stringify(gpt.sample)}`);
      return { gpt, errors, chart };
    } finally {
      await tab.close();
    }
  }

  /** What every finished run shows: no errors, falling losses, the chart, and a sample of `tokens` characters of the text after the prompt. */
  function expectTrained({ gpt, errors, chart }: Awaited<ReturnType<typeof open>>, tokens: number): void {
    expect(errors).toEqual([]);
    expect(gpt.error, 'the page failed').toBeNull();
    const losses = gpt.losses;
    expect(losses.every(Number.isFinite)).toBe(true);
    // The untrained model is near uniform over the vocabulary; the last steps' loss is at least 10% lower.
    expect(losses[0]).toBeCloseTo(Math.log(gpt.text!.vocab.length), 0);
    expect(mean(losses.slice(-6))).toBeLessThanOrEqual(0.9 * losses[0]!);
    expect(gpt.evals[0]!.step).toBe(0);
    expect(gpt.evals.at(-1)!.step).toBe(losses.length);
    expect(gpt.evals.at(-1)!.valLoss).toBeLessThan(gpt.evals[0]!.valLoss);
    expect(chart).toEqual({ trainPoints: losses.length, valDots: gpt.evals.length });

    // The vocabulary is the shipped text's, and the sample is the prompt and `tokens` characters of it.
    expect(gpt.text!.vocab).toBe([...new Set(shipped)].sort().join(''));
    expect(gpt.text!.chars).toBe(shipped.length);
    const sample = gpt.sample!;
    expect(sample.startsWith(PROMPT)).toBe(true);
    expect([...sample]).toHaveLength(PROMPT.length + tokens);
    const alphabet = new Set(shipped);
    expect([...sample].filter((c) => !alphabet.has(c))).toEqual([]);
  }

  it('trains on WebGPU: device webgpu, falling training and validation loss, chart and sample', async () => {
    const run = await open(`${TINY}&device=webgpu&amp=off`, { screenshot: 'gpt-page-webgpu.png' });
    const gpu = run.gpt.devices.find((d) => d.type === 'webgpu');
    expect(run.gpt.device, `WebGPU missing in headless Chromium — page says: ${run.gpt.deviceReason} (webgpu: ${gpu?.reason ?? 'not listed'})`).toBe('webgpu');
    expectTrained(run, 40);
    expect(run.gpt.state).toBe('done');
    expect(run.gpt.losses).toHaveLength(36);
    expect(run.gpt.evals.map((e) => e.step)).toEqual([0, 18, 36]);
  });

  it('falls back to the cpu backend with ?device=cpu; Sample again draws another sample', async () => {
    let firstSample: string | null = null;
    const afterRun = async (tab: Page) => {
      firstSample = await tab.evaluate(() => (window as unknown as { __gpt: GptPage }).__gpt.sample);
      await tab.click('#sample-again');
      await runEnded(tab);
    };
    const run = await open(`${TINY}&device=cpu&amp=off`, { afterRun });
    expectTrained(run, 40); // the second sample's
    expect(firstSample).toMatch(/^CHAPTER 1/);
    expect(run.gpt.sample).not.toBe(firstSample);
    expect(run.gpt.device).toBe('cpu');
    expect(run.gpt.deviceReason).toMatch(/cpu requested/);
    expect(run.gpt.state).toBe('done');
    expect(run.gpt.losses).toHaveLength(36);
    expect(run.gpt.amp).toBe('off');
  });

  it('trains under the AMP switch: bf16 autocast on the cpu', async () => {
    const run = await open(`${TINY}&device=cpu&amp=bf16`);
    expectTrained(run, 40);
    expect(run.gpt.amp).toBe('bf16');
    expect(run.gpt.ampReason).toMatch(/bf16/);
  });

  it('refuses bad settings before training, naming the control or the character', async () => {
    const cases: [string, RegExp][] = [
      ['steps=0', /steps must be an integer ≥ 1, got '0'/],
      ['temperature=-1', /temperature must be a number > 0, got '-1'/],
      ['prompt=CHAPTER%20%E2%82%AC', /the character "€" at position 8 is not in the vocabulary/],
      ['heads=3', /nEmbd \(32\) must be a multiple of nHead \(3\)/],
    ];
    for (const [query, message] of cases) {
      // The first value of a repeated parameter wins: `query` before TINY overrides it.
      const { gpt, errors } = await open(`${query}&${TINY}&device=cpu`);
      expect(errors).toEqual([]);
      expect(gpt.state).toBe('error');
      expect(gpt.error).toMatch(message);
      expect(gpt.losses).toEqual([]);
    }
  });

  it('Stop ends the run after the step under way, with a last validation estimate and a sample', async () => {
    let stepsAtStop = -1;
    const whileRunning = async (tab: Page) => {
      await tab.waitForFunction(() => {
        const gpt = (window as unknown as { __gpt: GptPage }).__gpt;
        return gpt.losses.length >= 30 || gpt.state === 'error';
      }, null, { timeout: 300_000 });
      // Click Stop and read the steps taken in one task of the page, so that no step ends in between.
      stepsAtStop = await tab.evaluate(() => {
        document.getElementById('stop')!.click();
        return (window as unknown as { __gpt: GptPage }).__gpt.losses.length;
      });
    };
    const run = await open(`${TINY.replace('steps=36', 'steps=100000').replace('tokens=40', 'tokens=12')}&device=cpu&amp=off`, { whileRunning });
    expectTrained(run, 12);
    expect(run.gpt.state).toBe('stopped');
    expect(run.gpt.losses).toHaveLength(stepsAtStop + 1);
  });
});
