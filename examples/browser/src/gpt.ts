// The GPT page: the character-level GPT of `demo:gpt` — the same model, training loop (AdamW with
// decay/no-decay groups, warmup then cosine learning rate, gradient clipping, the AMP switch) and
// sampler, imported from examples/gpt's sources — trained here on the start of Moby Dick that the
// build packed (text-asset.ts), drawing the loss chart after every step and the validation loss at
// every estimate, then sampling with the temperature and top-k of the controls. Query parameters
// prefill the controls: ?steps=36&batch=8&block=32&layers=1&heads=2&embd=32&lr=0.01&warmup=4
// &eval=18&device=cpu&amp=off&prompt=CHAPTER%201&tokens=60&temperature=0.8&topk=20&seed=0
// (&autostart=1 starts at once). The run's state is mirrored on `window.__gpt` for tests.
import '@core/backend-cpu';
import '@core/backend-webgpu';
import { ampConfig, Generator, type AmpMode } from '@core/tensor';
import url, { bookChars, bytes } from 'virtual:moby-dick';
import { renderLossChart } from '../../common/src/loss-chart';
import { trainOn, type EvalRecord, type TrainSettings } from '../../gpt/src/loop';
import type { GPT } from '../../gpt/src/model';
import { generate } from '../../gpt/src/sample';
import { CharVocab, splitTokens, unigramEntropy } from '../../gpt/src/vocab';
import { byId, fetchGzipped, idleRecord, PageFrame, trainingHooks, type NumberKind, type RunRecord } from './page';

interface GptState extends RunRecord {
  config: (TrainSettings & { device: string }) | null;
  /** The text the page trains on: its length, the whole book's, its vocabulary and the split. */
  text: { chars: number; bookChars: number; vocab: string; train: number; val: number; baseline: number } | null;
  /** Parameters of the model, counted as nanoGPT counts them. */
  params: number;
  losses: number[];
  evals: EvalRecord[];
  /** The last sample: the prompt and the characters drawn after it. */
  sample: string | null;
  /** Seconds the training steps took. */
  seconds: number;
}

const gpt: GptState = { ...idleRecord(), config: null, text: null, params: 0, losses: [], evals: [], sample: null, seconds: 0 };
(window as unknown as { __gpt: GptState }).__gpt = gpt;

const controls = {
  device: byId<HTMLSelectElement>('device-select'), amp: byId<HTMLSelectElement>('amp'), steps: byId<HTMLInputElement>('steps'),
  batch: byId<HTMLInputElement>('batch'), block: byId<HTMLInputElement>('block'), layers: byId<HTMLInputElement>('layers'),
  heads: byId<HTMLInputElement>('heads'), embd: byId<HTMLInputElement>('embd'), lr: byId<HTMLInputElement>('lr'),
  warmup: byId<HTMLInputElement>('warmup'), eval: byId<HTMLInputElement>('eval'), prompt: byId<HTMLInputElement>('prompt'),
  tokens: byId<HTMLInputElement>('tokens'), temperature: byId<HTMLInputElement>('temperature'), topk: byId<HTMLInputElement>('topk'),
};
type ControlKey = keyof typeof controls;
const page = new PageFrame(gpt, controls);
const chartHost = byId('chart');
const sampleBox = byId('sample');
const textInfo = byId('text-info');
const sampleAgain = byId<HTMLButtonElement>('sample-again');
const seed = Number(page.params.get('seed') ?? 0);

/** The number in control `key`, or an error naming the control and what it must hold. */
const readNumber = (key: ControlKey, kind?: NumberKind): number => page.number(key, kind);

/** The training settings of the controls: demo:gpt's, with the sizes, steps and learning rate the controls give. */
function trainSettings(): TrainSettings & { device: string } {
  const lr = readNumber('lr', 'number > 0');
  return {
    device: controls.device.value,
    model: { blockSize: readNumber('block'), nLayer: readNumber('layers'), nHead: readNumber('heads'), nEmbd: readNumber('embd'), dropout: 0, bias: true },
    amp: controls.amp.value as AmpMode,
    seed,
    steps: readNumber('steps'),
    batchSize: readNumber('batch'),
    lr,
    minLr: lr / 10,
    warmupSteps: readNumber('warmup', 'integer ≥ 0'),
    weightDecay: 0.1,
    betas: [0.9, 0.99],
    gradClip: 1,
    evalInterval: readNumber('eval'),
    evalBatches: 8,
  };
}

/** The sampling controls; the prompt as token ids, an error naming a character the text lacks. */
function sampleSettings(vocab: CharVocab): { prompt: Int32Array; maxNewTokens: number; temperature: number; topK: number } {
  return {
    prompt: vocab.encode(controls.prompt.value),
    maxNewTokens: readNumber('tokens'),
    temperature: readNumber('temperature', 'number > 0'),
    topK: readNumber('topk'),
  };
}

let textPromise: Promise<string> | null = null;
const loadText = async () => new TextDecoder().decode(await fetchGzipped(url, bytes, 'the text'));

/** The trained model, its vocabulary and the generator its samples draw from (one after another, each new). */
let trained: { model: GPT; vocab: CharVocab; generator: Generator } | null = null;
let stop: AbortController | null = null;

/** Draw a sample from the trained model with the sampling controls' settings and show it. */
async function sample(): Promise<void> {
  const { model, vocab, generator } = trained!;
  const { prompt, ...options } = sampleSettings(vocab);
  sampleAgain.disabled = true;
  page.setState('sampling', `sampling ${options.maxNewTokens} characters (temperature ${options.temperature}, top-k ${options.topK})…`);
  try {
    gpt.sample = vocab.decode(await generate(model, prompt, { ...options, generator }));
    sampleBox.textContent = gpt.sample;
  } finally {
    sampleAgain.disabled = false;
  }
}

async function run(): Promise<void> {
  stop = new AbortController();
  trained = null;
  sampleAgain.disabled = true;
  Object.assign(gpt, { config: null, params: 0, losses: [], evals: [], sample: null, error: null, seconds: 0 });
  sampleBox.textContent = '';
  try {
    const config = trainSettings();
    gpt.config = config;
    page.setState('loading', 'choosing the device…');
    const dev = await page.useDevice(config.device);

    page.setState('loading', 'loading the text…');
    textPromise ??= loadText();
    const text = await textPromise;
    const vocab = CharVocab.of(text);
    sampleSettings(vocab); // a bad prompt or sampling setting is an error now, not after training
    const tokens = splitTokens(vocab.encode(text));
    const baseline = unigramEntropy(tokens.val);
    gpt.text = { chars: text.length, bookChars, vocab: vocab.chars.join(''), train: tokens.train.length, val: tokens.val.length, baseline };
    textInfo.textContent = `Moby Dick, its first ${text.length.toLocaleString('en')} of ${bookChars.toLocaleString('en')} characters (${(bytes / 1024).toFixed(0)} KiB): ` +
      `a vocabulary of ${vocab.size}, ${tokens.train.length.toLocaleString('en')} characters to train on, ${tokens.val.length.toLocaleString('en')} to validate; ` +
      `unigram baseline ${baseline.toFixed(3)} nats per character.`;
    const draw = () => { chartHost.innerHTML = renderLossChart({ stepLosses: gpt.losses, evals: gpt.evals, baseline }); };
    draw();

    const amp = ampConfig(dev, config.amp);
    page.showAmp(amp.mode, amp.reason);
    page.setState('running', `training on ${dev}…`);
    const result = await trainOn(dev, config, { vocabSize: vocab.size, ...tokens }, trainingHooks(page, gpt, draw, stop.signal));
    if (result.amp !== amp.mode) page.showAmp(amp.mode, amp.reason, result.amp);
    gpt.params = result.model.numParams();
    gpt.seconds = result.trainSeconds;
    const finalVal = result.evals.at(-1)!.valLoss;
    const summary = `${result.stepLosses.length} steps of ${gpt.params.toLocaleString('en')} parameters in ${result.trainSeconds.toFixed(1)} s on ${dev} ` +
      `(amp ${result.amp}${result.skippedSteps ? `, ${result.skippedSteps} skipped` : ''}) · final loss ${result.stepLosses.at(-1)!.toFixed(4)} · ` +
      `validation loss ${finalVal.toFixed(4)} against the unigram baseline's ${baseline.toFixed(4)}`;
    page.log(summary);

    trained = { model: result.model, vocab, generator: new Generator(config.seed) };
    await sample();
    const outcome = stop.signal.aborted ? 'stopped' : 'done';
    page.setState(outcome, `${outcome}: ${summary}`);
  } catch (e) {
    page.fail(e);
  }
}

sampleAgain.addEventListener('click', () => {
  sample().then(() => page.setState('done', 'done: a new sample'), (e: unknown) => page.fail(e));
});
page.onStartStop(run, () => stop?.abort());
if (page.params.get('autostart') === '1') void run();
