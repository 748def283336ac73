// This library on device 'cpu', through the public API only: what a user's program calls.
// Completion: ops return at once and `await t.item()` waits for the value, so each timed run
// ends by reading one element of the result (a one-element view, so no large copy is timed).
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { Adadelta, AdamW, SGD } from '@core/optim';
import { autocast, bfloat16, compile, getBackend, setCreationSiteTracking, tensor } from '@core/tensor';
import { GPT, loadWeights, Net } from '../programs.mjs';
import { installedVersion } from '../version.mjs';

const version = installedVersion('@core/backend-cpu');

const from = (data, shape) => tensor(data).reshape(shape);
/** Waits until `t` is computed, reading one element. */
const ready = (t) => t.reshape([-1]).narrow(0, 0, 1).item();

/**
 * A workload whose run computes one tensor (or `calls` of them in a plain loop, each result dropped
 * as a program drops it: the overhead bench): times `compute` plus the wait for the last result,
 * keeps that result for the check.
 */
function single(compute) {
  let last = null;
  return {
    run: async (calls = 1) => {
      for (let i = 0; i < calls; i++) last = compute();
      await ready(last);
    },
    output: async () => Float32Array.from(await last.data()),
  };
}

/**
 * A training workload: each run is one step (zeroGrad, the loss of `inputs`, backward, the
 * optimizer's step) and waits for the loss. The first two steps run in eval mode, so no dropout
 * mask enters the two losses the check compares; training mode from the third. `wrap` makes the
 * step function: eager (itself) or `compile`; `amp`, when given, the autocast options the loss is
 * computed under (its backward runs outside, as in PyTorch's recipe).
 */
function training({ model, optimizer, lossOf, inputs, wrap, amp }) {
  const step = wrap((...args) => {
    optimizer.zeroGrad();
    const loss = amp ? autocast(amp, () => lossOf(...args)) : lossOf(...args);
    loss.backward();
    optimizer.step();
    return loss;
  });
  const losses = [];
  model.eval();
  return {
    run: async () => {
      if (losses.length === 2) model.train();
      const loss = step(...inputs);
      losses.push(await loss.item());
    },
    output: async () => Float32Array.from(losses.slice(0, 2)),
  };
}

const eager = (fn) => fn;

export const ours = {
  id: 'ours',
  label: 'ours',
  package: '@core/backend-cpu',
  version,
  threads: null,
  completion: '`await t.item()` on one element of the result (the loss in the MLP step)',
  notes: [],
  async init() {
    // What the backend says about its kernels, where it says it (read for the report only: the
    // benchmark runs whatever the backend chose, with no options).
    const wasm = getBackend('cpu').wasm;
    if (wasm && typeof wasm === 'object') {
      await wasm.ready;
      this.threads = wasm.threads ?? null;
      this.notes.push(wasm.active
        ? `WebAssembly kernels${wasm.shared ? ', shared memory' : ', unshared memory (one thread)'}`
        : `TypeScript kernels${wasm.failure ? ` (wasm: ${wasm.failure})` : ''}`);
    } else if (wasm === null) {
      this.notes.push('TypeScript kernels');
    }
    const native = getBackend('cpu').native;
    this.native = native ?? null;
    if (native?.loaded) this.notes.push(`native ${native.gemm} GEMM for float32 matmuls on ${native.threads} threads; CPU features: ${native.features.join(' ')}`);
    else if (native) this.notes.push(`no native kernels (${native.reason})`);
  },
  /** [m, k] @ [k, n]; square n×n unless m and k are given. */
  matmul({ n, m = n, k = n, a, b }) {
    const ta = from(a, [m, k]);
    const tb = from(b, [k, n]);
    return single(() => ta.matmul(tb));
  },
  /** a + b, in `shape` (default 1-D); `b === a` adds one tensor to itself. */
  add({ a, b, shape = [a.length] }) {
    const ta = from(a, shape);
    const tb = b === a ? ta : from(b, shape);
    return single(() => ta.add(tb));
  },
  /** `w.mul(a).sum().backward()` with w a leaf that requires grad; the result is w.grad, reset each call as `zeroGrad()` does. */
  mulSumBackward({ a, w }) {
    const ta = tensor(a);
    const tw = tensor(w, { requiresGrad: true });
    return single(() => {
      tw.grad = null;
      tw.mul(ta).sum().backward();
      return tw.grad;
    });
  },
  conv2d({ inputShape, weightShape, x, w, padding }) {
    const tx = from(x, inputShape);
    const tw = from(w, weightShape);
    return single(() => F.conv2d(tx, tw, null, { padding }));
  },
  softmaxCrossEntropy({ rows, classes, logits, labels }) {
    const tl = from(logits, [rows, classes]);
    const ty = tensor(labels);
    return single(() => F.crossEntropy(tl, ty));
  },
  mlp({ batch, sizes: [inF, hidden, outF], x, labels, w1, b1, w2, b2, lr }, { wrap = eager, amp } = {}) {
    const model = new nn.Sequential(new nn.Linear(inF, hidden), new nn.ReLU(), new nn.Linear(hidden, outF));
    // The shared initial weights, in PyTorch's [out, in] layout.
    loadWeights(model, { '0.weight': w1, '0.bias': b1, '2.weight': w2, '2.bias': b2 });
    return training({
      model, wrap, amp, optimizer: new SGD(model.parameters(), { lr }),
      lossOf: (tx, ty) => F.crossEntropy(model.call(tx), ty),
      inputs: [from(x, [batch, inF]), tensor(labels)],
    });
  },
  /** pytorch/examples mnist: Net, nll_loss of its log-probabilities, Adadelta. */
  mnistNet({ batch, x, labels, weights, lr }, { wrap = eager, amp } = {}) {
    const model = new Net();
    loadWeights(model, weights);
    return training({
      model, wrap, amp, optimizer: new Adadelta(model.parameters(), { lr }),
      lossOf: (tx, ty) => F.nllLoss(model.call(tx), ty),
      inputs: [from(x, [batch, 1, 28, 28]), tensor(labels)],
    });
  },
  /** nanoGPT: GPT's loss on a batch of token windows, AdamW decaying the ≥2-D parameters only (configure_optimizers). */
  gpt({ batch, config, idx, targets, weights, optimizer: { lr, betas, weightDecay } }, { wrap = eager, amp } = {}) {
    const model = new GPT(config);
    loadWeights(model, weights);
    const params = model.parameters();
    const groups = [{ params: params.filter((p) => p.ndim >= 2), weightDecay }, { params: params.filter((p) => p.ndim < 2), weightDecay: 0 }];
    return training({
      model, wrap, amp, optimizer: new AdamW(groups, { lr, betas }),
      lossOf: (ti, tt) => model.call(ti, tt),
      inputs: [from(idx, [batch, config.blockSize]), from(targets, [batch, config.blockSize])],
    });
  },
};

/**
 * Ours with creation-site tracking off (`setCreationSiteTracking(false)`, which saves the stack
 * capture each new tensor makes for device-mismatch messages) while its runs are timed; the
 * tracking is back on between runs, so the other columns keep the default.
 */
export const oursSitesOff = {
  ...ours,
  id: 'ours-sites-off',
  label: 'ours, sites off',
  notes: [],
  async init() {
    await ours.init.call(this);
    this.notes.push('`setCreationSiteTracking(false)` during its timed runs');
  },
  // Every workload of ours, with its run wrapped.
  ...Object.fromEntries(Object.keys(ours).filter((k) => k !== 'init' && typeof ours[k] === 'function').map((kind) => [kind, (data) => {
    const bench = ours[kind](data);
    return {
      ...bench,
      run: async (calls) => {
        setCreationSiteTracking(false);
        try {
          await bench.run(calls);
        } finally {
          setCreationSiteTracking(true);
        }
      },
    };
  }])),
};

/** The training steps the bench compiles; compile() is timed on these only. */
const COMPILED_KINDS = ['mlp', 'mnistNet', 'gpt'];

/**
 * Ours with each training step run through `compile()` from @core/tensor: after the calls that
 * trace it (call 1 eager, call 2 recorded; again after a guard changes, as when dropout turns on at
 * step 3), a replay runs the recorded kernels without the JavaScript of the step. Its column
 * against ours is compiled / eager.
 */
export const oursCompiled = {
  ...Object.fromEntries(Object.entries(ours).filter(([, v]) => typeof v !== 'function')),
  id: 'ours-compiled',
  label: 'ours, compiled',
  notes: [],
  lacks: () => 'compile() is timed on the training steps only',
  // The traces are warm-up: calls 1 and 2, and 3 and 4 again where dropout turns on at step 3.
  minWarmup: 4,
  async init() {
    await ours.init.call(this);
    this.notes.push('each training step is `compile(step)`; the other workloads are not run');
  },
  ...Object.fromEntries(COMPILED_KINDS.map((kind) => [kind, (data) => ours[kind](data, { wrap: compile })])),
};

/** Loss differences bf16 autocast may show against float32 after two steps (relative; bfloat16 keeps 8 significant bits). */
const BF16_LOSS_TOLERANCE = 3e-2;

/**
 * Ours with each training step's loss computed under `autocast({ deviceType: 'cpu', dtype:
 * bfloat16 })` (matmuls, linears and convolutions in bfloat16, the rest as the autocast policy says).
 * Its column against ours is bf16 / fp32; its check against ours allows bfloat16's rounding.
 */
export const oursBf16 = {
  ...Object.fromEntries(Object.entries(ours).filter(([, v]) => typeof v !== 'function')),
  id: 'ours-bf16',
  label: 'ours, bf16 autocast',
  notes: [],
  tolerance: BF16_LOSS_TOLERANCE,
  lacks: () => 'bf16 autocast is timed on the training steps only',
  async init() {
    await ours.init.call(this);
    const native = getBackend('cpu').native;
    this.notes.push(`each training step's loss under bf16 autocast${native?.loaded ? `; native ${native.halfGemm} GEMM for bfloat16 matmuls` : ''}`);
  },
  ...Object.fromEntries(COMPILED_KINDS.map((kind) => [kind, (data) => ours[kind](data, { amp: { deviceType: 'cpu', dtype: bfloat16 } })])),
};
