// The fine-tuning page: a pretrained GPT-2 and its tokenizer from the Hugging Face Hub (through
// @core/models' browser build: hubFile keeps the files in the Cache API) or from a URL of this
// site, fine-tuned on a pasted text (or the start of Moby Dick the build packed) with the training
// loop of demo:gpt and demo:finetune (examples/gpt/src/loop.ts: AdamW, warmup then cosine learning
// rate, gradient clipping, the AMP switch) on WebGPU or the cpu backend, drawing the loss chart as
// it goes, with a sample before and after. Query parameters prefill the controls:
// ?model=openai-community/gpt2&endpoint=https://huggingface.co&device=cpu&amp=off&steps=40&batch=4
// &block=128&lr=0.0001&warmup=4&eval=10&chars=60000&text=…&prompt=Call%20me&tokens=40
// &temperature=0.8&topk=40&seed=0 (&autostart=1 starts at once). The run's state is mirrored on
// `window.__finetune` for tests.
import '@core/backend-cpu';
import '@core/backend-webgpu';
import type { DownloadProgress } from '@core/hub';
import { GPT2LMHeadModel, modelFiles, Tokenizer, type ModelFiles } from '@core/models';
import { ampConfig, manualSeed, type AmpMode } from '@core/tensor';
import url, { bytes } from 'virtual:moby-dick';
import { renderLossChart } from '../../common/src/loss-chart';
import { fitLanguageModel, type EvalRecord, type FitSettings } from '../../gpt/src/loop';
import { splitTokens } from '../../gpt/src/vocab';
import { gpt2LanguageModel, sampleText } from '../../finetune-gpt2/src/gpt2-task';
import { byId, fetchGzipped, idleRecord, PageFrame, trainingHooks, type RunRecord } from './page';

interface FinetuneState extends RunRecord {
  config: (FitSettings & { model: string; endpoint: string; blockSize: number; device: string }) | null;
  /** The model loaded: its parameters, context and vocabulary. */
  model: { params: number; nPositions: number; vocabSize: number } | null;
  /** Bytes of each file downloaded from the Hub in this run (files the Cache API had are not downloaded again). */
  downloads: Record<string, number>;
  /** The text fine-tuned on: characters, and tokens to train on and to validate on. */
  text: { chars: number; train: number; val: number } | null;
  losses: number[];
  evals: EvalRecord[];
  /** Samples from the prompt before and after fine-tuning. */
  before: string | null;
  after: string | null;
  /** Seconds the training steps took. */
  seconds: number;
}

const state: FinetuneState = {
  ...idleRecord(), config: null, model: null, downloads: {}, text: null, losses: [], evals: [], before: null, after: null, seconds: 0,
};
(window as unknown as { __finetune: FinetuneState }).__finetune = state;

const controls = {
  model: byId<HTMLInputElement>('model'), endpoint: byId<HTMLInputElement>('endpoint'), device: byId<HTMLSelectElement>('device-select'),
  amp: byId<HTMLSelectElement>('amp'), steps: byId<HTMLInputElement>('steps'), batch: byId<HTMLInputElement>('batch'),
  block: byId<HTMLInputElement>('block'), lr: byId<HTMLInputElement>('lr'), warmup: byId<HTMLInputElement>('warmup'),
  eval: byId<HTMLInputElement>('eval'), text: byId<HTMLTextAreaElement>('text'), chars: byId<HTMLInputElement>('chars'),
  prompt: byId<HTMLInputElement>('prompt'), tokens: byId<HTMLInputElement>('tokens'), temperature: byId<HTMLInputElement>('temperature'),
  topk: byId<HTMLInputElement>('topk'),
};
const page = new PageFrame(state, controls);
const seed = Number(page.params.get('seed') ?? 0);
const chartHost = byId('chart');
const downloadInfo = byId('download');
const textInfo = byId('text-info');
const beforeBox = byId('before');
const afterBox = byId('after');

/** The training settings of the controls: demo:finetune's, with the sizes, steps and learning rate the controls give. */
function settings(): NonNullable<FinetuneState['config']> {
  const lr = page.number('lr', 'number > 0');
  return {
    model: controls.model.value.trim(),
    endpoint: controls.endpoint.value.trim(),
    device: controls.device.value,
    amp: controls.amp.value as AmpMode,
    seed,
    steps: page.number('steps'),
    batchSize: page.number('batch'),
    blockSize: page.number('block'),
    lr,
    minLr: lr / 10,
    warmupSteps: page.number('warmup', 'integer ≥ 0'),
    weightDecay: 0.1,
    betas: [0.9, 0.95],
    gradClip: 1,
    evalInterval: page.number('eval'),
    evalBatches: 4,
  };
}

/** A model folder on this site, file by file with fetch; 404 is a file the folder lacks. */
function siteFiles(base: string): ModelFiles {
  const root = new URL(base.endsWith('/') ? base : `${base}/`, location.href);
  if (root.origin !== location.origin) throw new Error(`model: ${base} is on another site (${root.origin}); give a URL of this one (${location.origin}) or a Hub repo id`);
  return modelFiles((name) => new URL(name, root).href, async (name) => {
    const response = await fetch(new URL(name, root));
    if (response.status === 404) return undefined;
    if (!response.ok) throw new Error(`could not load ${response.url}: HTTP ${response.status}`);
    return response.blob();
  });
}

/** Whether the model control names a folder of this site (a path or URL) rather than a Hub repo. */
const isSiteUrl = (model: string) => /^(\.{0,2}\/|https?:)/.test(model);

/** Download progress from the Hub, recorded and shown as it arrives. */
function onProgress({ file, loaded, total }: DownloadProgress): void {
  state.downloads[file] = loaded;
  downloadInfo.textContent = `downloading ${file}: ${(loaded / 2 ** 20).toFixed(1)}${total ? ` of ${(total / 2 ** 20).toFixed(1)}` : ''} MiB`;
}

let mobyDick: Promise<string> | null = null;

/** The text to fine-tune on: the text box's, else the start of Moby Dick; its first `chars` characters (0: all). */
async function fineTuningText(): Promise<string> {
  const chars = page.number('chars', 'integer ≥ 0');
  const pasted = controls.text.value;
  mobyDick ??= fetchGzipped(url, bytes, 'the text').then((b) => new TextDecoder().decode(b));
  const text = pasted.trim() === '' ? await mobyDick : pasted;
  return chars === 0 ? text : text.slice(0, chars);
}

/** The prompt control continued by the sampling controls' number of tokens, drawn with their temperature and top-k (seeded), decoded. */
function sample(model: GPT2LMHeadModel, tokenizer: Tokenizer): Promise<string> {
  return sampleText(model, tokenizer, controls.prompt.value, {
    maxNewTokens: page.number('tokens'), temperature: page.number('temperature', 'number > 0'), topK: page.number('topk'), seed,
  });
}

let stop: AbortController | null = null;

async function run(): Promise<void> {
  stop = new AbortController();
  Object.assign(state, { config: null, model: null, downloads: {}, text: null, losses: [], evals: [], before: null, after: null, error: null, seconds: 0 });
  for (const box of [beforeBox, afterBox, chartHost, downloadInfo, textInfo]) box.textContent = '';
  try {
    const config = settings();
    state.config = config;
    page.setState('loading', 'choosing the device…');
    const dev = await page.useDevice(config.device);

    page.setState('loading', `loading ${config.model}…`);
    // A repo id goes to fromPretrained as it is: @core/models' browser build downloads it through hubFile into the Cache API.
    const source = isSiteUrl(config.model) ? siteFiles(config.model) : config.model;
    const hub = { endpoint: config.endpoint, onProgress };
    manualSeed(config.seed);
    const model = await GPT2LMHeadModel.fromPretrained(source, { device: dev, ...hub });
    const tokenizer = await Tokenizer.fromPretrained(source, hub);
    const params = model.parameters().reduce((n, p) => n + p.numel(), 0);
    state.model = { params, nPositions: model.config.nPositions, vocabSize: model.config.vocabSize };
    const downloaded = Object.values(state.downloads).reduce((a, b) => a + b, 0);
    downloadInfo.textContent = `${config.model}: ${params.toLocaleString('en')} parameters, a context of ${model.config.nPositions} tokens` +
      (downloaded ? ` (downloaded ${(downloaded / 2 ** 20).toFixed(1)} MiB)` : '');
    if (config.blockSize > model.config.nPositions) {
      throw new Error(`block ${config.blockSize} is longer than the model's context of ${model.config.nPositions} tokens`);
    }

    page.setState('loading', 'tokenizing the text…');
    const text = await fineTuningText();
    const split = splitTokens(Int32Array.from(tokenizer.encode(text)));
    for (const [name, part] of [['training', split.train], ['validation', split.val]] as const) {
      if (part.length <= config.blockSize) {
        throw new Error(`the text's ${name} part has ${part.length} tokens: it needs more than block (${config.blockSize}); give a longer text or a shorter block`);
      }
    }
    state.text = { chars: text.length, train: split.train.length, val: split.val.length };
    textInfo.textContent = `${text.length.toLocaleString('en')} characters: ${split.train.length.toLocaleString('en')} tokens to train on, ${split.val.length.toLocaleString('en')} to validate.`;

    page.setState('sampling', 'sampling before fine-tuning…');
    state.before = await sample(model, tokenizer);
    beforeBox.textContent = state.before;

    const draw = () => {
      chartHost.innerHTML = renderLossChart({ stepLosses: state.losses, evals: state.evals, baseline: state.evals[0]!.valLoss, baselineLabel: 'before fine-tuning' });
    };
    const amp = ampConfig(dev, config.amp);
    page.showAmp(amp.mode, amp.reason);
    page.setState('running', `fine-tuning on ${dev}…`);
    model.train();
    const lm = gpt2LanguageModel(model, config.blockSize);
    const result = await fitLanguageModel(lm, dev, config, { vocabSize: model.config.vocabSize, ...split }, trainingHooks(page, state, draw, stop.signal));
    if (result.amp !== amp.mode) page.showAmp(amp.mode, amp.reason, result.amp);
    state.seconds = result.trainSeconds;
    const summary = `${result.stepLosses.length} steps in ${result.trainSeconds.toFixed(1)} s on ${dev} (amp ${result.amp}` +
      `${result.skippedSteps ? `, ${result.skippedSteps} skipped` : ''}) · validation loss ${result.evals[0]!.valLoss.toFixed(4)} → ${result.evals.at(-1)!.valLoss.toFixed(4)} nats per token`;
    page.log(summary);

    page.setState('sampling', 'sampling after fine-tuning…');
    state.after = await sample(model, tokenizer);
    afterBox.textContent = state.after;
    const outcome = stop.signal.aborted ? 'stopped' : 'done';
    page.setState(outcome, `${outcome}: ${summary}`);
  } catch (e) {
    page.fail(e);
  }
}

page.onStartStop(run, () => stop?.abort());
if (page.params.get('autostart') === '1') void run();
