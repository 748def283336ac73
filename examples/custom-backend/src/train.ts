// Train a tiny classifier a few steps on the 'jsref' device with raw tensor ops and @core/optim,
// counting the kernels the backend runs. `npm start` runs it; the tests compare it with the cpu.
import { Adam } from '@core/optim';
import { manualSeed, randint, randn, registerBackend, type DeviceLike, type Tensor } from '@core/tensor';
import { createJsRefBackend, NAME } from './backend.js';

export interface TrainResult {
  readonly losses: number[];
  readonly accuracy: number;
}

/** Two-layer MLP on 64 points of 4 well-separated Gaussian blobs in 8-D, trained with Adam. */
export async function trainTiny(device: DeviceLike, steps = 20): Promise<TrainResult> {
  manualSeed(0); // the same numbers on every backend: the data and weights do not depend on the device
  const classes = 4;
  const y = randint(0, classes, [64], { device });
  const centers = randn([classes, 8], { device }).mul(3);
  const x = centers.indexSelect(0, y).add(randn([64, 8], { device }));
  const w1 = randn([8, 16], { device }).mul(0.3).requiresGrad_();
  const b1 = randn([16], { device }).mul(0).requiresGrad_();
  const w2 = randn([16, classes], { device }).mul(0.3).requiresGrad_();
  const b2 = randn([classes], { device }).mul(0).requiresGrad_();
  const opt = new Adam([w1, b1, w2, b2], { lr: 0.05 });
  const forward = (): Tensor => x.matmul(w1).add(b1).relu().matmul(w2).add(b2);
  const losses: number[] = [];
  for (let step = 0; step < steps; step++) {
    opt.zeroGrad();
    const logits = forward();
    const loss = logits.logSoftmax(1).gather(1, y.unsqueeze(1)).mean().neg();
    loss.backward();
    opt.step();
    losses.push(await loss.item()); // reading waits for the device
  }
  const correct = await forward().argmax(1).eq(y).sum().item();
  return { losses, accuracy: correct / 64 };
}

async function main(): Promise<void> {
  const counts = new Map<string, number>();
  // Re-register with a kernel hook: every primitive the backend runs is counted.
  registerBackend({ name: NAME, priority: 10, create: () => createJsRefBackend({ onKernel: (k) => counts.set(k, (counts.get(k) ?? 0) + 1) }) });
  const { losses, accuracy } = await trainTiny(`${NAME}:0`);
  losses.forEach((l, i) => { if (i % 4 === 0 || i === losses.length - 1) console.log(`step ${String(i).padStart(2)}  loss ${l.toFixed(4)}`); });
  console.log(`accuracy after ${losses.length} steps: ${(accuracy * 100).toFixed(0)}%`);
  const top = [...counts].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, n]) => `${k} ×${n}`);
  console.log(`kernels run on ${NAME}: ${[...counts.values()].reduce((a, b) => a + b, 0)} (${top.join(', ')}, …)`);
}

if (typeof process !== 'undefined' && process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  await main();
}
