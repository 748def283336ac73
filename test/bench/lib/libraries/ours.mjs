// This library on device 'cpu', through the public API only: what a user's program calls.
// Completion: ops return at once and `await t.item()` waits for the value, so each timed run
// ends by reading one element of the result (a one-element view, so no large copy is timed).
import '@core/backend-cpu';
import { F, nn } from '@core/nn';
import { SGD } from '@core/optim';
import { getBackend, noGrad, setCreationSiteTracking, tensor } from '@core/tensor';
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
  mlp({ batch, sizes: [inF, hidden, outF], x, labels, w1, b1, w2, b2, lr }) {
    const model = new nn.Sequential(new nn.Linear(inF, hidden), new nn.ReLU(), new nn.Linear(hidden, outF));
    // The shared initial weights, in PyTorch's [out, in] layout.
    noGrad(() => {
      const [p1, q1, p2, q2] = [...model.parameters()]; // weight, bias of each Linear, in order
      p1.copy_(from(w1, [hidden, inF]));
      q1.copy_(tensor(b1));
      p2.copy_(from(w2, [outF, hidden]));
      q2.copy_(tensor(b2));
    });
    const optimizer = new SGD(model.parameters(), { lr });
    const tx = from(x, [batch, inF]);
    const ty = tensor(labels);
    const losses = [];
    return {
      run: async () => {
        const loss = F.crossEntropy(model.forward(tx), ty);
        optimizer.zeroGrad();
        loss.backward();
        optimizer.step();
        losses.push(await loss.item());
      },
      output: async () => Float32Array.from(losses.slice(0, 2)),
    };
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
