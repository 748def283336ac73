// State-dict keys are PyTorch's: every built-in layer's `stateDict()` keys equal torch 1.13's
// `state_dict().keys()` (in order), PyTorch 1.13 state dicts load unchanged and give PyTorch's
// outputs, the keys @core/nn 0.1.0 saved (camelCase field names) still load, and the mechanism
// behind it: a class's static `registeredNames` (field → registered name).
import '@core/backend-cpu';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bool, float64, int32, ones, randn, tensor, TensorError, zeros, type Tensor } from '@core/tensor';
import { nn } from '../src/index.js';
import { expectClose, values } from './helpers.js';

// ---- every layer's keys against torch 1.13 ----

/**
 * [torch 1.13 expression e, the same module here, list(e.state_dict().keys())]. The key lists were
 * produced by evaluating each expression in Python with
 *   import torch, torch.nn as nn; from torch.nn.utils import weight_norm, spectral_norm
 *   print(list(eval(e).state_dict().keys()))
 * Layers without parameters or buffers (activations, pooling, dropout, losses without weights)
 * have none in either library.
 */
const TORCH_KEYS: Array<[string, () => nn.AnyModule, string[]]> = [
  ["nn.Linear(3, 2)", () => new nn.Linear(3, 2), ['weight', 'bias']],
  ["nn.Linear(3, 2, bias=False)", () => new nn.Linear(3, 2, false), ['weight']],
  ["nn.Conv1d(2, 3, 2)", () => new nn.Conv1d(2, 3, 2), ['weight', 'bias']],
  ["nn.Conv2d(2, 3, 2)", () => new nn.Conv2d(2, 3, 2), ['weight', 'bias']],
  ["nn.ConvTranspose1d(2, 3, 2)", () => new nn.ConvTranspose1d(2, 3, 2), ['weight', 'bias']],
  ["nn.ConvTranspose2d(2, 3, 2, bias=False)", () => new nn.ConvTranspose2d(2, 3, 2, { bias: false }), ['weight']],
  ["nn.PReLU()", () => new nn.PReLU(), ['weight']],
  ["nn.Embedding(5, 3)", () => new nn.Embedding(5, 3), ['weight']],
  ["nn.EmbeddingBag(5, 3)", () => new nn.EmbeddingBag(5, 3), ['weight']],
  ["nn.LayerNorm(4)", () => new nn.LayerNorm(4), ['weight', 'bias']],
  ["nn.GroupNorm(2, 4)", () => new nn.GroupNorm(2, 4), ['weight', 'bias']],
  ["nn.BatchNorm1d(4)", () => new nn.BatchNorm1d(4), ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']],
  ["nn.BatchNorm2d(4)", () => new nn.BatchNorm2d(4), ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']],
  ["nn.BatchNorm2d(4, affine=False)", () => new nn.BatchNorm2d(4, { affine: false }), ['running_mean', 'running_var', 'num_batches_tracked']],
  ["nn.BatchNorm2d(4, track_running_stats=False)", () => new nn.BatchNorm2d(4, { trackRunningStats: false }), ['weight', 'bias']],
  ["nn.InstanceNorm1d(4)", () => new nn.InstanceNorm1d(4), []],
  [
    "nn.InstanceNorm2d(4, affine=True, track_running_stats=True)",
    () => new nn.InstanceNorm2d(4, { affine: true, trackRunningStats: true }),
    [
      'weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked',
    ],
  ],
  ["nn.RNNCell(3, 4)", () => new nn.RNNCell(3, 4), ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']],
  ["nn.LSTMCell(3, 4)", () => new nn.LSTMCell(3, 4), ['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']],
  ["nn.GRUCell(3, 4, bias=False)", () => new nn.GRUCell(3, 4, { bias: false }), ['weight_ih', 'weight_hh']],
  ["nn.RNN(3, 4, bias=False)", () => new nn.RNN(3, 4, { bias: false }), ['weight_ih_l0', 'weight_hh_l0']],
  ["nn.GRU(3, 4)", () => new nn.GRU(3, 4), ['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0']],
  [
    "nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)",
    () => new nn.LSTM(3, 4, { numLayers: 2, bidirectional: true, projSize: 2 }),
    [
      'weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_hr_l0', 'weight_ih_l0_reverse', 'weight_hh_l0_reverse',
      'bias_ih_l0_reverse', 'bias_hh_l0_reverse', 'weight_hr_l0_reverse', 'weight_ih_l1', 'weight_hh_l1', 'bias_ih_l1', 'bias_hh_l1', 'weight_hr_l1',
      'weight_ih_l1_reverse', 'weight_hh_l1_reverse', 'bias_ih_l1_reverse', 'bias_hh_l1_reverse', 'weight_hr_l1_reverse',
    ],
  ],
  ["nn.MultiheadAttention(4, 2)", () => new nn.MultiheadAttention(4, 2), ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias']],
  [
    "nn.MultiheadAttention(4, 2, kdim=3, vdim=5, add_bias_kv=True)",
    () => new nn.MultiheadAttention(4, 2, { kdim: 3, vdim: 5, addBiasKv: true }),
    [
      'q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias', 'bias_k', 'bias_v', 'out_proj.weight', 'out_proj.bias',
    ],
  ],
  [
    "nn.MultiheadAttention(4, 2, bias=False, add_bias_kv=True, add_zero_attn=True)",
    () => new nn.MultiheadAttention(4, 2, { bias: false, addBiasKv: true, addZeroAttn: true }),
    [
      'in_proj_weight', 'bias_k', 'bias_v', 'out_proj.weight',
    ],
  ],
  [
    "nn.TransformerEncoderLayer(4, 2, 8)",
    () => new nn.TransformerEncoderLayer(4, 2, 8),
    [
      'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight', 'self_attn.out_proj.bias', 'linear1.weight', 'linear1.bias',
      'linear2.weight', 'linear2.bias', 'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias',
    ],
  ],
  [
    "nn.TransformerDecoderLayer(4, 2, 8)",
    () => new nn.TransformerDecoderLayer(4, 2, 8),
    [
      'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight', 'self_attn.out_proj.bias', 'multihead_attn.in_proj_weight',
      'multihead_attn.in_proj_bias', 'multihead_attn.out_proj.weight', 'multihead_attn.out_proj.bias', 'linear1.weight', 'linear1.bias',
      'linear2.weight', 'linear2.bias', 'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias', 'norm3.weight', 'norm3.bias',
    ],
  ],
  [
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 8), 2, nn.LayerNorm(4))",
    () => new nn.TransformerEncoder(new nn.TransformerEncoderLayer(4, 2, 8), 2, new nn.LayerNorm(4)),
    [
      'layers.0.self_attn.in_proj_weight', 'layers.0.self_attn.in_proj_bias', 'layers.0.self_attn.out_proj.weight',
      'layers.0.self_attn.out_proj.bias', 'layers.0.linear1.weight', 'layers.0.linear1.bias', 'layers.0.linear2.weight', 'layers.0.linear2.bias',
      'layers.0.norm1.weight', 'layers.0.norm1.bias', 'layers.0.norm2.weight', 'layers.0.norm2.bias', 'layers.1.self_attn.in_proj_weight',
      'layers.1.self_attn.in_proj_bias', 'layers.1.self_attn.out_proj.weight', 'layers.1.self_attn.out_proj.bias', 'layers.1.linear1.weight',
      'layers.1.linear1.bias', 'layers.1.linear2.weight', 'layers.1.linear2.bias', 'layers.1.norm1.weight', 'layers.1.norm1.bias',
      'layers.1.norm2.weight', 'layers.1.norm2.bias', 'norm.weight', 'norm.bias',
    ],
  ],
  [
    "nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, 8), 1)",
    () => new nn.TransformerDecoder(new nn.TransformerDecoderLayer(4, 2, 8), 1),
    [
      'layers.0.self_attn.in_proj_weight', 'layers.0.self_attn.in_proj_bias', 'layers.0.self_attn.out_proj.weight',
      'layers.0.self_attn.out_proj.bias', 'layers.0.multihead_attn.in_proj_weight', 'layers.0.multihead_attn.in_proj_bias',
      'layers.0.multihead_attn.out_proj.weight', 'layers.0.multihead_attn.out_proj.bias', 'layers.0.linear1.weight', 'layers.0.linear1.bias',
      'layers.0.linear2.weight', 'layers.0.linear2.bias', 'layers.0.norm1.weight', 'layers.0.norm1.bias', 'layers.0.norm2.weight',
      'layers.0.norm2.bias', 'layers.0.norm3.weight', 'layers.0.norm3.bias',
    ],
  ],
  [
    "nn.Transformer(4, 2, 1, 1, 8)",
    () => new nn.Transformer(4, 2, 1, 1, 8),
    [
      'encoder.layers.0.self_attn.in_proj_weight', 'encoder.layers.0.self_attn.in_proj_bias', 'encoder.layers.0.self_attn.out_proj.weight',
      'encoder.layers.0.self_attn.out_proj.bias', 'encoder.layers.0.linear1.weight', 'encoder.layers.0.linear1.bias',
      'encoder.layers.0.linear2.weight', 'encoder.layers.0.linear2.bias', 'encoder.layers.0.norm1.weight', 'encoder.layers.0.norm1.bias',
      'encoder.layers.0.norm2.weight', 'encoder.layers.0.norm2.bias', 'encoder.norm.weight', 'encoder.norm.bias',
      'decoder.layers.0.self_attn.in_proj_weight', 'decoder.layers.0.self_attn.in_proj_bias', 'decoder.layers.0.self_attn.out_proj.weight',
      'decoder.layers.0.self_attn.out_proj.bias', 'decoder.layers.0.multihead_attn.in_proj_weight', 'decoder.layers.0.multihead_attn.in_proj_bias',
      'decoder.layers.0.multihead_attn.out_proj.weight', 'decoder.layers.0.multihead_attn.out_proj.bias', 'decoder.layers.0.linear1.weight',
      'decoder.layers.0.linear1.bias', 'decoder.layers.0.linear2.weight', 'decoder.layers.0.linear2.bias', 'decoder.layers.0.norm1.weight',
      'decoder.layers.0.norm1.bias', 'decoder.layers.0.norm2.weight', 'decoder.layers.0.norm2.bias', 'decoder.layers.0.norm3.weight',
      'decoder.layers.0.norm3.bias', 'decoder.norm.weight', 'decoder.norm.bias',
    ],
  ],
  ["nn.CrossEntropyLoss(weight=torch.ones(3))", () => new nn.CrossEntropyLoss({ weight: ones([3]) }), ['weight']],
  ["nn.NLLLoss(weight=torch.ones(3))", () => new nn.NLLLoss({ weight: ones([3]) }), ['weight']],
  ["nn.BCELoss(weight=torch.ones(3))", () => new nn.BCELoss({ weight: ones([3]) }), ['weight']],
  [
    "nn.BCEWithLogitsLoss(weight=torch.ones(3), pos_weight=torch.ones(3))",
    () => new nn.BCEWithLogitsLoss({ weight: ones([3]), posWeight: ones([3]) }),
    [
      'weight', 'pos_weight',
    ],
  ],
  ["weight_norm(nn.Linear(3, 2))", () => nn.utils.weightNorm(new nn.Linear(3, 2)), ['bias', 'weight_g', 'weight_v']],
  [
    "weight_norm(nn.MultiheadAttention(4, 2), 'in_proj_weight')",
    () => nn.utils.weightNorm(new nn.MultiheadAttention(4, 2), 'in_proj_weight'),
    [
      'in_proj_bias', 'in_proj_weight_g', 'in_proj_weight_v', 'out_proj.weight', 'out_proj.bias',
    ],
  ],
  ["spectral_norm(nn.Linear(3, 2))", () => nn.utils.spectralNorm(new nn.Linear(3, 2)), ['bias', 'weight_orig', 'weight_u', 'weight_v']],
  ["spectral_norm(nn.Conv2d(2, 3, 2))", () => nn.utils.spectralNorm(new nn.Conv2d(2, 3, 2)), ['bias', 'weight_orig', 'weight_u', 'weight_v']],
  [
    "nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))",
    () => new nn.Sequential(new nn.Linear(3, 4), new nn.BatchNorm1d(4)),
    [
      '0.weight', '0.bias', '1.weight', '1.bias', '1.running_mean', '1.running_var', '1.num_batches_tracked',
    ],
  ],
  [
    "nn.ModuleList([nn.Linear(3, 4), nn.LayerNorm(4)])",
    () => new nn.ModuleList([new nn.Linear(3, 4), new nn.LayerNorm(4)]),
    [
      '0.weight', '0.bias', '1.weight', '1.bias',
    ],
  ],
  ["nn.ModuleDict({'enc': nn.Linear(3, 4), 'act': nn.ReLU()})", () => new nn.ModuleDict({ enc: new nn.Linear(3, 4), act: new nn.ReLU() }), ['enc.weight', 'enc.bias']],
  ["nn.ParameterList([nn.Parameter(torch.ones(2))])", () => new nn.ParameterList([ones([2])]), ['0']],
  ["nn.ParameterDict({'a': nn.Parameter(torch.ones(2))})", () => new nn.ParameterDict({ a: ones([2]) }), ['a']],
];

describe('stateDict() keys are torch 1.13\'s, for every built-in layer with parameters or buffers', () => {
  it.each(TORCH_KEYS)('%s', (_python, make, keys) => {
    expect(Object.keys(make().stateDict())).toEqual(keys);
  });

  it('namedParameters, namedBuffers, namedModules and toString use the same names', () => {
    const layer = new nn.TransformerDecoderLayer(4, 2, 8);
    expect(layer.namedParameters().map(([n]) => n).slice(0, 5)).toEqual([
      'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight', 'self_attn.out_proj.bias', 'multihead_attn.in_proj_weight',
    ]);
    expect(layer.namedModules().map(([n]) => n).slice(0, 5)).toEqual(['', 'self_attn', 'self_attn.out_proj', 'multihead_attn', 'multihead_attn.out_proj']);
    expect(layer.getSubmodule('multihead_attn.out_proj')).toBe(layer.multiheadAttn.outProj);
    expect(layer.toString()).toContain('(self_attn): MultiheadAttention(\n    (out_proj): Linear(');
    expect(new nn.BatchNorm1d(2).namedBuffers().map(([n]) => n)).toEqual(['running_mean', 'running_var', 'num_batches_tracked']);
  });
});

// ---- PyTorch 1.13 state dicts load unchanged (fixtures/state_dicts.py wrote them) ----

const FIXTURES = new URL('./fixtures/', import.meta.url);
/** float32 outputs against PyTorch's, relative to max(1, |expected|). */
const TOL = 1e-5;

interface Recorded { readonly shape: number[]; readonly data: number[] }
interface Case { readonly inputs: Record<string, Recorded>; readonly outputs: Record<string, Recorded> }
const CASES = JSON.parse(readFileSync(new URL('state-dicts-1.13.json', FIXTURES), 'utf8')) as Record<string, Case>;

/** The state dict torch 1.13 saved for `name`: its keys and dtypes as PyTorch gave them (int64 reads as int32). */
function torchStateDict(name: string): nn.StateDict {
  return nn.deserializeSafetensors(readFileSync(new URL(`state-dicts-1.13/${name}.safetensors`, FIXTURES)), { source: name });
}

const input = (name: string, key: string): Tensor => {
  const { shape, data } = CASES[name]!.inputs[key]!;
  return tensor(data).reshape(shape);
};

function expectOutput(actual: Tensor, name: string, key: string): void {
  const { shape, data } = CASES[name]!.outputs[key]!;
  expect(actual.shape).toEqual(shape);
  expectClose(actual, data, TOL);
}

/** Load `name`'s state dict strictly (nothing missing or unexpected) and return the module. */
function loaded<M extends nn.AnyModule>(module: M, name: string, stateDict = torchStateDict(name)): M {
  expect(module.loadStateDict(stateDict)).toEqual({ missingKeys: [], unexpectedKeys: [] });
  return module;
}

/** MultiheadAttention(8, 2, { …options, batchFirst: true }) from `name`'s state dict: output and weights. */
const attentionRun = (name: string, options: nn.MultiheadAttentionOptions) => (stateDict?: nn.StateDict) => {
  const mha = loaded(new nn.MultiheadAttention(8, 2, { ...options, batchFirst: true }).eval(), name, stateDict);
  const [out, weights] = mha.forward(input(name, 'query'), input(name, 'key'), input(name, 'value'));
  expectOutput(out, name, 'output');
  expectOutput(weights!, name, 'weights');
};

/** TransformerEncoderLayer(8, 2, 16, options) from `name`'s state dict, with the key padding mask. */
const encoderRun = (name: string, options: nn.TransformerLayerOptions) => (stateDict?: nn.StateDict) => {
  const layer = loaded(new nn.TransformerEncoderLayer(8, 2, 16, options).eval(), name, stateDict);
  expectOutput(layer.forward(input(name, 'src'), { srcKeyPaddingMask: input(name, 'padding').to(bool) }), name, 'output');
};

/** The checks of each case (see fixtures/state_dicts.py), given the state dict to load: torch's, unless another is given. */
const RUNS = {
  'batch-norm-2d': (stateDict?: nn.StateDict) => {
    const bn = loaded(new nn.BatchNorm2d(3), 'batch-norm-2d', stateDict);
    expect(bn.numBatchesTracked!.dtype).toBe(int32);
    expect(values(bn.numBatchesTracked!)).toEqual([3]);
    const x = input('batch-norm-2d', 'x');
    expectOutput(bn.eval().forward(x), 'batch-norm-2d', 'eval');
    expectOutput(bn.train().forward(x), 'batch-norm-2d', 'train');
    expectOutput(bn.runningMean!, 'batch-norm-2d', 'running_mean');
    expectOutput(bn.runningVar!, 'batch-norm-2d', 'running_var');
    expect(values(bn.numBatchesTracked!)).toEqual([4]);
  },
  attention: attentionRun('attention', { addBiasKv: true }),
  'attention-kdim-vdim': attentionRun('attention-kdim-vdim', { kdim: 5, vdim: 6 }),
  'encoder-layer': encoderRun('encoder-layer', {}),
  'encoder-layer-norm-first': encoderRun('encoder-layer-norm-first', { normFirst: true, activation: 'gelu', batchFirst: true }),
  'decoder-layer': (stateDict?: nn.StateDict) => {
    const layer = loaded(new nn.TransformerDecoderLayer(8, 2, 16).eval(), 'decoder-layer', stateDict);
    const tgtMask = nn.Transformer.generateSquareSubsequentMask(4);
    expectOutput(layer.forward(input('decoder-layer', 'tgt'), input('decoder-layer', 'memory'), { tgtMask }), 'decoder-layer', 'output');
  },
  lstm: (stateDict?: nn.StateDict) => {
    const lstm = loaded(new nn.LSTM(4, 5, { numLayers: 2, batchFirst: true }).eval(), 'lstm', stateDict);
    const [out, [h, c]] = lstm.forward(input('lstm', 'x'));
    expectOutput(out, 'lstm', 'output');
    expectOutput(h, 'lstm', 'h');
    expectOutput(c, 'lstm', 'c');
  },
} satisfies Record<string, (stateDict?: nn.StateDict) => void>;

describe(`torch 1.13 state dicts load unchanged and give PyTorch's outputs (to ${TOL})`, () => {
  it('the fixtures hold every case', () => {
    expect(Object.keys(CASES).sort()).toEqual(Object.keys(RUNS).sort());
  });

  it.each(Object.keys(RUNS) as Array<keyof typeof RUNS>)('%s', (name) => RUNS[name]());
});

// ---- the keys @core/nn 0.1.0 saved ----

/**
 * What 0.1.0 named the registered names that have changed since (its keys were the fields'
 * names); every other part of a key is the same in both.
 */
const FIELD_NAMES: Record<string, string> = {
  running_mean: 'runningMean', running_var: 'runningVar', num_batches_tracked: 'numBatchesTracked',
  in_proj_weight: 'inProjWeight', q_proj_weight: 'qProjWeight', k_proj_weight: 'kProjWeight', v_proj_weight: 'vProjWeight',
  in_proj_bias: 'inProjBias', out_proj: 'outProj', bias_k: 'biasK', bias_v: 'biasV', self_attn: 'selfAttn', multihead_attn: 'multiheadAttn',
  pos_weight: 'posWeight',
};

/** A state dict under the keys 0.1.0 gave it. */
function asSavedBy010(stateDict: nn.StateDict): nn.StateDict {
  return Object.fromEntries(Object.entries(stateDict).map(([key, t]) => [key.split('.').map((part) => FIELD_NAMES[part] ?? part).join('.'), t]));
}

describe('loadStateDict reads the keys of checkpoints saved by @core/nn 0.1.0 (field names) as the names they stand for', () => {
  it('the 0.1.0 keys are the fields\' names', () => {
    expect(Object.keys(asSavedBy010(new nn.BatchNorm2d(3).stateDict()))).toEqual(['weight', 'bias', 'runningMean', 'runningVar', 'numBatchesTracked']);
    expect(Object.keys(asSavedBy010(new nn.TransformerDecoderLayer(4, 2, 8).stateDict())).slice(0, 5)).toEqual([
      'selfAttn.inProjWeight', 'selfAttn.inProjBias', 'selfAttn.outProj.weight', 'selfAttn.outProj.bias', 'multiheadAttn.inProjWeight',
    ]);
  });

  it.each(['batch-norm-2d', 'attention', 'attention-kdim-vdim', 'encoder-layer', 'decoder-layer'] as const)('%s, under 0.1.0\'s keys', (name) => {
    RUNS[name](asSavedBy010(torchStateDict(name)));
  });

  it('nested deep in a model: nn.Transformer', () => {
    const source = new nn.Transformer(4, 2, 1, 1, 8);
    const target = new nn.Transformer(4, 2, 1, 1, 8);
    const old = asSavedBy010(source.stateDict());
    expect(Object.keys(old)).toContain('decoder.layers.0.multiheadAttn.outProj.weight');
    expect(target.loadStateDict(old)).toEqual({ missingKeys: [], unexpectedKeys: [] });
    for (const [key, t] of Object.entries(target.stateDict())) expect(values(t), key).toEqual(values(source.stateDict()[key]!));
  });

  it('a key under both names: the registered one is loaded, the field name is unexpected', () => {
    const bn = new nn.BatchNorm1d(2);
    const both = { ...bn.stateDict(), running_mean: tensor([1, 2]), runningMean: tensor([5, 6]) };
    expect(() => bn.loadStateDict(both)).toThrow('Unexpected key(s) in state_dict: "runningMean".');
    expect(values(bn.runningMean!)).toEqual([0, 0]);
    expect(bn.loadStateDict(both, { strict: false })).toEqual({ missingKeys: [], unexpectedKeys: ['runningMean'] });
    expect(values(bn.runningMean!)).toEqual([1, 2]);
  });

  it('strict errors name PyTorch\'s keys, however the state dict named them; a failed load changes nothing', () => {
    const bn = new nn.BatchNorm1d(2);
    const { runningVar: _, ...withoutVar } = asSavedBy010(bn.stateDict());
    withoutVar.runningMean = tensor([7, 7]);
    let error: unknown;
    try {
      bn.loadStateDict({ ...withoutVar, runing_mean: tensor([1, 1]) });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(nn.StateDictError);
    expect((error as nn.StateDictError).message).toBe(
      'Error(s) in loading state_dict for BatchNorm1d:\n\tMissing key(s) in state_dict: "running_var".\n\tUnexpected key(s) in state_dict: "runing_mean".',
    );
    expect((error as nn.StateDictError).missingKeys).toEqual(['running_var']);
    expect(values(bn.runningMean!)).toEqual([0, 0]);
    expect(bn.loadStateDict(withoutVar, false)).toEqual({ missingKeys: ['running_var'], unexpectedKeys: [] });
    expect(values(bn.runningMean!)).toEqual([7, 7]);
    expect(() => bn.loadStateDict({ ...withoutVar, running_var: zeros([3]) })).toThrow(
      'size mismatch for running_var: copying a param with shape [3] from checkpoint, the shape in current model is [2].',
    );
  });
});

// ---- the mechanism: static registeredNames ----

class Gate extends nn.Module {
  static override readonly registeredNames: nn.RegisteredNames<Gate> = { gateWeight: 'gate_weight', runningScale: 'running_scale', innerProj: 'inner_proj' };
  gateWeight = nn.Parameter(ones([3]));
  innerProj = new nn.Linear(3, 3);
  declare runningScale: Tensor | null;

  constructor() {
    super();
    this.registerBuffer('running_scale', ones([3]));
  }

  forward(x: Tensor): Tensor {
    return this.innerProj.forward(x.mul(this.gateWeight)).mul(this.runningScale!);
  }
}

/** A subclass adds names of its own; its base class's still apply. */
class ScaledGate extends Gate {
  static override readonly registeredNames: nn.RegisteredNames<ScaledGate> = { outScale: 'out_scale' };
  outScale = nn.Parameter(ones([1]));
}

describe('Module: fields registered under the names of the class\'s static registeredNames', () => {
  it('walks, state dicts, lookups and printing use the registered names; code uses the fields', () => {
    const g = new Gate();
    expect(Object.keys(g.stateDict())).toEqual(['gate_weight', 'running_scale', 'inner_proj.weight', 'inner_proj.bias']);
    expect(g.namedParameters().map(([n]) => n)).toEqual(['gate_weight', 'inner_proj.weight', 'inner_proj.bias']);
    expect(g.namedBuffers()).toEqual([['running_scale', g.runningScale]]);
    expect(g.namedChildren()).toEqual([['inner_proj', g.innerProj]]);
    expect(g.getSubmodule('inner_proj')).toBe(g.innerProj);
    expect(g.toString()).toBe('Gate(\n  (inner_proj): Linear(inFeatures=3, outFeatures=3, bias=true)\n)');
    expect(Object.keys(new ScaledGate().stateDict())).toEqual(['gate_weight', 'out_scale', 'running_scale', 'inner_proj.weight', 'inner_proj.bias']);
  });

  it('register* take the registered name and fill the field; a field\'s own name, when it is registered as another, is refused', () => {
    const g = new Gate();
    const p = nn.Parameter(zeros([3]));
    g.registerParameter('gate_weight', p);
    expect(g.gateWeight).toBe(p);
    const inner = new nn.Linear(3, 3);
    g.registerModule('inner_proj', inner);
    expect(g.innerProj).toBe(inner);
    expect(() => g.registerBuffer('runningScale', zeros([3]))).toThrow(new TensorError("Gate registers its property 'runningScale' as 'running_scale': use 'running_scale'"));
    expect(() => g.getSubmodule('innerProj')).toThrow("use 'inner_proj'");
    expect(() => g.registerParameter('running_scale', nn.Parameter(zeros([3])))).toThrow("cannot register parameter 'running_scale': attribute 'runningScale' already exists");
  });

  it('to(), zeroGrad() and copies reach the fields as before', () => {
    const g = new Gate();
    const scale = g.runningScale!;
    g.to(float64);
    expect(g.runningScale).toBe(scale);
    expect(scale.dtype).toBe(float64);
    expect(g.gateWeight.dtype).toBe(float64);
    const encoder = new nn.TransformerEncoder(new Gate() as unknown as nn.TransformerEncoderLayerModule, 2);
    expect(Object.keys(encoder.stateDict())).toEqual([0, 1].flatMap((i) => ['gate_weight', 'running_scale', 'inner_proj.weight', 'inner_proj.bias'].map((k) => `layers.${i}.${k}`)));
  });

  it('two fields under one name is an error naming both', () => {
    class Clash extends nn.Module {
      static override readonly registeredNames = { a: 'same', b: 'same' };
      a = nn.Parameter(ones([1]));
      forward(x: Tensor): Tensor {
        return x;
      }
    }
    expect(() => new Clash()).toThrow("Clash.registeredNames gives 'a' and 'b' the same name 'same'");
  });

  it('nn.utils.weightNorm and spectralNorm take the registered name, as in PyTorch', () => {
    const mha = new nn.MultiheadAttention(4, 2);
    const x = randn([3, 1, 4]);
    const [before] = mha.forward(x, x, x);
    nn.utils.weightNorm(mha, 'in_proj_weight');
    expect(mha.inProjWeight).not.toBeNull();
    expectClose(mha.forward(x, x, x)[0], before, 1e-6);
    nn.utils.removeWeightNorm(mha, 'in_proj_weight');
    expect(Object.keys(mha.stateDict())).toEqual(['in_proj_bias', 'in_proj_weight', 'out_proj.weight', 'out_proj.bias']);
    expectClose(mha.forward(x, x, x)[0], before, 1e-6);
    expect(() => nn.utils.spectralNorm(mha, 'inProjWeight')).toThrow("use 'in_proj_weight'");
  });
});
