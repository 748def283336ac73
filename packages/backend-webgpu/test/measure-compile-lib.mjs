// compile() against eager on webgpu for two training steps, as measure-compile.mjs reports them:
// the MLP 784→256→10 (batch 128, SGD) and nanoGPT's 2-layer GPT of the benchmarks (64 wide, 4
// heads, block 32, 65 tokens; batch 8, AdamW). Per step: dispatches and submits (backend stats),
// the host time of the call until its work is submitted (the step's JavaScript, the encoding and
// the submit, which the backend makes in a microtask the step queued; the device idle: each step
// waits for the previous one outside the timed region, and nothing is read back inside it), that
// host time per dispatch, and the time until the device is done. Then the same steps queued back to
// back (each called while the device still runs the ones before, as a training loop that reads its
// loss only now and then does): their host time per dispatch, the first of them left out. On the
// software devices here, a step after an idle device runs its JavaScript cold (the device's
// threads have had the two cores for seconds), so the two figures bracket what a GPU would see.
// No Node APIs: it runs in Node (Dawn) and in a browser page alike.
import { F, nn } from '@core/nn';
import { AdamW, SGD } from '@core/optim';
import { compile, int32, manualSeed, randint, randn } from '@core/tensor';
import { GPT, trainingStep } from '../../../test/bench/lib/programs.mjs';

/** A training step of `model` on fixed inputs, and the inputs. */
const workloads = {
  'MLP 784-256-10, batch 128, SGD': () => {
    manualSeed(0);
    const model = new nn.Sequential(new nn.Linear(784, 256), new nn.ReLU(), new nn.Linear(256, 10));
    const step = trainingStep(new SGD(model.parameters(), { lr: 0.01 }), (x, y) => F.crossEntropy(model.call(x), y));
    return { step, inputs: [randn([128, 784]), randint(0, 10, [128])] };
  },
  'GPT 2 layers, 64 wide, block 32, batch 8, AdamW': () => {
    manualSeed(0);
    const model = new GPT({ vocabSize: 65, blockSize: 32, nLayer: 2, nHead: 4, nEmbd: 64 });
    const step = trainingStep(new AdamW(model.parameters(), { lr: 1e-3 }), (idx, targets) => model.call(idx, targets));
    return { step, inputs: [randint(0, 65, [8, 32], { dtype: int32 }), randint(0, 65, [8, 32], { dtype: int32 })] };
  },
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function measure(backend, steps, make, mode) {
  const { step: raw, inputs } = make();
  const prepare = backend.prepare;
  if (mode === 'interpreter') delete backend.prepare; // compile reads it when it builds a program
  const step = mode === 'eager' ? raw : compile(raw);
  try {
    for (let i = 0; i < 5; i++) await step(...inputs).item(); // tracing (and the optimizer's state)
  } finally {
    backend.prepare = prepare;
  }
  const host = [];
  const done = [];
  const before = backend.stats();
  for (let i = 0; i < steps; i++) {
    await backend.synchronize(0);
    const submitted = backend.stats().submits;
    const t0 = performance.now();
    step(...inputs);
    // The runtime submits what the step queued in a microtask queued before this await resumes.
    await Promise.resolve();
    const t1 = performance.now();
    if (backend.stats().submits === submitted) throw new Error(`${mode}: the step's work was not submitted when its host time ended`);
    await backend.synchronize(0);
    host.push(t1 - t0);
    done.push(performance.now() - t0);
  }
  const after = backend.stats();
  const queued = [];
  await backend.synchronize(0);
  for (let i = 0; i <= steps; i++) {
    const t0 = performance.now();
    step(...inputs);
    await Promise.resolve();
    if (i > 0) queued.push(performance.now() - t0); // the first follows an idle device
  }
  await backend.synchronize(0);
  const replay = mode === 'eager' ? '' : step.explain().programs[0]?.replay ?? 'no program';
  return {
    dispatches: (after.dispatches - before.dispatches) / steps,
    // Each step ends with a synchronize(), which submits what the step queued.
    submits: (after.submits - before.submits) / steps,
    host: median(host),
    queued: median(queued),
    done: median(done),
    replay,
  };
}

/**
 * The Markdown table of `backend` (registered as the default device): each workload eager, compiled
 * with the interpreter replay (prepare hidden) and compiled with prepared programs, `steps` steps a figure.
 */
export async function measureCompile(backend, steps) {
  const lines = [
    `adapter: ${backend.adapterInfo}; ${steps} steps per figure, medians`,
    '',
    '| step | mode | dispatches / step | submits / step | host ms / step | host µs / dispatch | queued: host ms / step | queued: host µs / dispatch | ms / step until done |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, make] of Object.entries(workloads)) {
    for (const mode of ['eager', 'interpreter', 'prepared']) {
      const r = await measure(backend, steps, make, mode);
      const perDispatch = (ms) => ((ms * 1000) / r.dispatches).toFixed(2);
      lines.push(`| ${name} | ${mode === 'eager' ? 'eager' : `compiled, ${mode} replay`} | ${r.dispatches} | ${r.submits} | ${r.host.toFixed(2)} | ${perDispatch(r.host)} | ${r.queued.toFixed(2)} | ${perDispatch(r.queued)} | ${r.done.toFixed(2)} |`);
      if (mode === 'prepared' && !r.replay.startsWith('prepared')) throw new Error(`expected a prepared replay, got: ${r.replay}`);
    }
  }
  return lines.join('\n');
}
