// What the training, checkpoint and sampling tests share: the real text, tokenised once, and a
// run small enough to take a few seconds.
import { CharVocab, loadMobyDick, splitTokens } from '../src/text.js';
import type { TokenSplit, TrainConfig } from '../src/train.js';

const text = loadMobyDick();
/** The book's vocabulary. */
export const vocab = CharVocab.of(text);
/** The book as token ids, split 90/10. */
export const data: TokenSplit = { vocabSize: vocab.size, ...splitTokens(vocab.encode(text)) };

/** A tiny model trained for a few dozen steps on the cpu. */
export const tinyRun: TrainConfig = {
  model: { blockSize: 16, nLayer: 1, nHead: 2, nEmbd: 16, dropout: 0, bias: true },
  device: 'cpu', amp: 'off', seed: 3, steps: 40, batchSize: 8, lr: 1e-2, minLr: 1e-3, warmupSteps: 5,
  weightDecay: 0.1, betas: [0.9, 0.99], gradClip: 1, evalInterval: 20, evalBatches: 2,
};
