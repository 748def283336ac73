// The digits the build packed (see mnist-asset.ts): fetched as one gzipped binary, inflated,
// split once with a fixed seed into train and held-out test sets.
import { Generator, int32, randint, tensor, type Tensor } from '@core/tensor';
import url, { count } from 'virtual:mnist-digits';
import { fetchGzipped } from './page';

const SIDE = 28;
const PIXELS = SIDE * SIDE;
const SPLIT_SEED = 20_251_130;

export interface MnistSplit {
  readonly trainImages: Tensor; // [n, 1, 28, 28] float32 in [0, 1]
  readonly trainLabels: Tensor; // [n] int32
  readonly testImages: Tensor;
  readonly testLabels: Tensor;
}

/** Fisher–Yates over the counter-based generator: the same split in every browser. */
function permutation(n: number, seed: number): Int32Array {
  const order = Int32Array.from({ length: n }, (_, i) => i);
  const draws = randint(0, 2 ** 31 - 1, [n], { generator: new Generator(seed) }).dataSync();
  for (let i = n - 1; i > 0; i--) {
    const j = draws[i]! % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

export async function loadMnist({ testSize = 1000 }: { testSize?: number } = {}): Promise<MnistSplit & { total: number }> {
  const bytes = await fetchGzipped(url, count * (PIXELS + 1), 'the digits');
  const order = permutation(count, SPLIT_SEED);
  const take = (indices: Int32Array) => {
    const img = new Float32Array(indices.length * PIXELS);
    const lab = new Int32Array(indices.length);
    indices.forEach((src, i) => {
      for (let p = 0; p < PIXELS; p++) img[i * PIXELS + p] = bytes[src * PIXELS + p]! / 255;
      lab[i] = bytes[count * PIXELS + src]!;
    });
    return { images: tensor(img).reshape([indices.length, 1, SIDE, SIDE]), labels: tensor(lab, { dtype: int32 }) };
  };
  const train = take(order.subarray(0, count - testSize));
  const test = take(order.subarray(count - testSize));
  return { trainImages: train.images, trainLabels: train.labels, testImages: test.images, testLabels: test.labels, total: count };
}
