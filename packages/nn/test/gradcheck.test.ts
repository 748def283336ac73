// Every differentiable functional op, from one table (OpInfo style): gradcheck in float64 by
// central differences, then the float32 gradient against the float64 one.
import { describe, it } from 'vitest';
import { float64, Generator, int32, tensor, type Tensor } from '@core/tensor';
import { F, nn } from '../src/index.js';
import { expectF32GradMatchesF64, expectGradcheck, leaf, uniform } from './helpers.js';

interface OpCase {
  readonly id: string;
  /** Built fresh per test: float64 leaves (or constants) the op is differentiated against. */
  readonly inputs: () => Tensor[];
  readonly fn: (...xs: Tensor[]) => Tensor;
  /** Relative tolerance of float32 vs float64 gradients. */
  readonly f32Tol?: number;
}

const labels = (values: number[], shape = [values.length]) => tensor(values, { dtype: int32 }).reshape(shape);

const CASES: OpCase[] = [
  // activations
  { id: 'relu', inputs: () => [leaf([3, 4], 1)], fn: (x) => F.relu(x) },
  { id: 'gelu (erf)', inputs: () => [leaf([3, 4], 2, -3, 3)], fn: (x) => F.gelu(x) },
  { id: 'gelu (tanh)', inputs: () => [leaf([3, 4], 3, -3, 3)], fn: (x) => F.gelu(x, { approximate: 'tanh' }) },
  { id: 'tanh', inputs: () => [leaf([3, 4], 4, -2, 2)], fn: (x) => F.tanh(x) },
  { id: 'sigmoid', inputs: () => [leaf([3, 4], 5, -4, 4)], fn: (x) => F.sigmoid(x) },
  { id: 'leakyRelu', inputs: () => [leaf([3, 4], 6)], fn: (x) => F.leakyRelu(x, 0.1) },
  { id: 'silu', inputs: () => [leaf([3, 4], 7, -3, 3)], fn: (x) => F.silu(x) },
  { id: 'softmax', inputs: () => [leaf([3, 5], 8, -3, 3)], fn: (x) => F.softmax(x, 1) },
  { id: 'logSoftmax', inputs: () => [leaf([4, 3], 9, -3, 3)], fn: (x) => F.logSoftmax(x, 0) },
  // linear and convolution
  { id: 'linear', inputs: () => [leaf([3, 4], 10), leaf([5, 4], 11), leaf([5], 12)], fn: (x, w, b) => F.linear(x, w, b) },
  { id: 'linear 3-D input, no bias', inputs: () => [leaf([2, 3, 4], 13), leaf([2, 4], 14)], fn: (x, w) => F.linear(x, w) },
  { id: 'conv2d', inputs: () => [leaf([2, 2, 5, 5], 20), leaf([3, 2, 3, 3], 21), leaf([3], 22)], fn: (x, w, b) => F.conv2d(x, w, b) },
  {
    id: 'conv2d stride 2, padding 1',
    inputs: () => [leaf([2, 2, 6, 5], 23), leaf([3, 2, 3, 3], 24), leaf([3], 25)],
    fn: (x, w, b) => F.conv2d(x, w, b, { stride: 2, padding: 1 }),
  },
  {
    id: 'conv2d dilation 2, padding [2, 1], stride [1, 2]',
    inputs: () => [leaf([1, 2, 7, 6], 26), leaf([2, 2, 3, 2], 27)],
    fn: (x, w) => F.conv2d(x, w, null, { dilation: 2, padding: [2, 1], stride: [1, 2] }),
  },
  {
    id: 'conv2d groups 2',
    inputs: () => [leaf([2, 4, 4, 4], 28), leaf([6, 2, 2, 2], 29), leaf([6], 30)],
    fn: (x, w, b) => F.conv2d(x, w, b, { groups: 2 }),
  },
  { id: "conv2d padding 'same', even kernel", inputs: () => [leaf([1, 1, 4, 5], 31), leaf([2, 1, 2, 3], 32)], fn: (x, w) => F.conv2d(x, w, null, { padding: 'same' }) },
  { id: 'conv2d unbatched', inputs: () => [leaf([2, 4, 4], 33), leaf([2, 2, 2, 2], 34)], fn: (x, w) => F.conv2d(x, w) },
  { id: 'conv2d tiling (stride = kernel)', inputs: () => [leaf([2, 1, 4, 5], 35), leaf([2, 1, 2, 2], 36)], fn: (x, w) => F.conv2d(x, w, null, { stride: 2 }) },
  // pooling
  { id: 'maxPool2d 2 (tiling)', inputs: () => [leaf([2, 2, 4, 5], 40)], fn: (x) => F.maxPool2d(x, 2) },
  { id: 'maxPool2d 3, stride 2, padding 1', inputs: () => [leaf([2, 2, 5, 6], 41)], fn: (x) => F.maxPool2d(x, 3, { stride: 2, padding: 1 }) },
  { id: 'maxPool2d dilation 2', inputs: () => [leaf([1, 2, 6, 6], 42)], fn: (x) => F.maxPool2d(x, 2, { stride: 1, dilation: 2 }) },
  { id: 'maxPool2d ceilMode', inputs: () => [leaf([1, 2, 5, 5], 43)], fn: (x) => F.maxPool2d(x, 2, { ceilMode: true }) },
  { id: 'maxPool2d unbatched', inputs: () => [leaf([2, 4, 4], 44)], fn: (x) => F.maxPool2d(x, [2, 1]) },
  // dropout (a fixed generator per call, so every evaluation draws the same mask)
  { id: 'dropout', inputs: () => [leaf([4, 5], 50)], fn: (x) => F.dropout(x, 0.3, true, { generator: new Generator(7) }) },
  // normalisation
  { id: 'layerNorm', inputs: () => [leaf([3, 4], 60, -2, 2), leaf([4], 61), leaf([4], 62)], fn: (x, w, b) => F.layerNorm(x, [4], w, b) },
  { id: 'layerNorm over 2 dims, no affine', inputs: () => [leaf([2, 3, 2], 63, -2, 2)], fn: (x) => F.layerNorm(x, [3, 2]) },
  {
    id: 'batchNorm train [N, C]',
    inputs: () => [leaf([5, 3], 64, -2, 2), leaf([3], 65), leaf([3], 66)],
    fn: (x, w, b) => F.batchNorm(x, uniform([3], 1).float(), uniform([3], 2, 0.5, 1.5).float(), w, b, true),
  },
  { id: 'batchNorm train [N, C, L], no affine', inputs: () => [leaf([2, 3, 4], 67, -2, 2)], fn: (x) => F.batchNorm(x, null, null, null, null, true) },
  {
    id: 'batchNorm eval',
    inputs: () => [leaf([4, 3], 68, -2, 2), leaf([3], 69), leaf([3], 70)],
    fn: (x, w, b) => F.batchNorm(x, uniform([3], 3), uniform([3], 4, 0.5, 1.5), w, b, false),
  },
  // embedding: the gradient reaches the weight, except its paddingIdx row
  { id: 'embedding', inputs: () => [leaf([5, 3], 80)], fn: (w) => F.embedding(labels([4, 0, 2, 4, 1, 2], [2, 3]), w) },
  // PyTorch gives the paddingIdx row no gradient although the output reads it (layers.test.ts
  // checks that); masking those outputs makes the numerical gradient agree.
  {
    id: 'embedding paddingIdx',
    inputs: () => [leaf([5, 3], 81)],
    fn: (w) => F.embedding(labels([4, 0, 2, 4, 1, 2]), w, 2).mul(tensor([1, 1, 0, 1, 1, 0], { dtype: w.dtype }).reshape([6, 1])),
  },
  // losses
  { id: 'crossEntropy', inputs: () => [leaf([4, 3], 90, -2, 2)], fn: (x) => F.crossEntropy(x, labels([0, 2, 1, 2])) },
  { id: 'crossEntropy weight', inputs: () => [leaf([4, 3], 91, -2, 2)], fn: (x) => F.crossEntropy(x, labels([0, 2, 1, 2]), { weight: tensor([0.2, 1, 3]) }) },
  { id: 'crossEntropy ignoreIndex', inputs: () => [leaf([4, 3], 92, -2, 2)], fn: (x) => F.crossEntropy(x, labels([0, -100, 1, 2])) },
  { id: 'crossEntropy labelSmoothing', inputs: () => [leaf([4, 3], 93, -2, 2)], fn: (x) => F.crossEntropy(x, labels([0, 2, 1, 1]), { labelSmoothing: 0.2 }) },
  {
    id: 'crossEntropy labelSmoothing + weight + ignoreIndex',
    inputs: () => [leaf([5, 3], 94, -2, 2)],
    fn: (x) => F.crossEntropy(x, labels([0, 2, 7, 1, 2]), { labelSmoothing: 0.3, weight: tensor([0.5, 2, 1.5]), ignoreIndex: 7 }),
  },
  {
    id: 'crossEntropy [N, C, d] sum',
    inputs: () => [leaf([2, 3, 4], 95, -2, 2)],
    fn: (x) => F.crossEntropy(x, labels([0, 1, 2, 0, 2, 2, 1, 0], [2, 4]), { reduction: 'sum', labelSmoothing: 0.1 }),
  },
  { id: 'crossEntropy none', inputs: () => [leaf([3, 4], 96, -2, 2)], fn: (x) => F.crossEntropy(x, labels([3, 0, 1]), { reduction: 'none' }) },
  {
    id: 'crossEntropy probabilities',
    inputs: () => [leaf([3, 4], 97, -2, 2), F.softmax(uniform([3, 4], 98, -1, 1), 1).requiresGrad_()],
    fn: (x, p) => F.crossEntropy(x, p, { labelSmoothing: 0.1, weight: tensor([1, 2, 0.5, 1]) }),
  },
  { id: 'nllLoss', inputs: () => [leaf([4, 3], 100, -3, 0)], fn: (x) => F.nllLoss(x, labels([1, 0, -100, 2]), { weight: tensor([1, 0.5, 2]) }) },
  { id: 'mseLoss', inputs: () => [leaf([3, 4], 101), leaf([3, 4], 102)], fn: (x, y) => F.mseLoss(x, y) },
  { id: 'mseLoss sum', inputs: () => [leaf([5], 103), leaf([5], 104)], fn: (x, y) => F.mseLoss(x, y, { reduction: 'sum' }) },
  { id: 'binaryCrossEntropyWithLogits', inputs: () => [leaf([3, 4], 105, -4, 4), leaf([3, 4], 106, 0, 1)], fn: (x, t) => F.binaryCrossEntropyWithLogits(x, t) },
  {
    id: 'binaryCrossEntropyWithLogits weight + posWeight',
    inputs: () => [leaf([3, 4], 107, -4, 4), leaf([3, 4], 108, 0, 1), leaf([4], 109, 0.5, 3)],
    fn: (x, t, pw) => F.binaryCrossEntropyWithLogits(x, t, { posWeight: pw, weight: tensor([1, 2, 0.5, 1]), reduction: 'sum' }),
  },
  // activations beside relu/gelu (inputs away from the kinks at 0 and ±3)
  { id: 'elu', inputs: () => [leaf([3, 4], 120, -3, 3)], fn: (x) => F.elu(x, 0.7) },
  { id: 'selu', inputs: () => [leaf([3, 4], 121, -3, 3)], fn: (x) => F.selu(x) },
  { id: 'softplus', inputs: () => [leaf([3, 4], 122, -4, 4)], fn: (x) => F.softplus(x) },
  { id: 'softplus beta 2, threshold 3 (both branches)', inputs: () => [tensor([-2, -0.4, 0.3, 1.2, 2.5, 4], { dtype: float64 }).requiresGrad_()], fn: (x) => F.softplus(x, 2, 3) },
  { id: 'mish', inputs: () => [leaf([3, 4], 123, -4, 4)], fn: (x) => F.mish(x) },
  { id: 'hardswish', inputs: () => [tensor([-5, -2.5, -0.7, 0.4, 2.2, 3.6], { dtype: float64 }).requiresGrad_()], fn: (x) => F.hardswish(x) },
  { id: 'hardsigmoid', inputs: () => [tensor([-5, -2.5, -0.7, 0.4, 2.2, 3.6], { dtype: float64 }).requiresGrad_()], fn: (x) => F.hardsigmoid(x) },
  { id: 'prelu (per channel, weight too)', inputs: () => [leaf([2, 3, 4], 124), leaf([3], 125)], fn: (x, w) => F.prelu(x, w) },
  { id: 'prelu (one slope)', inputs: () => [leaf([5], 126), leaf([1], 127)], fn: (x, w) => F.prelu(x, w) },
  { id: 'glu', inputs: () => [leaf([3, 4], 128, -3, 3)], fn: (x) => F.glu(x) },
  { id: 'glu dim 0', inputs: () => [leaf([4, 3], 129, -3, 3)], fn: (x) => F.glu(x, 0) },
  { id: 'softsign', inputs: () => [leaf([3, 4], 130, -3, 3)], fn: (x) => F.softsign(x) },
  // more losses
  { id: 'l1Loss', inputs: () => [leaf([3, 4], 131), leaf([3, 4], 132)], fn: (x, t) => F.l1Loss(x, t) },
  { id: 'smoothL1Loss beta 0.5', inputs: () => [leaf([3, 4], 133), leaf([3, 4], 134)], fn: (x, t) => F.smoothL1Loss(x, t, { beta: 0.5, reduction: 'sum' }) },
  { id: 'huberLoss delta 0.5', inputs: () => [leaf([3, 4], 135), leaf([3, 4], 136)], fn: (x, t) => F.huberLoss(x, t, { delta: 0.5, reduction: 'none' }) },
  { id: 'klDiv batchmean', inputs: () => [leaf([3, 4], 137, -3, -0.1), leaf([3, 4], 138, 0.05, 1)], fn: (x, t) => F.klDiv(x, t, { reduction: 'batchmean' }) },
  { id: 'klDiv logTarget', inputs: () => [leaf([3, 4], 139, -3, -0.1), leaf([3, 4], 140, -3, -0.1)], fn: (x, t) => F.klDiv(x, t, { logTarget: true, reduction: 'none' }) },
  {
    id: 'cosineEmbeddingLoss',
    inputs: () => [leaf([4, 5], 141), leaf([4, 5], 142)],
    fn: (a, b) => F.cosineEmbeddingLoss(a, b, tensor([1, -1, 1, -1], { dtype: a.dtype }), -0.9, { reduction: 'none' }),
  },
  { id: 'marginRankingLoss', inputs: () => [leaf([6], 143), leaf([6], 144)], fn: (a, b) => F.marginRankingLoss(a, b, tensor([1, -1, 1, -1, 1, -1], { dtype: a.dtype }), 5) },
  { id: 'cosineSimilarity', inputs: () => [leaf([3, 4], 145), leaf([3, 4], 146)], fn: (a, b) => F.cosineSimilarity(a, b) },
  { id: 'cosineSimilarity broadcast, dim -1', inputs: () => [leaf([2, 1, 3], 147), leaf([4, 3], 148)], fn: (a, b) => F.cosineSimilarity(a, b, -1) },
  { id: 'normalize', inputs: () => [leaf([3, 4], 149)], fn: (x) => F.normalize(x) },
  { id: 'normalize p 3, dim 0', inputs: () => [leaf([3, 4], 150)], fn: (x) => F.normalize(x, 3, 0) },
  // more normalisation
  { id: 'rmsNorm', inputs: () => [leaf([3, 4], 151, -2, 2), leaf([4], 152)], fn: (x, w) => F.rmsNorm(x, [4], w) },
  { id: 'rmsNorm over 2 dims, eps 0.1', inputs: () => [leaf([2, 2, 3], 153, -2, 2)], fn: (x) => F.rmsNorm(x, [2, 3], null, 0.1) },
  { id: 'groupNorm', inputs: () => [leaf([2, 4, 3], 154, -2, 2), leaf([4], 155), leaf([4], 156)], fn: (x, w, b) => F.groupNorm(x, 2, w, b) },
  { id: 'instanceNorm', inputs: () => [leaf([2, 3, 4], 157, -2, 2), leaf([3], 158), leaf([3], 159)], fn: (x, w, b) => F.instanceNorm(x, { weight: w, bias: b }) },
  // channel-wise and alpha dropout (a fixed generator per call)
  { id: 'dropout1d', inputs: () => [leaf([2, 4, 3], 160)], fn: (x) => F.dropout1d(x, 0.5, true, { generator: new Generator(8) }) },
  { id: 'dropout2d', inputs: () => [leaf([2, 4, 2, 2], 161)], fn: (x) => F.dropout2d(x, 0.5, true, { generator: new Generator(9) }) },
  { id: 'alphaDropout', inputs: () => [leaf([4, 5], 162)], fn: (x) => F.alphaDropout(x, 0.3, true, { generator: new Generator(10) }) },
  // embedding bags (the gradient reaches the weight and the per-sample weights)
  { id: 'embeddingBag mean', inputs: () => [leaf([5, 3], 163)], fn: (w) => F.embeddingBag(labels([4, 0, 2, 4, 1]), w, labels([0, 2, 2])) },
  { id: 'embeddingBag max', inputs: () => [leaf([5, 3], 164)], fn: (w) => F.embeddingBag(labels([4, 0, 2, 1], [2, 2]), w, { mode: 'max' }) },
  {
    id: 'embeddingBag sum, perSampleWeights',
    inputs: () => [leaf([5, 3], 165), leaf([5], 166)],
    fn: (w, psw) => F.embeddingBag(labels([4, 0, 2, 4, 1]), w, labels([0, 3]), { mode: 'sum', perSampleWeights: psw }),
  },
  // padding and shape
  { id: 'pad reflect', inputs: () => [leaf([1, 2, 4, 3], 110)], fn: (x) => F.pad(x, [2, 1, 1, 3], 'reflect') },
  { id: 'pad replicate', inputs: () => [leaf([2, 3], 111)], fn: (x) => F.pad(x, [2, 3], 'replicate') },
  { id: 'pad circular', inputs: () => [leaf([2, 3], 112)], fn: (x) => F.pad(x, [1, 2, 1, 0], 'circular') },
  { id: 'pad constant', inputs: () => [leaf([2, 3], 113)], fn: (x) => F.pad(x, [1, 2], 'constant', 0.5) },
  { id: 'flatten', inputs: () => [leaf([2, 3, 2], 114)], fn: (x) => F.flatten(x, 1).mul(x.flatten(1)) },
];

describe('gradcheck (float64) of every functional op', () => {
  for (const c of CASES) {
    it(c.id, () => expectGradcheck(c.fn, c.inputs()));
  }
});

describe('float32 gradients match float64 gradients', () => {
  for (const c of CASES) {
    it(c.id, () => expectF32GradMatchesF64(c.fn, c.inputs(), c.f32Tol));
  }
});

describe('gradcheck (float64) through the layers, parameters included', () => {
  const layerCases: Array<[string, () => nn.Module, number[]]> = [
    ['Linear', () => new nn.Linear(4, 3), [2, 4]],
    ['Conv2d', () => new nn.Conv2d(2, 3, 3, { padding: 1, stride: 2 }), [2, 2, 5, 5]],
    ['LayerNorm', () => new nn.LayerNorm(4), [3, 4]],
    ['BatchNorm1d (train)', () => new nn.BatchNorm1d(3), [4, 3]],
    ['BatchNorm2d (train)', () => new nn.BatchNorm2d(2), [2, 2, 2, 3]],
    ['GELU', () => new nn.GELU(), [3, 4]],
    ['Sequential MLP', () => new nn.Sequential(new nn.Linear(3, 4), new nn.Tanh(), new nn.Linear(4, 2)), [2, 3]],
    ['MaxPool2d', () => new nn.MaxPool2d(2), [1, 2, 4, 4]],
    ['PReLU', () => new nn.PReLU(2), [3, 2, 2]],
    ['RMSNorm', () => new nn.RMSNorm(4), [3, 4]],
    ['GroupNorm', () => new nn.GroupNorm(2, 4), [2, 4, 3]],
    ['InstanceNorm1d (affine)', () => new nn.InstanceNorm1d(3, { affine: true }), [2, 3, 4]],
  ];
  for (const [id, make, shape] of layerCases) {
    it(id, () => {
      const layer = make().double();
      const x = leaf(shape, 7, -2, 2);
      expectGradcheck((input) => layer.forward(input), [x, ...layer.parameters()]);
    });
  }

  it('Embedding', () => {
    const layer = new nn.Embedding(6, 3, { paddingIdx: 0 }).double();
    const notPadding = tensor([1, 0, 1, 1], { dtype: layer.weight.dtype }).reshape([4, 1]);
    expectGradcheck(() => layer.forward(labels([1, 0, 5, 5])).mul(notPadding), layer.parameters());
  });
});
