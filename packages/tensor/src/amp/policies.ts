// Autocast policy tables, one per device type, with PyTorch's op lists (AC-8..AC-13) in this
// library's camelCase names. Ops not listed run in their inputs' dtypes.
import { bfloat16, float16, type DType } from '../dtype/dtype.js';

/**
 * A device type's autocast policy: the region dtypes and which ops cast their args how (see `registerAutocastPolicy`).
 */
export interface AutocastPolicyTable {
  /** The region dtype when none is given (AC-2). */
  readonly defaultDtype: DType;
  /** Low-precision dtypes a region may ask for (AC-3). */
  readonly allowedDtypes: readonly DType[];
  /** lower_precision_fp (AC-8): eligible args cast to the region dtype. */
  readonly lowerPrecision: readonly string[];
  /** fp32 (AC-9): eligible args cast to float32. */
  readonly fp32: readonly string[];
  /** fp32_set_opt_dtype (AC-10): the op runs in float32 when its first arg is eligible. */
  readonly fp32FirstArg: readonly string[];
  /** promote (AC-12): eligible args cast to the widest of them and the region dtype. */
  readonly promote: readonly string[];
  /** Ops that refuse to run in a region, with the reason (AC-13). */
  readonly banned: Readonly<Record<string, string>>;
}

const CUDA_LOWER = [
  'conv1d', 'conv2d', 'conv3d', 'convTbc', 'convTranspose1d', 'convTranspose2d', 'convTranspose3d', 'convolution',
  'addmm', 'addmv', 'addr', 'matmul', 'einsum', 'mm', 'mv', 'linalgVecdot', 'linear', 'addbmm', 'baddbmm', 'bmm',
  'chainMatmul', 'linalgMultiDot', 'lstmCell', 'gruCell', 'rnnTanhCell', 'rnnReluCell', 'prelu',
  'scaledDotProductAttention',
];

const CUDA_FP32 = [
  'acos', 'asin', 'cosh', 'erfinv', 'exp', 'expm1', 'log', 'log10', 'log2', 'log1p', 'reciprocal', 'rsqrt', 'sinh',
  'tan', 'pow', 'softplus', 'layerNorm', 'groupNorm', 'frobeniusNorm', 'nuclearNorm',
  'poissonNllLoss', 'cosineEmbeddingLoss', 'nllLoss', 'nllLoss2d', 'hingeEmbeddingLoss', 'klDiv', 'l1Loss',
  'smoothL1Loss', 'huberLoss', 'mseLoss', 'marginRankingLoss', 'multilabelMarginLoss', 'softMarginLoss',
  'tripletMarginLoss', 'multiMarginLoss', 'binaryCrossEntropyWithLogits',
  'cosineSimilarity', 'dist', 'pdist', 'cdist', 'renorm', 'logSumExp',
  'upsampleNearest1d', 'upsampleNearest2d', 'upsampleNearest3d', 'upsampleLinear1d', 'upsampleBilinear2d',
  'upsampleTrilinear3d', 'upsampleBicubic2d',
  // Composites PyTorch runs in float32 because their parts are listed (AC-9).
  'crossEntropy', 'normalize', 'softmin',
];

const CUDA_FP32_FIRST_ARG = ['prod', 'softmax', 'logSoftmax', 'cumprod', 'cumsum', 'linalgVectorNorm', 'linalgMatrixNorm', 'sum'];

const CUDA_PROMOTE = ['addcdiv', 'addcmul', 'atan2', 'bilinear', 'cross', 'dot', 'vdot', 'gridSampler', 'indexPut', 'tensordot', 'scatterAdd'];

const BCE_UNSAFE =
  'torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n' +
  'Many models use a sigmoid layer right before the binary cross entropy layer. In this case, combine the two layers ' +
  'using F.binaryCrossEntropyWithLogits or nn.BCEWithLogitsLoss, which are safe to autocast.';

const CPU_LOWER = [
  'conv1d', 'conv2d', 'conv3d', 'convTbc', 'convTranspose1d', 'convTranspose2d', 'convTranspose3d', 'convolution',
  'bmm', 'mm', 'linalgVecdot', 'baddbmm', 'addmm', 'addmmActivation', 'addbmm', 'linear', 'matmul',
  'mkldnnRnnLayer', 'prelu', 'scaledDotProductAttention', 'nativeMultiHeadAttention',
];

const CPU_FP32 = [
  'avgPool3d', 'maxPool3d', 'maxUnpool2d', 'maxUnpool3d', 'adaptiveAvgPool3d', 'adaptiveMaxPool3d',
  'fractionalMaxPool2d', 'fractionalMaxPool3d', 'reflectionPad1d', 'reflectionPad2d', 'replicationPad1d',
  'replicationPad2d', 'replicationPad3d',
  'binaryCrossEntropy', 'mseLoss', 'cosineEmbeddingLoss', 'nllLoss', 'nllLoss2d', 'hingeEmbeddingLoss', 'poissonNllLoss',
  'smoothL1Loss', 'crossEntropy', 'l1Loss', 'huberLoss', 'marginRankingLoss', 'softMarginLoss', 'tripletMarginLoss',
  'multiMarginLoss', 'ctcLoss', 'klDiv', 'multilabelMarginLoss', 'binaryCrossEntropyWithLogits',
  'cholesky', 'choleskyInverse', 'choleskySolve', 'inverse', 'luSolve', 'orgqr', 'ormqr', 'pinverse', 'geqrf', 'qr',
  'svd', 'triangularSolve', 'linalgCond', 'linalgMatrixRank', 'linalgSolve', 'linalgCholesky', 'linalgSvdvals',
  'linalgEigvals', 'linalgEigvalsh', 'linalgInv', 'linalgHouseholderProduct', 'linalgTensorinv', 'linalgTensorsolve',
  'linalgQr', 'linalgSvd', 'linalgEig', 'linalgEigh', 'linalgLstsq',
  'fftFft', 'fftIfft', 'fftFft2', 'fftIfft2', 'fftFftn', 'fftIfftn', 'fftRfft', 'fftIrfft', 'fftRfft2', 'fftIrfft2',
  'fftRfftn', 'fftIrfftn', 'fftHfft', 'fftIhfft',
  'gridSampler', 'polar', 'prod', 'quantile', 'nanquantile', 'stft', 'cdist', 'trace', 'viewAsComplex',
  'fakeQuantizePerTensorAffine',
];

const CPU_PROMOTE = ['stack', 'cat', 'indexCopy'];

const CUDA_TABLE: AutocastPolicyTable = {
  defaultDtype: float16,
  allowedDtypes: [float16, bfloat16],
  lowerPrecision: CUDA_LOWER,
  fp32: CUDA_FP32,
  fp32FirstArg: CUDA_FP32_FIRST_ARG,
  promote: CUDA_PROMOTE,
  banned: { binaryCrossEntropy: BCE_UNSAFE },
};

/** Built-in tables: cuda and cpu follow PyTorch; webgpu uses CUDA's lists with float16 (GPU-like numerics). */
export const BUILTIN_POLICIES: Readonly<Record<string, AutocastPolicyTable>> = {
  cuda: CUDA_TABLE,
  cpu: {
    defaultDtype: bfloat16,
    allowedDtypes: [bfloat16, float16],
    lowerPrecision: CPU_LOWER,
    fp32: CPU_FP32,
    fp32FirstArg: [],
    promote: CPU_PROMOTE,
    banned: {},
  },
  webgpu: { ...CUDA_TABLE, defaultDtype: float16 },
};
