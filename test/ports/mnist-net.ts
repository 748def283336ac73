// pytorch/examples mnist/main.py, ported line by line to this library's PyTorch-named API: Net,
// train() and test() per epoch, Adadelta with StepLR stepped after each epoch. Module fields keep
// PyTorch's names (they are the state-dict keys); `module(x)` is `module.call(x)`; main.py's
// `with torch.no_grad():` is `noGrad(() => …)`. An optional autocast context wraps the forward
// pass and the loss, as a mixed-precision main.py would (main.py itself has none).
import type { DataLoader } from '@core/data';
import { F, nn } from '@core/nn';
import { Adadelta, StepLR } from '@core/optim';
import { autocast, noGrad, type AutocastOptions, type Tensor } from '@core/tensor';

/** main.py's network: two 3×3 convolutions, max pooling, dropout, two Linears, log-probabilities of the 10 digits. */
export class Net extends nn.Module {
  /** 1 → 32 channels, 3×3, stride 1. */
  conv1: nn.Conv2d = new nn.Conv2d(1, 32, 3, 1);
  /** 32 → 64 channels, 3×3, stride 1. */
  conv2: nn.Conv2d = new nn.Conv2d(32, 64, 3, 1);
  /** After pooling. */
  dropout1: nn.Dropout = new nn.Dropout(0.25);
  /** Before the last Linear. */
  dropout2: nn.Dropout = new nn.Dropout(0.5);
  /** 64·12·12 = 9216 → 128. */
  fc1: nn.Linear = new nn.Linear(9216, 128);
  /** 128 → 10. */
  fc2: nn.Linear = new nn.Linear(128, 10);

  /** Images [N, 1, 28, 28] → log-probabilities [N, 10]. */
  forward(x: Tensor): Tensor {
    x = this.conv1.call(x);
    x = F.relu(x);
    x = this.conv2.call(x);
    x = F.relu(x);
    x = F.maxPool2d(x, 2);
    x = this.dropout1.call(x);
    x = x.flatten(1);
    x = this.fc1.call(x);
    x = F.relu(x);
    x = this.dropout2.call(x);
    x = this.fc2.call(x);
    return F.logSoftmax(x, 1);
  }
}

/** main.py's transform: ToTensor (bytes / 255) then Normalize((0.1307,), (0.3081,)), on images [N, 1, 28, 28]. */
export function transform(images: Tensor): Tensor {
  return images.float().div(255).sub(0.1307).div(0.3081);
}

/** What main.py's argument parser gives, for the options this port reads. */
export interface Args {
  /** Epochs (each: train, test, then one StepLR step). */
  readonly epochs: number;
  /** Adadelta's learning rate. */
  readonly lr: number;
  /** StepLR's factor per epoch. */
  readonly gamma: number;
  /** The autocast region of the forward passes and losses; `{ deviceType: 'cpu', enabled: false }` is main.py's float32. */
  readonly ctx: AutocastOptions;
}

/** Batches of images [N, 1, 28, 28] and int32 digit labels [N]. */
export type Loader = DataLoader<[Tensor, Tensor]>;

/** Lets other work run between steps: a training loop must not hold the event loop. */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** One epoch of training; returns every batch's loss (main.py logs them every log_interval batches). */
export async function train(args: Args, model: Net, trainLoader: Loader, optimizer: Adadelta): Promise<number[]> {
  model.train();
  const losses: number[] = [];
  for await (const [data, target] of trainLoader) {
    optimizer.zeroGrad();
    const loss = autocast(args.ctx, () => {
      const output = model.call(data);
      return F.nllLoss(output, target);
    });
    loss.backward();
    optimizer.step();
    losses.push(await loss.item());
    await yieldToEventLoop();
  }
  return losses;
}

/** The test set's mean loss and the number of digits the model gets right. */
export async function test(args: Args, model: Net, testLoader: Loader): Promise<{ loss: number; correct: number }> {
  model.eval();
  let testLoss = 0;
  let correct = 0;
  for await (const [data, target] of testLoader) {
    const [output, batchLoss] = noGrad(() => autocast(args.ctx, () => {
      const out = model.call(data);
      return [out, F.nllLoss(out, target, { reduction: 'sum' })] as const; // sum up the batch loss
    }));
    testLoss += await batchLoss.item();
    const pred = output.argmax(1, true); // the index of the max log-probability
    correct += await pred.eq(target.viewAs(pred)).sum().item();
  }
  testLoss /= testLoader.dataset.length;
  return { loss: testLoss, correct };
}

/** Everything a run records: per-step training losses, per-epoch test results and learning rates. */
export interface RunRecord {
  /** Every training batch's loss, in order. */
  readonly losses: number[];
  /** test() after each epoch. */
  readonly tests: Array<{ loss: number; correct: number }>;
  /** The learning rate each epoch trained with. */
  readonly lrs: number[];
}

/** main.py's main loop for `model`: Adadelta, StepLR(stepSize 1), then train and test each epoch. */
export async function main(args: Args, model: Net, trainLoader: Loader, testLoader: Loader): Promise<RunRecord> {
  const optimizer = new Adadelta(model.parameters(), { lr: args.lr });
  const scheduler = new StepLR(optimizer, { stepSize: 1, gamma: args.gamma });
  const record: RunRecord = { losses: [], tests: [], lrs: [] };
  for (let epoch = 1; epoch <= args.epochs; epoch++) {
    record.lrs.push(optimizer.paramGroups[0]!.lr);
    record.losses.push(...(await train(args, model, trainLoader, optimizer)));
    record.tests.push(await test(args, model, testLoader));
    scheduler.step();
  }
  return record;
}
