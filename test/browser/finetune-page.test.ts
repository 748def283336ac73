// examples/browser's fine-tuning page (finetune.html) end to end: build the example with Vite (its
// own config), serve dist/ with `vite preview` on 127.0.0.1, start the fake Hugging Face Hub of
// @core/hub's tests (another origin, with CORS headers, as the real Hub) serving a tiny GPT-2
// under 'tiny/gpt2', and fine-tune it in headless Chromium — on WebGPU (SwiftShader here; a
// missing adapter is a failure that prints the page's reason) and on the cpu backend with
// ?device=cpu — then once more from a folder of the page's own site. Each run must download the
// model through the page (the fake Hub's log), lower the training loss and the validation loss,
// and show a sample before and after; the page's script has no Node import.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitOf, FakeHub } from '../../packages/hub/test/helpers/fake-hub.js';
import { tinyGpt2RepoFiles } from '../../packages/models/test/helpers/tiny-gpt2-repo.js';
import { launchChromium } from './page.js';

const ROOT = fileURLToPath(new URL('../../examples/browser/', import.meta.url));
const REPO = 'tiny/gpt2';
const PROMPT = 'Call me';
/** 16 steps of 4 windows of 32 tokens on the first 6,000 characters of Moby Dick, 6 tokens sampled before and after. */
const TINY = `steps=16&batch=4&block=32&lr=0.01&warmup=2&eval=8&chars=6000&tokens=6&prompt=${encodeURIComponent(PROMPT)}&amp=off`;

interface FinetunePage {
  state: string;
  device: string | null;
  deviceReason: string;
  devices: { type: string; available: boolean; reason?: string }[];
  amp: string;
  model: { params: number; nPositions: number; vocabSize: number } | null;
  downloads: Record<string, number>;
  text: { chars: number; train: number; val: number } | null;
  losses: number[];
  evals: { step: number; valLoss: number; trainLoss: number }[];
  before: string | null;
  after: string | null;
  error: string | null;
}

interface Vite {
  build(config: object): Promise<unknown>;
  preview(config: object): Promise<{ resolvedUrls: { local: string[] } | null; close(): Promise<void> }>;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe('examples/browser: fine-tuning a pretrained GPT-2 in a page', () => {
  let outDir: string;
  let site: Awaited<ReturnType<Vite['preview']>>;
  let url: string;
  let browser: Browser;
  let hub: FakeHub;
  let files: Record<string, string | Uint8Array>;

  beforeAll(async () => {
    files = await tinyGpt2RepoFiles();
    const commit = commitOf('tiny-gpt2');
    hub = await FakeHub.start([{ id: REPO, commits: { [commit]: files }, refs: { main: commit } }]);
    outDir = mkdtempSync(join(tmpdir(), 'finetune-page-'));
    const vite = (await import(pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('vite')).href)) as Vite;
    const config = { root: ROOT, configFile: join(ROOT, 'vite.config.ts'), logLevel: 'warn', build: { outDir, emptyOutDir: true } };
    await vite.build(config);
    // The same model as a folder of the site, for the same-origin URL source.
    mkdirSync(join(outDir, 'tiny-gpt2'));
    for (const [name, content] of Object.entries(files)) writeFileSync(join(outDir, 'tiny-gpt2', name), content);
    site = await vite.preview({ ...config, preview: { host: '127.0.0.1', port: 0 } });
    url = site.resolvedUrls!.local[0]!;
    browser = await launchChromium(['--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader']);
  });
  afterAll(async () => {
    await browser?.close();
    await site?.close();
    await hub?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it("ships a page script with no Node import, built on @core/models' and @core/hub's browser builds", () => {
    const html = readFileSync(join(outDir, 'finetune.html'), 'utf8');
    const script = /src="\.\/assets\/(finetune-[^"]+\.js)"/.exec(html)?.[1];
    expect(script, 'finetune.html loads its script').toBeDefined();
    const scripts = readdirSync(join(outDir, 'assets')).filter((f) => f.endsWith('.js'));
    const bundle = scripts.map((f) => readFileSync(join(outDir, 'assets', f), 'utf8')).join('\n');
    // No static or dynamic import of a Node module (the cpu backend's Node worker source is a string, not an import).
    expect(bundle).not.toMatch(/from\s*["']node:|import\s*\(\s*["']node:/);
    expect(bundle).toContain('a page has no file system'); // @core/models' browser platform
    expect(bundle).toContain('core-hub'); // @core/hub's hubFile on the Cache API
  });

  /** Open the page with `query`, start it, wait for the run to end, and read its state; the Hub requests it made too. */
  async function open(query: string): Promise<{ page: FinetunePage; errors: string[]; hubPaths: string[]; chartPoints: number }> {
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (e) => errors.push(e.message));
    const requestsBefore = hub.requests.length;
    try {
      await tab.goto(`${url}finetune.html?${query}`);
      await tab.click('#start');
      await tab.waitForFunction(() => ['done', 'error', 'stopped'].includes((window as unknown as { __finetune: FinetunePage }).__finetune.state), null, { timeout: 300_000 });
      const page = await tab.evaluate(() => (window as unknown as { __finetune: FinetunePage }).__finetune);
      const chartPoints = await tab.evaluate(() => document.querySelector('#chart svg polyline')?.getAttribute('points')?.trim().split(/\s+/).length ?? 0);
      console.log(`[finetune page ${query}] ${page.device}: ${page.deviceReason}; ${page.model?.params} parameters; loss ${page.losses[0]?.toFixed(3)} → ` +
        `${page.losses.at(-1)?.toFixed(3)}, validation ${page.evals.map((e) => e.valLoss.toFixed(3)).join(' → ')}; before ${JSON.stringify(page.before)}, after ${JSON.stringify(page.after)}`);
      return { page, errors, hubPaths: hub.requests.slice(requestsBefore).filter((r) => r.server === 'hub').map((r) => r.path), chartPoints };
    } finally {
      await tab.close();
    }
  }

  /** What every finished run shows: no errors, the model, falling losses, the chart, and samples that continue the prompt. */
  function expectFineTuned({ page, errors, chartPoints }: Awaited<ReturnType<typeof open>>): void {
    expect(errors).toEqual([]);
    expect(page.error, 'the page failed').toBeNull();
    expect(page.state).toBe('done');
    expect(page.model).toMatchObject({ nPositions: 64, vocabSize: JSON.parse(files['config.json'] as string).vocab_size });
    expect(page.text).toMatchObject({ chars: 6000 });
    const losses = page.losses;
    expect(losses).toHaveLength(16);
    expect(losses.every(Number.isFinite)).toBe(true);
    expect(mean(losses.slice(-4))).toBeLessThan(0.9 * losses[0]!);
    expect(page.evals.map((e) => e.step)).toEqual([0, 8, 16]);
    expect(page.evals.at(-1)!.valLoss).toBeLessThan(page.evals[0]!.valLoss);
    expect(chartPoints).toBe(losses.length);
    for (const sample of [page.before, page.after]) {
      expect(sample!.startsWith(PROMPT)).toBe(true);
      expect(sample!.length).toBeGreaterThan(PROMPT.length);
    }
  }

  /** The run downloaded the model's files from the fake Hub through the page (hubFile: the API for the commit, then each file). */
  function expectDownloaded({ page, hubPaths }: Awaited<ReturnType<typeof open>>): void {
    expect(hubPaths.some((p) => p.startsWith(`/api/models/${REPO}/revision/main`))).toBe(true);
    for (const name of ['config.json', 'model.safetensors', 'tokenizer.json']) {
      expect(hubPaths.some((p) => p.startsWith(`/${REPO}/resolve/`) && p.endsWith(`/${name}`)), `downloaded ${name}`).toBe(true);
    }
    expect(page.downloads['model.safetensors']).toBe((files['model.safetensors'] as Uint8Array).length);
  }

  it('fine-tunes on WebGPU: downloads the model from the Hub, falling training and validation loss, samples before and after', async () => {
    const run = await open(`${TINY}&endpoint=${encodeURIComponent(hub.endpoint)}&model=${REPO}&device=webgpu`);
    const gpu = run.page.devices.find((d) => d.type === 'webgpu');
    expect(run.page.device, `WebGPU missing in headless Chromium — page says: ${run.page.deviceReason} (webgpu: ${gpu?.reason ?? 'not listed'})`).toBe('webgpu');
    expectFineTuned(run);
    expectDownloaded(run);
  });

  it('fine-tunes on the cpu backend with ?device=cpu', async () => {
    const run = await open(`${TINY}&endpoint=${encodeURIComponent(hub.endpoint)}&model=${REPO}&device=cpu`);
    expect(run.page.device).toBe('cpu');
    expectFineTuned(run);
    expectDownloaded(run);
  });

  it('fine-tunes under the AMP switch: bf16 autocast on the cpu', async () => {
    const run = await open(`amp=bf16&${TINY}&endpoint=${encodeURIComponent(hub.endpoint)}&model=${REPO}&device=cpu`);
    expectFineTuned(run);
    expect(run.page.amp).toBe('bf16');
  });

  it('loads the model from a folder of its own site, with no Hub request', async () => {
    const run = await open(`${TINY}&endpoint=${encodeURIComponent(hub.endpoint)}&model=./tiny-gpt2/&device=cpu`);
    expectFineTuned(run);
    expect(run.hubPaths).toEqual([]);
    expect(run.page.downloads).toEqual({});
  });

  it('says what is wrong, before training: a repo the Hub lacks, a local folder path, a block longer than the context', async () => {
    const cases: [string, RegExp][] = [
      [`model=tiny/missing&endpoint=${encodeURIComponent(hub.endpoint)}`, /tiny\/missing/],
      ['model=C:\\models\\gpt2', /is a local folder: a page has no file system/],
      [`block=65&model=${REPO}&endpoint=${encodeURIComponent(hub.endpoint)}`, /block 65 is longer than the model's context of 64 tokens/],
    ];
    for (const [query, message] of cases) {
      // The first value of a repeated parameter wins: `query` before TINY overrides it.
      const { page, errors } = await open(`${query}&${TINY}&device=cpu`);
      expect(errors).toEqual([]);
      expect(page.state).toBe('error');
      expect(page.error).toMatch(message);
      expect(page.losses).toEqual([]);
    }
  });
});
