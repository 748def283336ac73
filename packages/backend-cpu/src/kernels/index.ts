// The CPU kernel set. Backends take any `Kernels<CpuStorage>`, so a WebAssembly implementation
// can replace these per family (or wholesale) without touching storage or the backend object.
import type { Kernels } from '@core/tensor';
import type { CpuStorage } from '../storage.js';
import { cast } from './cast.js';
import { copy, fill } from './copy.js';
import { binary, compare, unary, where } from './elementwise.js';
import { gather, scatter, scatterAdd } from './indexing.js';
import { matmul } from './matmul.js';
import { argsort, cumulative } from './ordering.js';
import { random } from './random.js';
import { argReduce, reduce } from './reduce.js';

/**
 * The CPU backend's primitives in TypeScript: synchronous loops over strided host arrays (half types computed in float32, rounded once on store).
 */
export const CpuKernels: Kernels<CpuStorage> = {
  unary,
  binary,
  compare,
  where,
  cast,
  copy,
  fill,
  reduce,
  argReduce,
  matmul,
  gather,
  scatterAdd,
  random,
  argsort,
  cumulative,
  scatter,
};

export { CpuFused } from './fused.js';
