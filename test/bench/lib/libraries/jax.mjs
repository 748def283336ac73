// @jax-js/jax on its 'wasm' device: kernels it generates as WebAssembly (SIMD), run on a pool of
// workers over shared memory. In Node 20 that pool needs a global `Worker`, which web-worker.mjs
// provides; without it jax-js runs on the main thread only (the column's note says which).
// Completion: jax-js arrays are computed lazily and asynchronously, so every timed run ends with
// `await out.blockUntilReady()` (the MLP step and the loss read the loss with `await loss.data()`).
// Memory: jax-js counts references; every op consumes its arguments, so inputs that are used again
// are passed as `x.ref`.
// The MLP step and the softmax + cross-entropy are wrapped in `jit`, as JAX programs are written;
// the single ops (matmul, add, conv) are called eagerly.
import { availableParallelism } from 'node:os';
import { installedVersion } from '../version.mjs';
import { installWebWorker } from '../web-worker.mjs';

let jax = null;

/**
 * A workload whose run computes one array (or `calls` of them in a plain loop, each disposed when
 * the next is made: the overhead bench) and waits for the last, which it keeps until the check
 * reads it (reading consumes it).
 */
function single(compute) {
  let last = null;
  return {
    run: async (calls = 1) => {
      for (let i = 0; i < calls; i++) {
        last?.dispose();
        last = compute();
      }
      await last.blockUntilReady();
    },
    output: async () => {
      const out = Float32Array.from(await last.data());
      last = null;
      return out;
    },
    dispose: () => last?.dispose(),
  };
}

export const jaxWasm = {
  id: 'jax-wasm',
  label: 'jax-js wasm',
  package: '@jax-js/jax',
  version: null,
  threads: null,
  completion: '`await out.blockUntilReady()` (the loss: `await loss.data()`)',
  notes: [],
  async init() {
    const workers = installWebWorker(availableParallelism());
    jax = await import('@jax-js/jax');
    this.version = installedVersion('@jax-js/jax');
    const devices = await jax.init('wasm');
    if (!devices.includes('wasm')) throw new Error(`jax-js: no wasm device (found ${devices.join(', ') || 'none'})`);
    jax.defaultDevice('wasm');
    this.threads = workers || 1;
    this.notes.push(workers
      ? `${workers} worker threads (a Web Worker shim over worker_threads, test/bench/lib/web-worker.mjs); MLP step and loss under jit`
      : 'single-threaded (no SharedArrayBuffer); MLP step and loss under jit');
    return {};
  },
  /** [m, k] @ [k, n]; square n×n unless m and k are given. */
  matmul({ n, m = n, k = n, a, b }) {
    const { numpy: np } = jax;
    const ta = np.array(a, { shape: [m, k] });
    const tb = np.array(b, { shape: [k, n] });
    const s = single(() => np.matmul(ta.ref, tb.ref));
    return { ...s, dispose: () => { s.dispose(); ta.dispose(); tb.dispose(); } };
  },
  /** a + b, in `shape` (default 1-D); `b === a` adds one array to itself. */
  add({ a, b, shape = [a.length] }) {
    const { numpy: np } = jax;
    const ta = np.array(a, { shape });
    const tb = b === a ? ta : np.array(b, { shape });
    const s = single(() => np.add(ta.ref, tb.ref));
    return { ...s, dispose: () => { s.dispose(); ta.dispose(); if (tb !== ta) tb.dispose(); } };
  },
  /** The gradient of sum(w * a) with respect to w, by `grad` (eager, no jit: one call as a program makes it). */
  mulSumBackward({ a, w }) {
    const { numpy: np, grad } = jax;
    const ta = np.array(a);
    const tw = np.array(w);
    const gradient = grad((x) => np.sum(x.mul(ta.ref)));
    const s = single(() => gradient(tw.ref));
    return { ...s, dispose: () => { s.dispose(); ta.dispose(); tw.dispose(); } };
  },
  conv2d({ inputShape, weightShape, x, w, padding }) {
    const { numpy: np, lax } = jax;
    const tx = np.array(x, { shape: inputShape });
    const tw = np.array(w, { shape: weightShape });
    const pad = [[padding, padding], [padding, padding]];
    // NCHW input, OIHW kernel, a cross-correlation: the same convention as ours and PyTorch.
    const s = single(() => lax.conv(tx.ref, tw.ref, [1, 1], pad));
    return { ...s, dispose: () => { s.dispose(); tx.dispose(); tw.dispose(); } };
  },
  softmaxCrossEntropy({ rows, classes, logits, onehot }) {
    const { numpy: np, nn, jit } = jax;
    const tl = np.array(logits, { shape: [rows, classes] });
    const ty = np.array(onehot, { shape: [rows, classes] });
    const loss = jit((l, y) => np.sum(nn.logSoftmax(l, -1).mul(y)).mul(-1 / rows));
    const s = single(() => loss(tl.ref, ty.ref));
    return { ...s, dispose: () => { s.dispose(); tl.dispose(); ty.dispose(); loss.dispose?.(); } };
  },
  mlp({ batch, sizes: [inF, hidden, outF], x, onehot, w1t, b1, w2t, b2, lr }) {
    const { numpy: np, nn, jit, valueAndGrad, tree } = jax;
    let params = {
      w1: np.array(w1t, { shape: [inF, hidden] }),
      b1: np.array(b1),
      w2: np.array(w2t, { shape: [hidden, outF] }),
      b2: np.array(b2),
    };
    const tx = np.array(x, { shape: [batch, inF] });
    const ty = np.array(onehot, { shape: [batch, outF] });
    const lossOf = (p, xb, yb) => {
      const h = nn.relu(np.matmul(xb, p.w1).add(p.b1));
      const logits = np.matmul(h, p.w2).add(p.b2);
      return np.sum(nn.logSoftmax(logits, -1).mul(yb)).mul(-1 / batch);
    };
    const step = jit((p, xb, yb) => {
      const [loss, grads] = valueAndGrad(lossOf)(tree.ref(p), xb, yb);
      return [loss, tree.map((w, g) => w.sub(g.mul(lr)), p, grads)];
    });
    const losses = [];
    return {
      run: async () => {
        const [loss, next] = step(params, tx.ref, ty.ref);
        params = next;
        losses.push((await loss.data())[0]);
      },
      output: () => Float32Array.from(losses.slice(0, 2)),
      dispose: () => {
        tree.dispose(params);
        tx.dispose();
        ty.dispose();
        step.dispose?.();
      },
    };
  },
};
