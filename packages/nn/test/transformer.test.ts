// nn.TransformerEncoderLayer, nn.TransformerEncoder, nn.TransformerDecoderLayer,
// nn.TransformerDecoder and nn.Transformer: values against PyTorch 1.13 in eval mode (float32 here
// vs float64 references, to 1e-5 relative to max(1, |expected|)), the deep copies the stacks hold,
// dropout in training mode, initialisation and errors. Inputs and parameters come from
// sine-inputs.ts's formula, shared with the Python that produced the references.
import { describe, expect, it } from 'vitest';
import { bool, float32, float64, manualSeed, ShapeError, tensor, ValueError, zeros, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectClose, values } from './helpers.js';
import { fill, seq } from './sine-inputs.js';

const TOL = 1e-5;
const mask = (rows: boolean[][]) => tensor(rows, { dtype: bool });
const causal3 = () => nn.Transformer.generateSquareSubsequentMask(3);

const ENCODER_LAYER_KEYS = [
  'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight', 'self_attn.out_proj.bias',
  'linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias', 'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias',
];
const DECODER_LAYER_KEYS = [
  'self_attn.in_proj_weight', 'self_attn.in_proj_bias', 'self_attn.out_proj.weight', 'self_attn.out_proj.bias',
  'multihead_attn.in_proj_weight', 'multihead_attn.in_proj_bias', 'multihead_attn.out_proj.weight', 'multihead_attn.out_proj.bias',
  'linear1.weight', 'linear1.bias', 'linear2.weight', 'linear2.bias', 'norm1.weight', 'norm1.bias', 'norm2.weight', 'norm2.bias', 'norm3.weight', 'norm3.bias',
];
const prefixed = (prefix: string, keys: readonly string[]) => keys.map((k) => prefix + k);

// l = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6).double().eval(); fill(l)
// src = seq([3, 2, 4], 0.1); mask = nn.Transformer.generate_square_subsequent_mask(3).double()
// l(src, src_mask=mask, src_key_padding_mask=torch.tensor([[False, False, False], [False, False, True]]))
const T1 = [-1.110682579, -0.07860284948, 0.4138591543, -0.03604447796, -1.142018418, -0.01901729604, 0.3402512462, 0.005975605565, -1.135814915, 0.02650807737, 0.3200443505, -0.02026378779, -0.9199888897, 0.2474977329, 0.2457245547, -0.3401510365, -1.015621601, 0.01148697271, 0.4322155027, -0.2139973732, -1.139867326, -0.0270438329, 0.3483225137, 0.00379103427];
// l = nn.TransformerEncoderLayer(4, 2, 6, 0.1, 'gelu', batch_first=True, norm_first=True).double().eval(); fill(l)
// l(seq([2, 3, 4], 0.2))
const T2 = [0.6126565245, 1.022213434, 1.356048971, 0.5562572258, 1.493648917, 1.318686248, 1.180035824, -0.001410753934, 0.4919609143, 0.04585857463, -0.1710464653, -1.240033976, -0.6452444845, -0.4571723284, -0.1590098939, -0.918001565, 0.1615114353, 0.7248625236, 1.175258741, 0.3776120344, 1.373780979, 1.458634865, 1.487879955, 0.2853758071];
// e = nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, 6), 2, nn.LayerNorm(4)).double().eval(); fill(e)
// e(src, mask=mask)
const T3 = [0.03376886167, 0.4905469537, 0.4110111366, 0.8131313299, 0.02850558735, 0.5005155532, 0.4159442091, 0.8055061576, 0.03426916618, 0.5035055184, 0.4180974792, 0.8060317495, 0.09815585338, 0.5063934631, 0.4260701202, 0.8265550594, 0.06841793933, 0.4899505068, 0.4136599094, 0.8276252735, 0.02059860634, 0.4981572166, 0.4140448317, 0.8033433111];
// d = nn.TransformerDecoderLayer(4, 2, 6).double().eval(); fill(d)
// tgt, mem = seq([3, 2, 4], 0.3), seq([5, 2, 4], 0.9)
// d(tgt, mem, tgt_mask=mask, memory_key_padding_mask=torch.tensor([[False, False, False, True, True], [False] * 5]))
const T4 = [-1.004336963, -0.6019905706, 0.1773700746, 0.321414333, -0.8373587992, -0.8649503899, 0.06831024869, 0.4737758989, -1.028948541, -0.5228165411, 0.04501577023, 0.3977733995, -0.9619500719, -0.5966056666, -0.1225770493, 0.5434071185, -1.003759813, -0.6031952684, 0.1876529932, 0.3121578093, -0.8365392264, -0.8698184846, 0.08637119942, 0.4606118424];
// t = nn.Transformer(4, 2, 1, 2, 6, batch_first=True).double().eval(); fill(t)
// src, tgt = seq([2, 5, 4], 0.4), seq([2, 3, 4], 1.1); skpm = torch.tensor([[False] * 5, [False, False, False, True, True]])
// t(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3).double(), src_key_padding_mask=skpm, memory_key_padding_mask=skpm)
const T5 = [0.3007313553, 0.682526077, 0.9339937959, 0.2039635063, 0.3013948561, 0.6797356783, 0.9384895293, 0.2006704848, 0.3259284618, 0.6306477468, 1.026711851, 0.07804494102, 0.3465519263, 0.5992792814, 1.068127151, -0.00343703093, 0.3269832077, 0.6376249541, 1.022483437, 0.066638678, 0.3078306154, 0.671540336, 0.9619830972, 0.1600627765];

describe('transformer layers against PyTorch 1.13 (eval mode, float32, tolerance 1e-5)', () => {
  it('TransformerEncoderLayer: post-norm, relu, a causal float mask and a bool key padding mask', () => {
    const l = new nn.TransformerEncoderLayer(4, 2, 6).eval();
    fill(l, ENCODER_LAYER_KEYS);
    const out = l.forward(seq([3, 2, 4], 0.1), causal3(), mask([[false, false, false], [false, false, true]]));
    expect(out.shape).toEqual([3, 2, 4]);
    expectClose(out, T1, TOL);
  });

  it('TransformerEncoderLayer: normFirst, gelu, batchFirst', () => {
    const l = new nn.TransformerEncoderLayer(4, 2, 6, 0.1, 'gelu', { batchFirst: true, normFirst: true }).eval();
    fill(l, ENCODER_LAYER_KEYS);
    expectClose(l.forward(seq([2, 3, 4], 0.2)), T2, TOL);
  });

  it('TransformerEncoder: two layers with their own values, then the final norm', () => {
    const e = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(4, 2, 6), 2, new nn.LayerNorm(4)).eval();
    fill(e, [...prefixed('layers.0.', ENCODER_LAYER_KEYS), ...prefixed('layers.1.', ENCODER_LAYER_KEYS), 'norm.weight', 'norm.bias']);
    expectClose(e.forward(seq([3, 2, 4], 0.1), { mask: causal3() }), T3, TOL);
  });

  it('TransformerDecoderLayer: causal target mask and a memory key padding mask', () => {
    const d = new nn.TransformerDecoderLayer(4, 2, { dimFeedforward: 6 }).eval();
    fill(d, DECODER_LAYER_KEYS);
    const out = d.forward(seq([3, 2, 4], 0.3), seq([5, 2, 4], 0.9), {
      tgtMask: causal3(), memoryKeyPaddingMask: mask([[false, false, false, true, true], [false, false, false, false, false]]),
    });
    expect(out.shape).toEqual([3, 2, 4]);
    expectClose(out, T4, TOL);
  });

  it('Transformer: batchFirst, one encoder and two decoder layers, padding masks and the subsequent mask', () => {
    const t = new nn.Transformer(4, 2, 1, 2, 6, { batchFirst: true }).eval();
    fill(t, [
      ...prefixed('encoder.layers.0.', ENCODER_LAYER_KEYS), 'encoder.norm.weight', 'encoder.norm.bias',
      ...prefixed('decoder.layers.0.', DECODER_LAYER_KEYS), ...prefixed('decoder.layers.1.', DECODER_LAYER_KEYS), 'decoder.norm.weight', 'decoder.norm.bias',
    ]);
    const skpm = mask([[false, false, false, false, false], [false, false, false, true, true]]);
    const out = t.forward(seq([2, 5, 4], 0.4), seq([2, 3, 4], 1.1), { tgtMask: causal3(), srcKeyPaddingMask: skpm, memoryKeyPaddingMask: skpm });
    expect(out.shape).toEqual([2, 3, 4]);
    expectClose(out, T5, TOL);
  });

  it('unbatched input gives the batched result for a batch of one', () => {
    const l = new nn.TransformerEncoderLayer(4, 2, 6).eval();
    fill(l, ENCODER_LAYER_KEYS);
    const src = seq([3, 4], 0.6);
    const out = l.forward(src, causal3());
    expect(out.shape).toEqual([3, 4]);
    expectClose(out, l.forward(src.unsqueeze(1), causal3()).squeeze(1), 1e-6);
  });
});

describe('the stacks hold deep copies of their layer (PyTorch\'s _get_clones)', () => {
  it('each copy starts equal to the layer, in its own memory, and trains on its own', () => {
    const layer = new nn.TransformerEncoderLayer(4, 2, 6);
    const e = new nn.TransformerEncoder(layer, 3);
    expect(e.layers.length).toBe(3);
    const params = e.parameters();
    expect(params.length).toBe(3 * layer.parameters().length);
    expect(new Set(params).size).toBe(params.length);
    for (const copy of e.layers) {
      expect(copy).toBeInstanceOf(nn.TransformerEncoderLayer);
      expect(copy).not.toBe(layer);
      copy.parameters().forEach((p, i) => {
        expect(p).not.toBe(layer.parameters()[i]);
        expect(values(p)).toEqual(values(layer.parameters()[i]!));
        expect(p.requiresGrad).toBe(true);
      });
    }
    // Writing one copy leaves the layer and the other copies as they were.
    const before = values(layer.linear1.weight);
    e.layers[0]!.linear1.weight.detach().fill_(2);
    expect(values(layer.linear1.weight)).toEqual(before);
    expect(values(e.layers[1]!.linear1.weight)).toEqual(before);
    // Gradients reach every copy's own parameters.
    e.eval().forward(seq([3, 2, 4], 0.1)).sum().backward();
    for (const copy of e.layers) expect(copy.selfAttn.inProjWeight!.grad).not.toBeNull();
    expect(layer.selfAttn.inProjWeight!.grad).toBeNull();
  });

  it('copies buffers (persistent or not), keeps modules and tensors shared inside the layer shared, shares plain fields', () => {
    const scale = (x: Tensor) => x.mul(2);
    class Custom extends nn.Module<[Tensor, nn.TransformerEncoderLayerForwardOptions]> {
      shared = new nn.Linear(4, 4);
      again = this.shared;
      bn = new nn.BatchNorm1d(4);
      fn = scale;
      constructor() {
        super();
        this.registerBuffer('scratch', zeros([2]), false);
      }
      forward(src: Tensor): Tensor {
        return this.fn(this.again.forward(this.shared.forward(src)));
      }
    }
    const original = new Custom();
    const e = new nn.TransformerEncoder(original, 2);
    const [a, b] = [e.layers[0]!, e.layers[1]!];
    expect(a).toBeInstanceOf(Custom);
    expect(a.again).toBe(a.shared);
    expect(a.shared).not.toBe(b.shared);
    expect(a.fn).toBe(scale);
    expect(a.bn.runningVar).not.toBe(original.bn.runningVar);
    expect(values(a.bn.runningVar!)).toEqual([1, 1, 1, 1]);
    expect(a.namedBuffers().map(([n]) => n).sort()).toEqual(['bn.num_batches_tracked', 'bn.running_mean', 'bn.running_var', 'scratch']);
    expect(Object.keys(a.stateDict())).toEqual(Object.keys(original.stateDict()));
    expect(Object.keys(e.stateDict())).toContain('layers.1.bn.running_mean');
    expect(Object.keys(e.stateDict())).not.toContain('layers.1.scratch');
    // The copies compute what the original does.
    const x = seq([3, 4], 0.2);
    expectClose(a.forward(x), original.forward(x), 1e-7);
  });
});

describe('training mode and activations', () => {
  it('dropout is active in training mode (reproducible with manualSeed) and off in eval mode', () => {
    const l = new nn.TransformerEncoderLayer(4, 2, 6, 0.3);
    fill(l, ENCODER_LAYER_KEYS);
    const src = seq([3, 2, 4], 0.1);
    manualSeed(5);
    const a = values(l.forward(src));
    manualSeed(5);
    const b = values(l.forward(src));
    expect(b).toEqual(a);
    expect(values(l.forward(src))).not.toEqual(a);
    l.eval();
    const noDropout = new nn.TransformerEncoderLayer(4, 2, 6, 0).eval();
    fill(noDropout, ENCODER_LAYER_KEYS);
    expectClose(l.forward(src), noDropout.forward(src), 1e-7);
  });

  it('activation: a function or a module (registered as a submodule) gives the same result', () => {
    const src = seq([3, 2, 4], 0.1);
    const withFn = new nn.TransformerEncoderLayer(4, 2, { dimFeedforward: 6, activation: F.silu }).eval();
    const withModule = new nn.TransformerEncoderLayer(4, 2, { dimFeedforward: 6, activation: new nn.SiLU() }).eval();
    fill(withFn, ENCODER_LAYER_KEYS);
    fill(withModule, ENCODER_LAYER_KEYS);
    expectClose(withModule.forward(src), withFn.forward(src), 1e-7);
    expect(withModule.namedChildren().map(([n]) => n)).toContain('activation');
    const relu = new nn.TransformerEncoderLayer(4, 2, 6).eval();
    fill(relu, ENCODER_LAYER_KEYS);
    expect(values(relu.forward(src))).not.toEqual(values(withFn.forward(src)));
  });
});

describe('nn.Transformer construction and masks', () => {
  it('generateSquareSubsequentMask: 0 on and below the diagonal, −∞ above', () => {
    const m = nn.Transformer.generateSquareSubsequentMask(3);
    expect(m.dtype).toBe(float32);
    expect(values(m)).toEqual([0, -Infinity, -Infinity, 0, 0, -Infinity, 0, 0, 0]);
    expect(nn.Transformer.generateSquareSubsequentMask(2, { dtype: float64 }).dtype).toBe(float64);
    expect(() => nn.Transformer.generateSquareSubsequentMask(-1)).toThrow(ValueError);
  });

  it('xavier_uniform on every parameter of more than one dim; LayerNorm weights stay 1 and biases 0', () => {
    manualSeed(2);
    const t = new nn.Transformer({ dModel: 8, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 16 });
    const enc = t.encoder as unknown as nn.TransformerEncoder;
    const w = values(enc.layers[0]!.linear1.weight);
    const bound = Math.sqrt(6 / (8 + 16));
    expect(Math.max(...w.map(Math.abs))).toBeLessThanOrEqual(bound);
    expect(Math.max(...w.map(Math.abs))).toBeGreaterThan(0.9 * bound);
    expect(values(enc.layers[0]!.norm1.weight!).every((x) => x === 1)).toBe(true);
    expect(values(enc.layers[0]!.selfAttn.inProjBias!).every((x) => x === 0)).toBe(true);
    expect(Object.keys(t.stateDict())).toContain('decoder.layers.0.multihead_attn.out_proj.weight');
  });

  it('uses customEncoder and customDecoder when given', () => {
    const encoder = new nn.TransformerEncoder(new nn.TransformerEncoderLayer(4, 2, 6), 1);
    const decoder = new nn.TransformerDecoder(new nn.TransformerDecoderLayer(4, 2, 6), 1);
    const t = new nn.Transformer({ dModel: 4, nhead: 2, customEncoder: encoder, customDecoder: decoder }).eval();
    expect(t.encoder).toBe(encoder);
    expect(t.decoder).toBe(decoder);
    const src = seq([5, 2, 4], 0.4);
    const tgt = seq([3, 2, 4], 1.1);
    expectClose(t.forward(src, tgt), decoder.forward(tgt, encoder.forward(src)), 1e-7);
  });
});

describe('transformer errors', () => {
  it('an activation other than relu/gelu, a function or a module', () => {
    expect(() => new nn.TransformerEncoderLayer(4, 2, { activation: 'tanh' as never })).toThrow(ValueError);
    expect(() => new nn.TransformerDecoderLayer(4, 2, { activation: 'tanh' as never })).toThrow(/activation should be relu\/gelu, not tanh/);
  });

  it('nhead not dividing dModel, a bad numLayers, an unknown keyword', () => {
    expect(() => new nn.TransformerEncoderLayer(6, 4)).toThrow(/embedDim must be divisible by numHeads/);
    expect(() => new nn.TransformerEncoder(new nn.TransformerEncoderLayer(4, 2, 6), -1)).toThrow(/numLayers must be a non-negative integer/);
    expect(() => new nn.TransformerEncoderLayer(4, 2, { dimFeedForward: 6 } as never)).toThrow(/unexpected keyword argument 'dimFeedForward'/);
  });

  it('Transformer: src and tgt batch sizes and feature sizes', () => {
    const t = new nn.Transformer({ dModel: 4, nhead: 2, numEncoderLayers: 1, numDecoderLayers: 1, dimFeedforward: 6 });
    expect(() => t.forward(seq([5, 2, 4], 0), seq([3, 3, 4], 0))).toThrow(/the batch number of src and tgt must be equal/);
    expect(() => t.forward(seq([5, 2, 4], 0), seq([3, 2, 6], 0))).toThrow(ShapeError);
    expect(() => t.forward(seq([5, 2, 4], 0), seq([3, 2, 6], 0))).toThrow(/the feature number of src and tgt must be equal to dModel/);
  });
});
