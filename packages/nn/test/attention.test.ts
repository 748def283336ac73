// F.scaledDotProductAttention and nn.MultiheadAttention: values against PyTorch 1.13 (float32 here
// vs float64 references, to 1e-5 relative to max(1, |expected|)), masks, dropout, autocast,
// gradients (gradcheck in float64) and errors. Inputs and parameters come from sine-inputs.ts's
// formula, shared with the Python that produced the references.
import { describe, expect, it } from 'vitest';
import {
  autocast, bfloat16, bool, cat, DTypeError, float32, float64, int32, manualSeed, ShapeError, tensor, TensorError, ValueError, zeros, type Tensor,
} from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectClose, expectGradcheck, leaf, values } from './helpers.js';
import { fill, seq } from './sine-inputs.js';

const TOL = 1e-5;
const mask = (rows: boolean[][]) => tensor(rows, { dtype: bool });

// PyTorch 1.13 has no F.scaled_dot_product_attention: its references are PyTorch 2.1's math path
// written out in float64:
//   def sdpa(q, k, v, mask=None, causal=False, scale=None):
//       s = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
//       scores = q @ k.transpose(-2, -1) * s
//       L, S = q.shape[-2], k.shape[-2]
//       if causal: scores = scores.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), float('-inf'))
//       if mask is not None: scores = scores.masked_fill(~mask, float('-inf')) if mask.dtype == torch.bool else scores + mask
//       return torch.softmax(scores, -1) @ v
//   q, k, v = seq([2, 3, 4], 0.1), seq([2, 5, 4], 0.7), seq([2, 5, 6], 1.3)
//   boolmask = torch.tensor([[(i + 2 * j) % 3 != 0 for j in range(5)] for i in range(3)])
//   floatmask = seq([2, 1, 5], 2.1, 0.5)
const SDPA_REF = {
  plain: [0.1353749934, 0.03240380461, -0.07495308708, -0.1721654301, -0.2460759897, -0.2866813186, 0.1257286047, 0.01133206595, -0.1045982148, -0.2063716178, -0.2802135905, -0.3161299683, -0.03625968938, 0.01320709465, 0.06088636037, 0.1003249428, 0.126185015, 0.1349665372, -0.1364425103, -0.233851481, -0.2996097508, -0.3248172463, -0.3060622514, -0.2458831665, 0.1518878032, 0.2125863239, 0.2445122831, 0.2433446517, 0.2092414633, 0.1468184245, 0.280182026, 0.3168218864, 0.3105813907, 0.2623051608, 0.1785271579, 0.0705863417],
  // sdpa(q, k, v, boolmask)
  bool: [-0.5798581751, -0.7752597142, -0.865733488, -0.8390342955, -0.6987757471, -0.4639411795, 0.862112649, 0.9033538118, 0.822330274, 0.6300081913, 0.3524174555, 0.02712867026, 0.3150707561, 0.1488309897, -0.03755235296, -0.2188531608, -0.37053322, -0.4720633462, -0.1613200389, -0.3137187181, -0.4236570406, -0.4762553701, -0.4643947695, -0.3896805154, -0.1581233533, 0.09388434525, 0.3331852381, 0.527391072, 0.6502169984, 0.6850391044, 0.3086539083, 0.3483919743, 0.3409768209, 0.2874120545, 0.1949474147, 0.07609755693],
  // sdpa(q, k, v, floatmask)
  float: [0.2882194653, 0.20687948, 0.09753932765, -0.02500231518, -0.1441600119, -0.2438063274, 0.2725701494, 0.1773857507, 0.05819302277, -0.06887585779, -0.1866227141, -0.2791110616, -0.04198918749, 0.008535557328, 0.0579050545, 0.0994373742, 0.1275113118, 0.1383271915, -0.1196012469, -0.2158929723, -0.2829645968, -0.3117382906, -0.2983196691, -0.2445248799, 0.1612658376, 0.2204639285, 0.2498232609, 0.2453701869, 0.2077074092, 0.1419324081, 0.2809693972, 0.3146689103, 0.3057794626, 0.255504199, 0.1706476408, 0.06269472497],
  // sdpa(q, k, v, causal=True): L = 3 < S = 5, so query i sees keys 0..i
  causal: [0.9635581854, 0.9950833498, 0.891928651, 0.6680555934, 0.3537643453, -0.008407247367, 0.4873204711, 0.3964611191, 0.2519426145, 0.07332485903, -0.1152170722, -0.2881649132, -0.2987037973, -0.163579374, -0.006315249774, 0.1518036139, 0.2893765705, 0.3877837659, -0.1656041754, 0.2022250541, 0.5426840712, 0.8096933451, 0.9671144233, 0.9936411011, 0.1910120933, 0.3567822437, 0.4742635911, 0.5275555863, 0.5094454078, 0.4223841832, -0.1172622683, 0.1668487083, 0.4283774949, 0.6319273972, 0.7499488908, 0.7664683201],
  // sdpa(q, k, v, scale=0.3)
  scale: [0.1152899578, 0.0220652831, -0.07414582413, -0.1603216419, -0.2247986775, -0.2588502667, 0.09060789794, -0.01453550577, -0.117711597, -0.2049559757, -0.2644605247, -0.2881715822, 0.01599727204, 0.02043695355, 0.02211058927, 0.02079166046, 0.01665867794, 0.01027102152, -0.02684947569, -0.08639956811, -0.1342558843, -0.1639412964, -0.1714380231, -0.1557314176, 0.1412183791, 0.1843898852, 0.2026050854, 0.1933986378, 0.1580165918, 0.1012477414, 0.2396525842, 0.2872920793, 0.2960479392, 0.2647350994, 0.1975916058, 0.1037050153],
  // sdpa(q, k, v, scale=-0.5)
  negscale: [-0.04143818135, 0.0402683105, 0.1165246754, 0.1770099722, 0.2135377996, 0.2211642876, 0.09838653805, 0.1889899337, 0.2540144284, 0.2846592618, 0.2767767996, 0.2314338959, 0.1327954977, 0.03520897407, -0.06714291902, -0.160407333, -0.231961367, -0.2721205181, 0.2764481196, 0.3127999075, 0.3068156954, 0.2593054182, 0.1766993692, 0.07017788941, 0.1639431823, 0.1235483247, 0.06643178093, 0.0003240072458, -0.0658276193, -0.1230697864, -0.1206421865, -0.2248705428, -0.298663726, -0.332034175, -0.3204653561, -0.2655230546],
  // sdpa(seq([2, 3, 3, 4], 0.2), seq([3, 5, 4], 0.9), seq([3, 5, 2], 1.7)): batch dims broadcast
  broadcast: [0.02382757955, -0.07315684266, 0.1456224782, 0.03582822496, -0.03479018558, -0.3102761048, 0.2300754359, 0.5035890438, 0.4548646954, 0.5261747721, 0.4266609877, 0.4329322031, -0.3594232193, -0.4209288841, -0.2730908348, -0.4725344942, -0.5543888514, -0.6141281661, 0.1098022713, 0.02488747645, 0.1046662244, -0.08303992519, -0.120399187, -0.4244807462, 0.3332712103, 0.5301944281, 0.4857220712, 0.495640794, 0.3021754425, 0.3596150445, -0.2533286622, -0.417901536, -0.3506359147, -0.518019273, -0.7684565924, -0.7174954502],
};

const qkv = (dtype = float32) => [seq([2, 3, 4], 0.1, 1, dtype), seq([2, 5, 4], 0.7, 1, dtype), seq([2, 5, 6], 1.3, 1, dtype)] as const;
const boolMask = () => tensor(Array.from({ length: 3 }, (_, i) => Array.from({ length: 5 }, (_, j) => (i + 2 * j) % 3 !== 0)), { dtype: bool });

describe('F.scaledDotProductAttention against PyTorch 2.1 math (float32, tolerance 1e-5)', () => {
  it('softmax(q·kᵀ/√E)·v by default', () => {
    const [q, k, v] = qkv();
    const out = F.scaledDotProductAttention(q, k, v);
    expect(out.shape).toEqual([2, 3, 6]);
    expect(out.dtype).toBe(float32);
    expectClose(out, SDPA_REF.plain, TOL);
  });

  it('a bool attnMask keeps the keys where it is true (broadcast from [L, S])', () => {
    const [q, k, v] = qkv();
    expectClose(F.scaledDotProductAttention(q, k, v, { attnMask: boolMask() }), SDPA_REF.bool, TOL);
  });

  it('a float attnMask is added to the scores (broadcast from [2, 1, S])', () => {
    const [q, k, v] = qkv();
    expectClose(F.scaledDotProductAttention(q, k, v, { attnMask: seq([2, 1, 5], 2.1, 0.5) }), SDPA_REF.float, TOL);
  });

  it('isCausal: query i attends to keys 0..i, top-left aligned when L < S', () => {
    const [q, k, v] = qkv();
    expectClose(F.scaledDotProductAttention(q, k, v, { isCausal: true }), SDPA_REF.causal, TOL);
    // The same as the explicit lower-triangular bool mask.
    const tril = mask([[true, false, false, false, false], [true, true, false, false, false], [true, true, true, false, false]]);
    expectClose(F.scaledDotProductAttention(q, k, v, { attnMask: tril }), SDPA_REF.causal, TOL);
  });

  it('scale replaces 1/√E, negative scales included', () => {
    const [q, k, v] = qkv();
    expectClose(F.scaledDotProductAttention(q, k, v, { scale: 0.3 }), SDPA_REF.scale, TOL);
    expectClose(F.scaledDotProductAttention(q, k, v, { scale: -0.5 }), SDPA_REF.negscale, TOL);
  });

  it('batch dims broadcast between query, key and value', () => {
    const out = F.scaledDotProductAttention(seq([2, 3, 3, 4], 0.2), seq([3, 5, 4], 0.9), seq([3, 5, 2], 1.7));
    expect(out.shape).toEqual([2, 3, 3, 2]);
    expectClose(out, SDPA_REF.broadcast, TOL);
  });

  it('takes attnMask, dropoutP and isCausal by position too', () => {
    const [q, k, v] = qkv();
    expectClose(F.scaledDotProductAttention(q, k, v, boolMask(), 0, false), SDPA_REF.bool, TOL);
    expectClose(F.scaledDotProductAttention(q, k, v, null, 0, true), SDPA_REF.causal, TOL);
    expectClose(F.scaledDotProductAttention(q, k, v, null, 0, false, { scale: 0.3 }), SDPA_REF.scale, TOL);
  });

  it('a query whose keys are all masked out gives NaN, as PyTorch 2.1; the other rows are unaffected', () => {
    const [q, k, v] = qkv();
    const m = mask([[true, true, true, true, true], [false, false, false, false, false], [true, false, true, false, true]]);
    const out = values(F.scaledDotProductAttention(q, k, v, { attnMask: m }));
    const plain = values(F.scaledDotProductAttention(q, k, v));
    for (let b = 0; b < 2; b++) {
      const row = (i: number) => out.slice((b * 3 + i) * 6, (b * 3 + i + 1) * 6);
      expect(row(1).every(Number.isNaN)).toBe(true);
      expectClose(row(0), plain.slice(b * 18, b * 18 + 6), TOL);
      expect(row(2).every(Number.isFinite)).toBe(true);
    }
  });
});

describe('F.scaledDotProductAttention dropout', () => {
  it('drops attention weights with the global generator: reproducible with manualSeed', () => {
    const [q, k, v] = qkv();
    manualSeed(7);
    const a = values(F.scaledDotProductAttention(q, k, v, { dropoutP: 0.5 }));
    const c = values(F.scaledDotProductAttention(q, k, v, { dropoutP: 0.5 }));
    manualSeed(7);
    const b = values(F.scaledDotProductAttention(q, k, v, { dropoutP: 0.5 }));
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
    // It is F.dropout of the softmax weights, drawn right after the seed.
    manualSeed(7);
    const weights = F.softmax(q.matmul(k.transpose(-2, -1)).mul(0.5), -1);
    expectClose(a, F.dropout(weights, 0.5).matmul(v), TOL);
    expect(a).not.toEqual(values(F.scaledDotProductAttention(q, k, v)));
  });

  it('dropoutP = 1 zeroes every weight; dropoutP outside [0, 1] is an error', () => {
    const [q, k, v] = qkv();
    expect(values(F.scaledDotProductAttention(q, k, v, { dropoutP: 1 })).every((x) => x === 0)).toBe(true);
    expect(() => F.scaledDotProductAttention(q, k, v, { dropoutP: 1.5 })).toThrow(/dropout probability has to be between 0 and 1, but got 1.5/);
  });
});

describe('F.scaledDotProductAttention autocast and gradients', () => {
  it('runs in the region dtype under autocast (lower precision, as PyTorch lists it)', () => {
    const [q, k, v] = qkv();
    const out = autocast({ deviceType: 'cpu', dtype: bfloat16 }, () => F.scaledDotProductAttention(q, k, v, { attnMask: seq([2, 1, 5], 2.1, 0.5) }));
    expect(out.dtype).toBe(bfloat16);
    expectClose(out, SDPA_REF.float, 3e-2);
  });

  // Small inputs: gradcheck perturbs every element twice.
  const small = () => [leaf([2, 2, 3], 1), leaf([2, 3, 3], 2), leaf([2, 3, 2], 3)];
  const keep = () => mask([[true, false, true], [false, true, true]]);

  it('gradcheck (float64) with a float mask, its gradient included', () => {
    expectGradcheck((q, k, v, m) => F.scaledDotProductAttention(q!, k!, v!, { attnMask: m }), [...small(), leaf([2, 3], 4)]);
  });

  it('gradcheck (float64) with a bool mask', () => {
    expectGradcheck((q, k, v) => F.scaledDotProductAttention(q!, k!, v!, { attnMask: keep() }), small());
  });

  it('gradcheck (float64) with isCausal', () => {
    expectGradcheck((q, k, v) => F.scaledDotProductAttention(q!, k!, v!, { isCausal: true }), small());
  });

  it('gradcheck (float64) with a custom scale and broadcast batch dims', () => {
    expectGradcheck((q, k, v) => F.scaledDotProductAttention(q!, k!, v!, { scale: 0.7 }), [leaf([2, 1, 2, 3], 5), leaf([2, 3, 3], 6), leaf([3, 2], 7)]);
  });
});

describe('F.scaledDotProductAttention errors', () => {
  const [q, k, v] = qkv();

  it('isCausal with an attnMask', () => {
    expect(() => F.scaledDotProductAttention(q, k, v, { attnMask: boolMask(), isCausal: true })).toThrow(ValueError);
    expect(() => F.scaledDotProductAttention(q, k, v, { attnMask: boolMask(), isCausal: true })).toThrow(/Explicit attnMask should not be set when isCausal=true/);
  });

  it('a mask that is neither bool nor the query dtype, with PyTorch\'s message', () => {
    const bad = zeros([3, 5], { dtype: int32 });
    expect(() => F.scaledDotProductAttention(q, k, v, { attnMask: bad })).toThrow(DTypeError);
    expect(() => F.scaledDotProductAttention(q, k, v, { attnMask: bad })).toThrow(/Expected attn_mask dtype to be bool or to match query dtype, but got attn_mask.dtype: int32 and query.dtype: float32 instead/);
    expect(() => F.scaledDotProductAttention(q, k, v, { attnMask: zeros([3, 5], { dtype: float64 }) })).toThrow(DTypeError);
  });

  it('shapes: ranks, E of query vs key, S of key vs value, batch dims, a mask that does not broadcast to [..., L, S]', () => {
    expect(() => F.scaledDotProductAttention(seq([4], 0), k, v)).toThrow(/at least 2 dimensional/);
    expect(() => F.scaledDotProductAttention(q, seq([2, 5, 3], 0), v)).toThrow(ShapeError);
    expect(() => F.scaledDotProductAttention(q, k, seq([2, 4, 6], 0))).toThrow(/same second-to-last dim/);
    expect(() => F.scaledDotProductAttention(q, seq([3, 5, 4], 0), seq([3, 5, 6], 0))).toThrow(ShapeError);
    expect(() => F.scaledDotProductAttention(q, k, v, { attnMask: zeros([3, 4]) })).toThrow(/does not broadcast to the attention scores' shape \[2, 3, 5\]/);
    expect(() => F.scaledDotProductAttention(q, k, v, { attnMask: zeros([4, 2, 3, 5]) })).toThrow(ShapeError);
  });

  it('dtypes: query, key and value must agree and be floating', () => {
    expect(() => F.scaledDotProductAttention(q, k.double(), v)).toThrow(/Expected query, key, and value to have the same dtype/);
    const ints = (shape: number[]) => zeros(shape, { dtype: int32 });
    expect(() => F.scaledDotProductAttention(ints([2, 3, 4]), ints([2, 5, 4]), ints([2, 5, 6]))).toThrow(DTypeError);
  });

  it('keywords: an unknown name, or one given both ways, is a TypeError', () => {
    expect(() => F.scaledDotProductAttention(q, k, v, { dropout: 0.1 } as never)).toThrow(/unexpected keyword argument 'dropout'/);
    expect(() => F.scaledDotProductAttention(q, k, v, null, 0, true, { isCausal: true })).toThrow(/multiple values for argument 'isCausal'/);
  });
});

// ---- nn.MultiheadAttention ----

// m = nn.MultiheadAttention(4, 2).double(); keys = fill(m)
// q, k, v = seq([3, 2, 4], 0.1), seq([5, 2, 4], 0.7), seq([5, 2, 4], 1.3)
// kpm = torch.tensor([[False, False, False, False, True], [True, False, False, True, False]])
// am = torch.tensor([[j > i + 2 for j in range(5)] for i in range(3)])
// o, w = m(q, k, v, key_padding_mask=kpm, attn_mask=am)
const M1 = {
  keys: ['in_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias'],
  out: [0.3458387469, 0.1836676094, -0.8728069171, -1.091426044, -0.2514862378, 0.3974297538, -0.2367176106, -1.189837686, -0.6278183142, -0.2640916152, 0.01965203155, -0.4818254136, -0.2110926132, 0.5132503342, -0.2561079549, -1.309174575, 0.001851928549, -0.3226033804, -0.6206289248, -0.5394242772, -0.085470907, 0.3402320843, -0.4131053526, -1.164626743],
  weights: [0.5103617633, 0.07112186944, 0.4185163673, 0.0, 0.0, 0.1436412227, 0.3834898816, 0.1435202113, 0.3293486844, 0.0, 0.3716536455, 0.1466415311, 0.331265515, 0.1504393083, 0.0, 0.0, 0.1059146713, 0.8940853287, 0.0, 0.0, 0.0, 0.8636633507, 0.1363366493, 0.0, 0.0, 0.0, 0.03739788467, 0.3637740281, 0.0, 0.5988280873],
};
// m = nn.MultiheadAttention(4, 2, kdim=3, vdim=5, batch_first=True).double(); keys = fill(m)
// q, k, v = seq([2, 3, 4], 0.2), seq([2, 4, 3], 0.8), seq([2, 4, 5], 1.4)
// o, w = m(q, k, v, attn_mask=seq([4, 3, 4], 2.2, 0.5), average_attn_weights=False)
const M2 = {
  keys: ['q_proj_weight', 'k_proj_weight', 'v_proj_weight', 'in_proj_bias', 'out_proj.weight', 'out_proj.bias'],
  out: [-0.8710165314, 0.1255778246, 0.5558403682, -0.06111579051, -0.9580840098, 0.1967086287, 0.6558069378, -0.1141183321, -0.4568285656, 0.1979478284, 0.1547762141, -0.206216071, -0.9290656255, -0.03748376541, 0.5843193438, 0.1071102694, -0.9229404644, 0.2030858229, 0.6218198535, -0.1266588546, -1.002493147, 0.31269204, 0.7212488835, -0.2182342883],
  weights: [0.4594033988, 0.3619492992, 0.125808936, 0.05283836604, 0.4409113061, 0.3592674376, 0.1354914601, 0.06432979618, 0.05309270967, 0.06470124092, 0.2260137356, 0.6561923138, 0.5191798906, 0.4159743241, 0.0530208059, 0.01182497936, 0.5957009136, 0.3710943509, 0.0289800254, 0.004224710072, 0.2370439072, 0.2150881389, 0.257179421, 0.2906885329, 0.6589205521, 0.1463475338, 0.0597490311, 0.1349828831, 0.1186593225, 0.2294358045, 0.3480374605, 0.3038674125, 0.06851719339, 0.2331530298, 0.465046473, 0.2332833038, 0.6238804086, 0.1733529994, 0.08008835221, 0.1226782398, 0.04207390051, 0.2052260062, 0.507903745, 0.2447963483, 0.005722933283, 0.120228122, 0.6891633299, 0.1848856149],
};
// m = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True).double(); keys = fill(m)
// q, k, v = seq([3, 4], 0.3), seq([4, 4], 0.9), seq([4, 4], 1.5)
// o, w = m(q, k, v, key_padding_mask=torch.tensor([False, True, False, False]))
const M3 = {
  keys: ['in_proj_weight', 'in_proj_bias', 'bias_k', 'bias_v', 'out_proj.weight', 'out_proj.bias'],
  out: [-0.1271626233, -0.6067323902, -0.3208130535, 0.5122192446, -0.1232186105, -0.6250913973, -0.3280863482, 0.5292592888, 0.07727743597, -0.07499168541, -0.4288255257, -0.03910879282],
  weights: [0.6292942228, 0.0, 0.03973390266, 0.08826515043, 0.1359637863, 0.1067429378, 0.6543373275, 0.0, 0.03587267946, 0.0758246958, 0.1314716629, 0.1024936342, 0.07819913367, 0.0, 0.4010543208, 0.179523942, 0.1588389092, 0.1823836944],
};
// m = nn.MultiheadAttention(6, 3, bias=False).double(); keys = fill(m); x = seq([4, 2, 6], 0.4)
// o, w = m(x, x, x, need_weights=False)   # w is None
const M4 = {
  keys: ['in_proj_weight', 'out_proj.weight'],
  out: [-0.4338897701, -0.006629053878, 0.4419049893, -0.5276802759, 0.196115629, 0.290555978, 0.5749163562, -0.08611464841, -0.4707947437, 0.6553547114, -0.3215976146, -0.2665095749, -0.1639599023, 0.08784601314, 0.05774488883, -0.1576656205, 0.1328893291, -0.003011470858, -0.678130716, 0.3033686957, 0.3113262481, -0.6797946764, 0.5106165828, 0.06240584687, 0.3705717668, 0.05897238963, -0.441875551, 0.4753013461, -0.1328134655, -0.3147159818, -0.4332967721, 0.2584664782, 0.1207837794, -0.4045066944, 0.3683071022, -0.04081509568, -0.4202013992, 0.08282595579, 0.3200561599, -0.4698073124, 0.2479899955, 0.1699614825, 0.6334340224, -0.04510102586, -0.5789021671, 0.7450542656, -0.3219463295, -0.3557874963],
};

const m1Masks = () => ({
  keyPaddingMask: mask([[false, false, false, false, true], [true, false, false, true, false]]),
  attnMask: tensor(Array.from({ length: 3 }, (_, i) => Array.from({ length: 5 }, (_, j) => j > i + 2)), { dtype: bool }),
});

describe('nn.MultiheadAttention against PyTorch 1.13 (float32, tolerance 1e-5)', () => {
  it('sequence-first with bool key padding and attention masks (true = masked out); weights averaged over heads', () => {
    const m = new nn.MultiheadAttention(4, 2);
    fill(m, M1.keys);
    const [out, weights] = m.forward(seq([3, 2, 4], 0.1), seq([5, 2, 4], 0.7), seq([5, 2, 4], 1.3), m1Masks());
    expect(out.shape).toEqual([3, 2, 4]);
    expect(weights!.shape).toEqual([2, 3, 5]);
    expectClose(out, M1.out, TOL);
    expectClose(weights!, M1.weights, TOL);
  });

  it('the same in float64 matches to 1e-9', () => {
    const m = new nn.MultiheadAttention(4, 2, { dtype: float64 });
    fill(m, M1.keys);
    const [out, weights] = m.forward(seq([3, 2, 4], 0.1, 1, float64), seq([5, 2, 4], 0.7, 1, float64), seq([5, 2, 4], 1.3, 1, float64), m1Masks());
    expectClose(out, M1.out, 1e-9);
    expectClose(weights!, M1.weights, 1e-9);
  });

  it('batchFirst, kdim/vdim ≠ embedDim (separate qProjWeight/kProjWeight/vProjWeight), a float 3-D mask, per-head weights', () => {
    const m = new nn.MultiheadAttention(4, 2, { kdim: 3, vdim: 5, batchFirst: true });
    expect(m.inProjWeight).toBeNull();
    fill(m, M2.keys);
    const [out, weights] = m.forward(seq([2, 3, 4], 0.2), seq([2, 4, 3], 0.8), seq([2, 4, 5], 1.4), { attnMask: seq([4, 3, 4], 2.2, 0.5), averageAttnWeights: false });
    expect(out.shape).toEqual([2, 3, 4]);
    expect(weights!.shape).toEqual([2, 2, 3, 4]);
    expectClose(out, M2.out, TOL);
    expectClose(weights!, M2.weights, TOL);
  });

  it('unbatched input with addBiasKv and addZeroAttn (keys S + 2)', () => {
    const m = new nn.MultiheadAttention(4, 2, { addBiasKv: true, addZeroAttn: true });
    fill(m, M3.keys);
    const [out, weights] = m.forward(seq([3, 4], 0.3), seq([4, 4], 0.9), seq([4, 4], 1.5), { keyPaddingMask: tensor([false, true, false, false], { dtype: bool }) });
    expect(out.shape).toEqual([3, 4]);
    expect(weights!.shape).toEqual([3, 6]);
    expectClose(out, M3.out, TOL);
    expectClose(weights!, M3.weights, TOL);
  });

  it('without bias; needWeights: false returns null weights', () => {
    const m = new nn.MultiheadAttention(6, 3, 0, false);
    expect(m.inProjBias).toBeNull();
    expect(m.outProj.bias).toBeNull();
    fill(m, M4.keys);
    const x = seq([4, 2, 6], 0.4);
    const [out, weights] = m.forward(x, x, x, null, false);
    expect(weights).toBeNull();
    expectClose(out, M4.out, TOL);
  });

  it('a float mask of −∞ where the bool mask is true gives the same result', () => {
    const m = new nn.MultiheadAttention(4, 2);
    fill(m, M1.keys);
    const { keyPaddingMask, attnMask } = m1Masks();
    const asFloat = (b: Tensor) => zeros(b.shape).maskedFill(b, -Infinity);
    const [out, weights] = m.forward(seq([3, 2, 4], 0.1), seq([5, 2, 4], 0.7), seq([5, 2, 4], 1.3), { keyPaddingMask: asFloat(keyPaddingMask), attnMask: asFloat(attnMask) });
    expectClose(out, M1.out, TOL);
    expectClose(weights!, M1.weights, TOL);
  });
});

describe('nn.MultiheadAttention parameters, modes and hints', () => {
  it('PyTorch\'s init: xavier_uniform inProjWeight, zero biases, Linear\'s init for outProj.weight, xavier_normal biasK/biasV', () => {
    manualSeed(3);
    const E = 64;
    const m = new nn.MultiheadAttention(E, 4, { addBiasKv: true });
    const w = values(m.inProjWeight!);
    const bound = Math.sqrt(6 / (E + 3 * E));
    expect(Math.max(...w.map(Math.abs))).toBeLessThanOrEqual(bound);
    expect(Math.max(...w.map(Math.abs))).toBeGreaterThan(0.95 * bound);
    expect(values(m.inProjBias!).every((x) => x === 0)).toBe(true);
    expect(values(m.outProj.bias!).every((x) => x === 0)).toBe(true);
    const ow = values(m.outProj.weight);
    expect(Math.max(...ow.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(E));
    const bk = values(m.biasK!);
    const std = Math.sqrt(bk.reduce((s, x) => s + x * x, 0) / bk.length);
    expect(std).toBeGreaterThan(0.6 / Math.sqrt(E)); // N(0, 1/E): fan_in = fan_out = E for [1, 1, E]
    expect(std).toBeLessThan(1.4 / Math.sqrt(E));
    expect(Object.keys(m.stateDict())).toEqual(['in_proj_weight', 'in_proj_bias', 'bias_k', 'bias_v', 'out_proj.weight', 'out_proj.bias']);
  });

  it('dropout applies while training only, drawn from the global generator', () => {
    const m = new nn.MultiheadAttention(4, 2, 0.5);
    fill(m, M1.keys);
    const x = [seq([3, 2, 4], 0.1), seq([5, 2, 4], 0.7), seq([5, 2, 4], 1.3)] as const;
    manualSeed(11);
    const [a] = m.forward(...x);
    manualSeed(11);
    const [b] = m.forward(...x);
    expect(values(b)).toEqual(values(a));
    m.eval();
    const [evalOut] = m.forward(...x);
    expect(values(evalOut)).not.toEqual(values(a));
    const plain = new nn.MultiheadAttention(4, 2);
    fill(plain, M1.keys);
    expectClose(evalOut, plain.forward(...x)[0], 1e-7);
  });

  it('isCausal is a hint about attnMask: the causal mask gives the same result with or without it', () => {
    const m = new nn.MultiheadAttention(4, 2);
    fill(m, M1.keys);
    const x = seq([3, 2, 4], 0.1);
    const causal = nn.Transformer.generateSquareSubsequentMask(3);
    const [ref, refW] = m.forward(x, x, x, { attnMask: causal });
    const [hinted, hintedW] = m.forward(x, x, x, { attnMask: causal, isCausal: true });
    expectClose(hinted, ref, 1e-6);
    expectClose(hintedW!, refW!, 1e-6);
    const [fast] = m.forward(x, x, x, { attnMask: causal, isCausal: true, needWeights: false });
    expectClose(fast, ref, 1e-6);
    // As PyTorch: without weights or key padding, the hint replaces the mask by the causal one.
    const [hintOnly] = m.forward(x, x, x, { attnMask: zeros([3, 3]), isCausal: true, needWeights: false });
    expectClose(hintOnly, ref, 1e-6);
  });

  describe('gradcheck (float64) with a key padding mask, a float attention mask, bias key/value and the zero key', () => {
    const m = new nn.MultiheadAttention(4, 2, { addBiasKv: true, addZeroAttn: true, dtype: float64 });
    const keyPaddingMask = mask([[false, true, false]]);
    const run = (q: Tensor, k: Tensor, v: Tensor, attnMask: Tensor) => {
      const [out, w] = m.forward(q, k, v, { keyPaddingMask, attnMask });
      return cat([out.flatten(), w!.flatten()]);
    };
    const inputs = () => [leaf([2, 1, 4], 1), leaf([3, 1, 4], 2), leaf([3, 1, 4], 3), leaf([2, 3], 4)] as const;

    it('to query, key, value and the mask', () => {
      expectGradcheck((q, k, v, a) => run(q!, k!, v!, a!), [...inputs()]);
    });

    it('to every parameter', () => {
      const [q, k, v, a] = inputs();
      expectGradcheck(() => run(q, k, v, a), m.parameters());
    });
  });
});

describe('nn.MultiheadAttention errors', () => {
  const x = seq([3, 2, 4], 0.1);

  it('embedDim not divisible by numHeads, non-positive sizes', () => {
    expect(() => new nn.MultiheadAttention(10, 3)).toThrow(ValueError);
    expect(() => new nn.MultiheadAttention(10, 3)).toThrow(/embedDim must be divisible by numHeads, got embedDim=10 and numHeads=3/);
    expect(() => new nn.MultiheadAttention(0, 1)).toThrow(/embedDim must be a positive integer/);
    expect(() => new nn.MultiheadAttention(4, 2, { kdim: -1 })).toThrow(/kdim must be a positive integer/);
    expect(() => new nn.MultiheadAttention(4, 2, { heads: 2 } as never)).toThrow(TypeError);
  });

  it('input shapes: rank, embedding size, key/value lengths', () => {
    const m = new nn.MultiheadAttention(4, 2);
    expect(() => m.forward(seq([1, 3, 2, 4], 0), x, x)).toThrow(/query should be unbatched 2D or batched 3D tensor but received 4-D query tensor/);
    expect(() => m.forward(x, seq([3, 4], 0), seq([3, 4], 0))).toThrow(/expected `key` and `value` to be 3-D but found 2-D and 2-D/);
    expect(() => m.forward(seq([3, 2, 6], 0), seq([3, 2, 6], 0), seq([3, 2, 6], 0))).toThrow(/was expecting embedding dimension of 4, but got 6/);
    expect(() => m.forward(x, seq([5, 2, 4], 0), seq([4, 2, 4], 0))).toThrow(ShapeError);
  });

  it('masks: shapes, dtypes, and isCausal without attnMask', () => {
    const m = new nn.MultiheadAttention(4, 2);
    expect(() => m.forward(x, x, x, { attnMask: zeros([3, 4]) })).toThrow(/The shape of the 2D attnMask is \[3, 4\], but should be \[3, 3\]/);
    expect(() => m.forward(x, x, x, { attnMask: zeros([2, 3, 3]) })).toThrow(/The shape of the 3D attnMask is \[2, 3, 3\], but should be \[4, 3, 3\]/);
    expect(() => m.forward(x, x, x, { keyPaddingMask: zeros([2, 4], { dtype: bool }) })).toThrow(/expecting keyPaddingMask shape of \[2, 3\], but got \[2, 4\]/);
    expect(() => m.forward(x, x, x, { keyPaddingMask: zeros([2, 3], { dtype: int32 }) })).toThrow(DTypeError);
    expect(() => m.forward(x, x, x, { isCausal: true })).toThrow(TensorError);
    expect(() => m.forward(x, x, x, { isCausal: true })).toThrow(/Need attnMask if specifying the isCausal hint/);
    expect(() => m.forward(x, x, x, { causal: true } as never)).toThrow(/unexpected keyword argument 'causal'/);
  });
});
