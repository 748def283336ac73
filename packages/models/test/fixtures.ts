// The tiny parity fixtures written by PyTorch 1.13 (scripts/make_{gpt2,llama,bert}_fixture.py, Hugging
// Face's names and math, random weights): their folders and expected values, shared by the models'
// tests here, and `deviceParityChecks`, which runs each fixture's model on a device and measures it
// against PyTorch — used by the device tests of the webgpu and cuda backends (the cuda one in a
// child process, so this module keeps to what plain Node can run once its types are stripped).
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { F, nn } from '@core/nn';
import { AdamW, type AdamOptions } from '@core/optim';
import { cat, int32, tensor, type Tensor } from '@core/tensor';
import { BertForMaskedLM, BertModel, generate, GPT2LMHeadModel, KVCache, LlamaForCausalLM, type CausalLM } from '../src/index.js';

/** The folder of fixture `name` under test/fixtures (config.json, model.safetensors, expected values). */
export const fixtureDir = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/** gpt2-tiny: config.json and model.safetensors as GPT2LMHeadModel.state_dict() names them. */
export const GPT2_TINY = fixtureDir('gpt2-tiny');
/** gpt2-tiny-hub: the same weights as the Hub's GPT-2 files hold them (no `transformer.` prefix, no lm_head, mask buffers). */
export const GPT2_TINY_HUB = fixtureDir('gpt2-tiny-hub');

/** A fixture's expected.safetensors, by key (see the script that wrote it). */
export async function loadExpected(name: string): Promise<Record<string, Tensor>> {
  return nn.loadSafetensors(`${fixtureDir(name)}/expected.safetensors`);
}

/** gpt2-tiny's expected.json. */
export interface GPT2Expected {
  /** [2, 10]: the input of `logits` and of the loss. */
  readonly inputIds: number[][];
  /** [2, 8]: the prompt of `generated`. */
  readonly prompt: number[][];
  /** [2, 32]: the greedy continuation of `prompt` (no cache, argmax of float64 logits, every top-2 gap > 1e-3). */
  readonly generated: number[][];
  /** The AdamW step of `adamw.*` (torch.optim.AdamW after one backward of `loss`). */
  readonly adamw: { readonly lr: number; readonly betas: [number, number]; readonly eps: number; readonly weightDecay: number };
  /** Next-token cross entropy of `inputIds` (mean over positions 0..8 predicting 1..9), eval mode. */
  readonly loss: number;
}

/**
 * gpt2-tiny's expected.json and expected.safetensors: `logits` [2, 10, 64] of `inputIds`;
 * `logits_fp32_torch` and `logits_bf16_torch` (PyTorch's float32 run and its CPU bf16-autocast run);
 * `grad.<name>` the loss's gradients and `adamw.<name>` the weights after one AdamW step, by state-dict name.
 */
export async function loadGPT2Expected(): Promise<{ json: GPT2Expected; tensors: Record<string, Tensor> }> {
  const json = JSON.parse(await readFile(`${GPT2_TINY}/expected.json`, 'utf8')) as GPT2Expected;
  return { json, tensors: await loadExpected('gpt2-tiny') };
}

/** max |a − b| over all elements, read on the host (a and b may live on different devices); shapes must agree. */
export async function maxAbsDiff(a: Tensor, b: Tensor): Promise<number> {
  if (a.shape.join() !== b.shape.join()) throw new Error(`maxAbsDiff: shapes differ, [${a.shape.join(', ')}] vs [${b.shape.join(', ')}]`);
  const [x, y] = await Promise.all([a.toAsync('cpu'), b.toAsync('cpu')]);
  return (await x.float().sub(y.float()).abs().max().item()) as number;
}

/** One measurement of a device run: a largest difference that must be under `tol`, or a value that must equal `expected`. */
export type ParityCheck =
  | { readonly what: string; readonly diff: number; readonly tol: number }
  | { readonly what: string; readonly actual: unknown; readonly expected: unknown };

/** The fixtures `deviceParityChecks` knows. */
export const PARITY_FIXTURES = ['gpt2-tiny', 'llama-tiny', 'llama-tiny-tied', 'bert-tiny'] as const;

/** A fixture of `PARITY_FIXTURES`. */
export type ParityFixture = (typeof PARITY_FIXTURES)[number];

type Decoder = CausalLM & nn.Module;

/** What a training step is checked against: PyTorch's loss, every gradient, and (where the fixture has them) the weights after one AdamW step. */
interface TrainingReference {
  /** The loss of `logits` for the fixture's input. */
  readonly loss: (logits: Tensor, inputIds: Tensor) => Tensor;
  readonly expectedLoss: number;
  /** AdamW's hyperparameters as the fixture's script stepped with them; absent when the fixture has no `adamw.*` weights. */
  readonly adamw?: Partial<AdamOptions>;
}

/** Next-token cross entropy: positions 0..T−2 predicting 1..T−1 (GPT-2's and Llama's fixtures). */
function nextTokenLoss(logits: Tensor, inputIds: Tensor): Tensor {
  const [, T, V] = logits.shape as [number, number, number];
  return F.crossEntropy(logits.narrow(1, 0, T - 1).reshape([-1, V]), inputIds.narrow(1, 1, T - 1).reshape([-1]));
}

/**
 * Runs fixture `name`'s model on `device` in float32 and measures it against PyTorch's values, at
 * the tolerances of the cpu tests: the outputs of the fixture's input (decoders: also fed in pieces
 * through a `KVCache`; BERT: the padded batch with its attention mask), greedy generation of 32
 * tokens with and without the cache (decoders), and a training step — the loss, every parameter's
 * gradient and, where the fixture holds them, the weights after one `AdamW` step with the script's
 * hyperparameters. The caller asserts each check.
 */
export async function deviceParityChecks(name: ParityFixture, device: string): Promise<ParityCheck[]> {
  const dir = fixtureDir(name);
  const e = await loadExpected(name);
  const checks: ParityCheck[] = [];
  const onDevice = (t: Tensor): Tensor => t.to(device);
  const deviceOf = (what: string, t: Tensor): void => {
    checks.push({ what: `${what} device`, actual: t.device.type, expected: device.split(':')[0] });
  };

  if (name === 'bert-tiny') {
    const [ids, attentionMask, tokenTypeIds] = [e.input_ids!, e.attention_mask!, e.token_type_ids!].map(onDevice) as [Tensor, Tensor, Tensor];
    const bert = await BertModel.fromPretrained(dir, { device });
    const { lastHiddenState, poolerOutput } = bert.forward(ids, { attentionMask, tokenTypeIds });
    deviceOf('last_hidden_state', lastHiddenState);
    checks.push(await closeCheck('last_hidden_state', lastHiddenState, e.last_hidden_state!, 1e-5));
    checks.push(await closeCheck('pooler_output', poolerOutput!, e.pooler_output!, 1e-5));
    const mlm = await BertForMaskedLM.fromPretrained(dir, { device });
    const logits = mlm.forward(ids, { attentionMask, tokenTypeIds });
    checks.push(await closeCheck('logits', logits, e.logits!, 1e-5));
    checks.push(await closeCheck('logits vs float64', logits, e.logits_f64!, 2 * (await maxAbsDiff(e.logits!, e.logits_f64!)) + 1e-6));
    // Masked-LM cross entropy over the real tokens: padding is ignored through label -100.
    const maskedLMLoss = (l: Tensor, input: Tensor): Tensor =>
      F.crossEntropy(l.reshape([-1, l.shape[2]!]), input.where(attentionMask.gt(0), -100).reshape([-1]));
    checks.push(...await trainingChecks(mlm, logits, ids, e, { loss: maskedLMLoss, expectedLoss: (await e.loss!.item()) as number }));
    return checks;
  }

  // The decoders: GPT-2's expected values are partly in expected.json; Llama's all in expected.safetensors.
  const gpt2 = name === 'gpt2-tiny' ? (await loadGPT2Expected()).json : undefined;
  const model: Decoder = gpt2 ? await GPT2LMHeadModel.fromPretrained(dir, { device }) : await LlamaForCausalLM.fromPretrained(dir, { device });
  const ids = onDevice(gpt2 ? tensor(gpt2.inputIds, { dtype: int32 }) : e.input_ids!);
  const logits = model.forward(ids);
  deviceOf('logits', logits);
  // GPT-2's `logits` are a float64 run. Llama's are PyTorch's float32 run, with `logits_f64` beside it:
  // llama-tiny-tied is within 2e-5 of the float32 run, as on the cpu (float32 rounding that PyTorch
  // shares, hence also the float64 check). llama-tiny is held to 1e-5 of the float64 run: PyTorch's
  // float32 run is itself 1.2e-5 from it, and the devices' results are closer to it than that
  // (measured: webgpu 7.3e-6 from float64 and 1.1e-5 from PyTorch's float32; cuda 5.6e-6 and 1.35e-5).
  const reference = name === 'llama-tiny' ? e.logits_f64! : e.logits!;
  const tol = name === 'llama-tiny-tied' ? 2e-5 : 1e-5;
  checks.push(await closeCheck('logits', logits, reference, tol));
  if (e.logits_f64) checks.push(await closeCheck('logits vs float64', logits, e.logits_f64, 2 * (await maxAbsDiff(e.logits!, e.logits_f64))));
  // Prefill, one token, several tokens (a bottom-right causal mask), one token.
  const T = ids.shape[1]!;
  const cache = new KVCache(model.numLayers);
  const pieces = [[0, 3], [3, 1], [4, T - 5], [T - 1, 1]].map(([start, length]) => model.forward(ids.narrow(1, start!, length!), { cache }));
  checks.push(await closeCheck('logits through the KV cache', cat(pieces, 1), reference, tol));

  const prompt = onDevice(gpt2 ? tensor(gpt2.prompt, { dtype: int32 }) : e.prompt!);
  const expectedTokens = gpt2 ? gpt2.prompt.map((row, i) => [...row, ...gpt2.generated[i]!]) : await e.greedy!.toArray();
  for (const useCache of [true, false]) {
    const tokens = await generate(model, prompt, { maxNewTokens: 32, useCache });
    deviceOf(`generated (useCache ${useCache})`, tokens);
    checks.push({ what: `32 greedy tokens (useCache ${useCache})`, actual: await tokens.toArray(), expected: expectedTokens });
  }

  if (gpt2) {
    checks.push(...await trainingChecks(model, model.forward(ids), ids, e, { loss: nextTokenLoss, expectedLoss: gpt2.loss, adamw: gpt2.adamw }));
  } else if (e.loss) {
    // make_llama_fixture.py: train mode, torch.optim.AdamW(model.parameters(), lr=1e-2) with its defaults otherwise.
    model.train();
    checks.push(...await trainingChecks(model, model.forward(ids), ids, e, { loss: nextTokenLoss, expectedLoss: (await e.loss.item()) as number, adamw: { lr: 1e-2 } }));
  }
  return checks;
}

/** A check that `actual` is within `tol` of `expected` everywhere. */
async function closeCheck(what: string, actual: Tensor, expected: Tensor, tol: number): Promise<ParityCheck> {
  return { what, diff: await maxAbsDiff(actual, expected), tol };
}

/** The loss of `logits`, then every parameter's gradient against `grad.<name>`, then one AdamW step against `adamw.<name>`. */
async function trainingChecks(model: nn.Module, logits: Tensor, inputIds: Tensor, e: Record<string, Tensor>, ref: TrainingReference): Promise<ParityCheck[]> {
  const loss = ref.loss(logits, inputIds);
  const checks: ParityCheck[] = [{ what: 'loss', diff: Math.abs(((await loss.item()) as number) - ref.expectedLoss), tol: 1e-5 }];
  loss.backward();
  for (const [key, p] of model.namedParameters()) {
    const expected = e[`grad.${key}`];
    if (!expected) throw new Error(`the fixture has no gradient of ${key}`);
    if (!p.grad) throw new Error(`${key} has no gradient after backward()`);
    checks.push(await closeCheck(`grad.${key}`, p.grad, expected, 1e-5));
  }
  if (!ref.adamw) return checks;
  new AdamW(model.parameters(), ref.adamw).step();
  const state = model.stateDict();
  const stepped = Object.keys(e).filter((k) => k.startsWith('adamw.'));
  if (stepped.length === 0) throw new Error('the fixture has no adamw.* weights');
  for (const key of stepped) checks.push(await closeCheck(key, state[key.slice('adamw.'.length)]!, e[key]!, 1e-5));
  return checks;
}
