// The float64 reference oracle, for backend authors who want to check a kernel on its own.
export * from './ndarray.js';
export { roundTo, roundArray, storeResult, unitRoundoff, accumulatorOf, promote, limits, FLOAT_DTYPES, ALL_DTYPES } from './dtype.js';
export { UNARY, BINARY, COMPARE, UNARY_INT, BINARY_INT, BINARY_BOOL, erf, roundHalfEven, cPow, pyRemainder } from './scalar.js';
/** Reference implementations of reductions, matmul, indexing and the composite ops. */
export * as ops from './ops.js';
export { numericGradients } from './grad.js';
export { philoxBlock, philoxWords, keyOf, uniformFromWord, randintFromWord } from './philox.js';
export { sgdStep, adamStep, newAdamState } from './optim.js';
export { mlpLossAndGrads, trainReference } from './mlp.js';
export { invScale, hasNonFinite, unscaleValue, updateScale, scaleTrajectory, type ScaleState } from './amp.js';
