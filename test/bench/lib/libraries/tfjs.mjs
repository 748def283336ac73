// TensorFlow.js on its 'cpu' backend (plain JavaScript kernels) or its 'wasm' backend
// (XNNPACK compiled to WebAssembly SIMD). Both are loaded by dynamic import, so a missing or broken
// package is reported in its column instead of stopping the benchmark.
// Completion: both backends run each op synchronously when it is called; every timed run still
// ends with `dataSync()` of one element of the result (the loss in the MLP step).
import { availableParallelism } from 'node:os';
import { installedVersion } from '../version.mjs';

let tf = null;

async function core() {
  if (tf) return tf;
  // The union package, as tfjs users import it for training: tfjs-core alone has no gradients.
  // It loads tfjs-core and tfjs-backend-cpu (the packages measured) and registers the gradients.
  tf = await import('@tensorflow/tfjs');
  // tfjs prints a banner recommending tfjs-node the first time a backend starts in Node.
  const warn = console.warn;
  const log = console.log;
  console.warn = console.log = () => {};
  try {
    await tf.setBackend('cpu');
    await tf.ready();
  } finally {
    console.warn = warn;
    console.log = log;
  }
  tf.enableProdMode(); // no per-op NaN checks or debug bookkeeping
  return tf;
}

/**
 * A workload whose run computes one tensor (or `calls` of them in a plain loop: the overhead bench)
 * and reads one element of the last. tfjs tensors are freed by hand: each call frees the result
 * before it, and dispose() the last one and `inputs`. `tidy` wraps each call in tf.tidy (needed
 * when `compute` makes intermediate tensors; a single op or tf.grad, which tidies itself, needs none).
 */
function single(tfjs, inputs, compute, { tidy = true } = {}) {
  let last = null;
  const call = tidy ? () => tfjs.tidy(compute) : compute;
  return {
    run: (calls = 1) => {
      for (let i = 0; i < calls; i++) {
        last?.dispose();
        last = call();
      }
      tfjs.tidy(() => tfjs.slice(tfjs.reshape(last, [-1]), [0], [1]).dataSync());
    },
    output: () => Float32Array.from(last.dataSync()),
    dispose: () => tfjs.dispose([...inputs, ...(last ? [last] : [])]),
  };
}

function adapter(backend) {
  const pkg = `@tensorflow/tfjs-backend-${backend}`;
  const self = {
    id: `tfjs-${backend}`,
    label: `tfjs-${backend}`,
    package: pkg,
    version: null,
    threads: backend === 'cpu' ? 1 : null,
    completion: '`dataSync()` of one element (tfjs runs each op synchronously on these backends)',
    notes: [],
    async init() {
      const t = await core();
      self.version = installedVersion(pkg);
      self.notes.push(`API from @tensorflow/tfjs ${installedVersion('@tensorflow/tfjs')} (tfjs-core ${t.version_core})`);
      if (backend === 'wasm') {
        const wasm = await import('@tensorflow/tfjs-backend-wasm');
        wasm.setThreadsCount(availableParallelism());
        if (!(await t.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
        await t.ready();
        self.threads = wasm.getThreadsCount();
        const simd = await t.env().getAsync('WASM_HAS_SIMD_SUPPORT');
        const mt = await t.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
        self.notes.push(`SIMD ${simd ? 'on' : 'off'}; ${mt ? 'threaded build' : `one thread: tfjs-backend-wasm turns threads off in Node (tfjs issue 3830), so setThreadsCount(${availableParallelism()}) has no effect`}`);
      }
      return {};
    },
    /** Every workload starts by selecting this backend: the two tfjs columns share one tfjs-core. */
    async use() {
      if (tf.getBackend() !== backend) await tf.setBackend(backend);
      return tf;
    },
    /** [m, k] @ [k, n]; square n×n unless m and k are given. */
    async matmul({ n, m = n, k = n, a, b }) {
      const t = await self.use();
      const ta = t.tensor2d(a, [m, k]);
      const tb = t.tensor2d(b, [k, n]);
      return single(t, [ta, tb], () => t.matMul(ta, tb), { tidy: false });
    },
    /** a + b, in `shape` (default 1-D); `b === a` adds one tensor to itself. */
    async add({ a, b, shape = [a.length] }) {
      const t = await self.use();
      const ta = t.tensor(a, shape);
      const tb = b === a ? ta : t.tensor(b, shape);
      return single(t, [ta, tb], () => t.add(ta, tb), { tidy: false });
    },
    /** The gradient of sum(w * a) with respect to w, by tf.grad (a function made once, as a program would). */
    async mulSumBackward({ a, w }) {
      const t = await self.use();
      const ta = t.tensor1d(a);
      const tw = t.tensor1d(w);
      const gradient = t.grad((x) => t.sum(t.mul(x, ta)));
      return single(t, [ta, tw], () => gradient(tw), { tidy: false });
    },
    async conv2d({ inputShape: [n, c, h, w], weightShape: [o, , kh, kw], xNhwc, wHwio, padding }) {
      const t = await self.use();
      const tx = t.tensor4d(xNhwc, [n, h, w, c]);
      const tw = t.tensor4d(wHwio, [kh, kw, c, o]);
      // Explicit zeros on each side, as PyTorch pads (NHWC: the middle two dims are H and W).
      const pad = padding === 0 ? 'valid' : [[0, 0], [padding, padding], [padding, padding], [0, 0]];
      return { ...single(t, [tx, tw], () => t.conv2d(tx, tw, 1, pad)), layout: 'NHWC' };
    },
    async softmaxCrossEntropy({ rows, classes, logits, onehot }) {
      const t = await self.use();
      const tl = t.tensor2d(logits, [rows, classes]);
      const ty = t.tensor2d(onehot, [rows, classes]);
      // With no weights, tfjs's default reduction is the mean over rows, like PyTorch's.
      return single(t, [tl, ty], () => t.losses.softmaxCrossEntropy(ty, tl));
    },
    async mlp({ batch, sizes: [inF, hidden, outF], x, onehot, w1t, b1, w2t, b2, lr }) {
      const t = await self.use();
      const v1 = t.variable(t.tensor2d(w1t, [inF, hidden]));
      const c1 = t.variable(t.tensor1d(b1));
      const v2 = t.variable(t.tensor2d(w2t, [hidden, outF]));
      const c2 = t.variable(t.tensor1d(b2));
      const tx = t.tensor2d(x, [batch, inF]);
      const ty = t.tensor2d(onehot, [batch, outF]);
      const optimizer = t.train.sgd(lr);
      const losses = [];
      return {
        run: () => {
          const cost = optimizer.minimize(() => {
            const h = t.relu(t.add(t.matMul(tx, v1), c1));
            return t.losses.softmaxCrossEntropy(ty, t.add(t.matMul(h, v2), c2));
          }, true);
          losses.push(cost.dataSync()[0]);
          cost.dispose();
        },
        output: () => Float32Array.from(losses.slice(0, 2)),
        dispose: () => {
          t.dispose([v1, c1, v2, c2, tx, ty]);
          optimizer.dispose();
        },
      };
    },
  };
  return self;
}

export const tfjsCpu = adapter('cpu');
export const tfjsWasm = adapter('wasm');
