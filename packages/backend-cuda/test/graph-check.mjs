// The cuda backend's prepared programs (CUDA graphs, src/prepared.ts) through the fake driver, run by
// fake-driver-run.mjs ('graphs'): each check returns plain data that fake-driver.test.ts asserts on.
// Also used by native/cuda/gpu-check/main.mjs on a real GPU (compiledTraining only).
import { compile, getBackend, manualSeed, randint, randn } from '@core/tensor';

const rowMajor = (shape) => {
  const out = [];
  let acc = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    out[d] = acc;
    acc *= shape[d];
  }
  return out;
};
const seq = (n, scale = 0.37, shift = 0) => Array.from({ length: n }, (_, i) => Math.fround(Math.sin(i * scale + shift) * 2));

/** A float32 ref over a new storage of `cuda` holding `values`. */
function put(cuda, values, shape = [values.length]) {
  const storage = cuda.alloc(0, 'float32', values.length);
  cuda.write(storage, Float32Array.from(values), 0);
  return { storage, dtype: 'float32', shape, strides: rowMajor(shape), offset: 0 };
}
const values = async (cuda, r) => Array.from(await cuda.read(r.storage));
const call = (run, varies = false) => ({ run, varies });
const stats = (cuda) => cuda.stats(0);
const errorOf = (f) => {
  try {
    f();
    return null;
  } catch (e) {
    return e.message;
  }
};

/** neg, add, a host write of new data into `x`, mul: two graphs around a call. */
async function segments(cuda) {
  const x = put(cuda, seq(8));
  const y = put(cuda, seq(8, 0.5, 1));
  const n = put(cuda, new Array(8).fill(7));
  const s = put(cuda, new Array(8).fill(7));
  const m = put(cuda, new Array(8).fill(7));
  let fresh = seq(8, 0.2, 3);
  const program = cuda.prepare([
    call(() => cuda.kernels.unary('neg', x, n)),
    call(() => cuda.kernels.binary('add', n, y, s)),
    call(() => cuda.write(x.storage, Float32Array.from(fresh), 0)),
    call(() => cuda.kernels.binary('mul', x, s, m)),
  ]);
  // Nothing ran at prepare: the outputs still hold what was written, x its first data.
  const afterPrepare = { n: await values(cuda, n), m: await values(cuda, m), x: await values(cuda, x) };
  const before = stats(cuda);
  const runs = [];
  for (let i = 0; i < 3; i++) {
    const x0 = await values(cuda, x);
    program.run();
    runs.push({ x0, n: await values(cuda, n), s: await values(cuda, s), m: await values(cuda, m), fresh: [...fresh] });
    fresh = seq(8, 0.2, 4 + i);
  }
  const after = stats(cuda);
  // What the kernels give made one by one, for the last run's inputs.
  const last = runs.at(-1);
  const ex = put(cuda, last.x0), en = put(cuda, new Array(8).fill(0)), es = put(cuda, new Array(8).fill(0)), em = put(cuda, new Array(8).fill(0));
  cuda.kernels.unary('neg', ex, en);
  cuda.kernels.binary('add', en, y, es);
  cuda.write(ex.storage, Float32Array.from(last.fresh), 0);
  cuda.kernels.binary('mul', ex, es, em);
  const eager = { n: await values(cuda, en), s: await values(cuda, es), m: await values(cuda, em) };
  const liveGraphs = stats(cuda).graphs;
  program.release();
  program.release();
  return {
    description: program.description,
    afterPrepare,
    runs,
    eager,
    graphLaunches: after.graphLaunches - before.graphLaunches,
    launches: after.launches - before.launches,
    liveGraphs,
    graphsAfterRelease: stats(cuda).graphs,
    runAfterRelease: errorOf(() => program.run()),
  };
}

/** A varying call (another input storage each run) between fixed ones. */
async function varying(cuda) {
  const a = put(cuda, seq(6)), b = put(cuda, seq(6, 0.9, 2));
  const t = put(cuda, new Array(6).fill(0)), out = put(cuda, new Array(6).fill(0));
  let input = a;
  const program = cuda.prepare([call(() => cuda.kernels.unary('relu', input, t), true), call(() => cuda.kernels.unary('exp', t, out))]);
  const got = [];
  for (const next of [a, b, a]) {
    input = next;
    program.run();
    got.push(await values(cuda, out));
  }
  const want = [];
  for (const next of [a, b, a]) {
    cuda.kernels.unary('relu', next, t);
    cuda.kernels.unary('exp', t, out);
    want.push(await values(cuda, out));
  }
  program.release();
  return { description: program.description, got, want };
}

/** A storage a graph addresses freed while the program lives. */
async function freed(cuda) {
  const x = put(cuda, seq(24)), out = put(cuda, new Array(24).fill(0));
  const program = cuda.prepare([call(() => cuda.kernels.unary('abs', x, out))]);
  program.run();
  const launched = stats(cuda).graphLaunches;
  cuda.free(x.storage);
  const error = errorOf(() => program.run());
  const result = { error, launchedAfterFree: stats(cuda).graphLaunches - launched };
  program.release();
  return result;
}

/** A call that throws mid-capture: prepare throws, the stream still works, no graph is left. */
async function failedCapture(cuda) {
  const x = put(cuda, seq(4)), y = put(cuda, seq(4, 0.3)), out = put(cuda, new Array(4).fill(0));
  const graphs = stats(cuda).graphs;
  const error = errorOf(() => cuda.prepare([
    call(() => cuda.kernels.unary('neg', x, out)),
    call(() => cuda.kernels.binary('add', x, y, out)),
    call(() => cuda.write(y.storage, Float32Array.from([1, 2, 3, 4]), 0)),
    call(() => cuda.kernels.unary('exp', x, out)),
    call(() => { throw new Error('a call failed'); }),
  ]));
  // The compute stream takes work and host copies again.
  cuda.write(y.storage, Float32Array.from([5, 6, 7, 8]), 0);
  cuda.kernels.binary('add', x, y, out);
  return { error, out: await values(cuda, out), x: await values(cuda, x), y: await values(cuda, y), graphsLeft: stats(cuda).graphs - graphs };
}

/**
 * A driver error inside a capture (FAKE_CUDA_CAPTURE_FAIL=3: the third captured launch fails and
 * invalidates the capture) after a first graph was made: prepare throws, gives that graph back and
 * leaves the stream usable; the same calls prepared again run right.
 */
export async function driverFailure() {
  const cuda = getBackend('cuda');
  const x = put(cuda, seq(4)), y = put(cuda, seq(4, 0.3)), s = put(cuda, new Array(4).fill(0)), out = put(cuda, new Array(4).fill(0));
  const calls = [
    call(() => cuda.kernels.binary('add', x, y, s)),
    call(() => cuda.kernels.unary('neg', s, s)),
    call(() => cuda.write(y.storage, Float32Array.from([1, 2, 3, 4]), 0)),
    call(() => cuda.kernels.binary('mul', s, y, out)),
  ];
  const graphs = stats(cuda).graphs;
  const error = errorOf(() => cuda.prepare(calls));
  const graphsLeft = stats(cuda).graphs - graphs;
  // The stream takes work, host copies and reads again.
  cuda.kernels.binary('sub', x, y, out);
  const eager = await values(cuda, out);
  const program = cuda.prepare(calls);
  program.run();
  const again = { description: program.description, out: await values(cuda, out) };
  program.release();
  return { error, graphsLeft, eager, x: await values(cuda, x), again };
}

/** Calls on cuda:0, cuda:1, cuda:0 (FAKE_CUDA_DEVICES=2): a graph each, as each capture holds one device's stream. */
export async function twoDevices() {
  const cuda = getBackend('cuda');
  const on = (device, values) => {
    const storage = cuda.alloc(device, 'float32', values.length);
    cuda.write(storage, Float32Array.from(values), 0);
    return { storage, dtype: 'float32', shape: [values.length], strides: [1], offset: 0 };
  };
  const x0 = on(0, seq(4)), a0 = on(0, [9, 9, 9, 9]), b0 = on(0, [9, 9, 9, 9]);
  const x1 = on(1, seq(4, 0.3)), a1 = on(1, [9, 9, 9, 9]);
  const program = cuda.prepare([
    call(() => cuda.kernels.unary('neg', x0, a0)),
    call(() => cuda.kernels.unary('exp', x1, a1)),
    call(() => cuda.kernels.binary('add', a0, x0, b0)),
  ]);
  const afterPrepare = [await values(cuda, a0), await values(cuda, a1), await values(cuda, b0)];
  program.run();
  const ran = [await values(cuda, a0), await values(cuda, a1), await values(cuda, b0)];
  program.release();
  return { description: program.description, afterPrepare, ran, graphs: [cuda.stats(0).graphLaunches, cuda.stats(1).graphLaunches] };
}

/** Empty tensors queue nothing: a program of them has no graph, and one beside a write is left out of runs. */
async function empties(cuda) {
  const e = { storage: cuda.alloc(0, 'float32', 0), dtype: 'float32', shape: [0], strides: [1], offset: 0 };
  const x = put(cuda, seq(4)), out = put(cuda, new Array(4).fill(0));
  const none = cuda.prepare([call(() => cuda.kernels.unary('neg', e, e))]);
  none.run();
  const mixed = cuda.prepare([
    call(() => cuda.kernels.unary('neg', e, e)),
    call(() => cuda.write(x.storage, Float32Array.from([1, 2, 3, 4]), 0)),
    call(() => cuda.kernels.unary('neg', e, e)),
    call(() => cuda.kernels.unary('neg', x, out)),
  ]);
  mixed.run();
  const result = { none: none.description, mixed: mixed.description, out: await values(cuda, out) };
  none.release();
  mixed.release();
  return result;
}

/** matmul: captured with our kernels, made as a call with cuBLASLt. */
async function gemm(cuda, mode) {
  cuda.setGemmMode(0, mode);
  const a = put(cuda, seq(64), [1, 8, 8]), b = put(cuda, seq(64, 0.2), [1, 8, 8]);
  const c = put(cuda, new Array(64).fill(0), [1, 8, 8]), d = put(cuda, new Array(64).fill(0), [1, 8, 8]);
  const program = cuda.prepare([call(() => cuda.kernels.matmul(a, b, c, 'float32')), call(() => cuda.kernels.unary('tanh', c, d))]);
  program.run();
  const got = await values(cuda, d);
  cuda.kernels.matmul(a, b, c, 'float32');
  cuda.kernels.unary('tanh', c, d);
  const want = await values(cuda, d);
  program.release();
  cuda.setGemmMode(0, 'auto');
  return { description: program.description, same: got.every((v, i) => Object.is(v, want[i])) };
}

const bits = async (t) => Array.from(new Uint32Array(new Float32Array(await t.data()).buffer));

/**
 * `steps` training steps of a small model (an MLP, or a conv net) with SGD (momentum) or Adam, eager and
 * compiled on cuda: each step's loss bits and the parameters' bits at the end, and explain()'s replay line.
 */
export async function compiledTraining({ nn, F, optim }, { model: kind, optimizer, steps }) {
  const device = 'cuda';
  manualSeed(5);
  const shape = kind === 'conv' ? [8, 1, 8, 8] : [16, 12];
  const data = Array.from({ length: 4 }, () => ({ x: randn(shape).to(device), y: randint(0, 4, [shape[0]]).to(device) }));
  const build = () => {
    manualSeed(11);
    const model = kind === 'conv'
      ? new nn.Sequential(new nn.Conv2d(1, 4, 3, { padding: 1 }), new nn.ReLU(), new nn.MaxPool2d(2), new nn.Flatten(), new nn.Linear(64, 4))
      : new nn.Sequential(new nn.Linear(12, 32), new nn.ReLU(), new nn.Linear(32, 16), new nn.Tanh(), new nn.Linear(16, 4));
    model.to(device);
    const params = model.parameters();
    const opt = optimizer === 'adam' ? new optim.Adam(params, { lr: 0.01 }) : new optim.SGD(params, { lr: 0.05, momentum: 0.9 });
    const step = (x, y) => {
      opt.zeroGrad();
      const loss = F.crossEntropy(model.forward(x), y);
      loss.backward();
      opt.step();
      return loss;
    };
    return { params, step };
  };
  const run = async (compiled) => {
    const m = build();
    const step = compiled ? compile(m.step) : m.step;
    const losses = [];
    for (let i = 0; i < steps; i++) {
      const { x, y } = data[i % data.length];
      losses.push((await bits(step(x, y)))[0]);
    }
    return { losses, params: await Promise.all(m.params.map(bits)), explain: compiled ? step.explain() : null };
  };
  const eager = await run(false);
  const before = getBackend('cuda').stats(0).graphLaunches;
  const comp = await run(true);
  const firstDiff = comp.losses.findIndex((l, i) => l !== eager.losses[i]);
  return {
    steps,
    firstLossDiff: firstDiff,
    paramsSame: JSON.stringify(comp.params) === JSON.stringify(eager.params),
    lossFell: new Float32Array(new Uint32Array([eager.losses.at(-1)]).buffer)[0] < new Float32Array(new Uint32Array([eager.losses[0]]).buffer)[0],
    replays: comp.explain.replays,
    replay: comp.explain.programs.map((p) => p.replay),
    graphLaunches: getBackend('cuda').stats(0).graphLaunches - before,
  };
}

/** Every check, for fake-driver.test.ts. */
export async function checkGraphs(libs) {
  const cuda = getBackend('cuda');
  cuda.setGemmMode(0, 'own');
  const out = {
    segments: await segments(cuda),
    varying: await varying(cuda),
    freed: await freed(cuda),
    failedCapture: await failedCapture(cuda),
    empties: await empties(cuda),
    gemmOwn: await gemm(cuda, 'own'),
    gemmLt: await gemm(cuda, 'auto'),
  };
  cuda.setGemmMode(0, 'own');
  out.mlpSgd = await compiledTraining(libs, { model: 'mlp', optimizer: 'sgd', steps: 40 });
  out.mlpAdam = await compiledTraining(libs, { model: 'mlp', optimizer: 'adam', steps: 40 });
  out.convSgd = await compiledTraining(libs, { model: 'conv', optimizer: 'sgd', steps: 12 });
  cuda.setGemmMode(0, 'auto');
  out.mlpAdamLt = await compiledTraining(libs, { model: 'mlp', optimizer: 'adam', steps: 12 });
  out.graphsAlive = cuda.stats(0).graphs;
  return out;
}
