// The two models of examples/train-mnist (same layers, same seed → same weights).
import { nn } from '@core/nn';

export type ModelKind = 'cnn' | 'mlp';

export function buildModel(kind: ModelKind): nn.Module {
  if (kind === 'mlp') {
    return new nn.Sequential(new nn.Flatten(), new nn.Linear(784, 256), new nn.ReLU(), new nn.Linear(256, 10));
  }
  return new nn.Sequential(
    new nn.Conv2d(1, 8, 3, { padding: 1 }), new nn.ReLU(), new nn.MaxPool2d(2), // → 8×14×14
    new nn.Conv2d(8, 16, 3, { padding: 1 }), new nn.ReLU(), new nn.MaxPool2d(2), // → 16×7×7
    new nn.Flatten(), new nn.Linear(16 * 7 * 7, 64), new nn.ReLU(), new nn.Linear(64, 10),
  );
}
