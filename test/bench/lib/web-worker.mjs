// A browser-style `Worker` for Node, over worker_threads, so that @jax-js/jax's wasm backend runs
// multi-threaded here as it does in a cross-origin-isolated page. jax-js starts its pool only when
// `SharedArrayBuffer` and a global `Worker` both exist, and Node 20 has no global `Worker`; without
// this shim jax-js would be measured single-threaded while its users in browsers get every core.
//
// Just enough of the Web Worker API for what jax-js does: `new Worker(blobURL, { type: 'module' })`
// with a classic script (no imports), `onmessage`/`onerror`, `postMessage` of plain data, shared
// memories and WebAssembly modules. Its pool size comes from `navigator.hardwareConcurrency`
// (else 4), so `navigator` is provided too when Node lacks it (Node 21+ has one).
import { availableParallelism } from 'node:os';
import { resolveObjectURL } from 'node:buffer';
import { Worker as NodeWorker } from 'node:worker_threads';

/** What the worker runs before the page's script: the `self`/`postMessage` globals of a Web Worker. */
const PRELUDE = `
const { parentPort } = require('node:worker_threads');
globalThis.self = globalThis;
globalThis.postMessage = (data) => parentPort.postMessage(data);
parentPort.on('message', (data) => { if (typeof self.onmessage === 'function') self.onmessage({ data }); });
`;

class WebWorker {
  onmessage = null;
  onerror = null;
  #worker = null;
  /** Messages sent before the script's text (a Blob, read asynchronously) has arrived. */
  #pending = [];

  constructor(url) {
    const blob = resolveObjectURL(String(url));
    if (!blob) throw new Error(`web-worker shim: only blob: URLs are supported, got ${url}`);
    blob.text().then((source) => {
      const worker = new NodeWorker(`${PRELUDE}\n${source}`, { eval: true });
      worker.unref(); // a benchmark that is done must not wait for idle workers
      worker.on('message', (data) => this.onmessage?.({ data }));
      worker.on('error', (err) => this.onerror?.({ message: err.message, error: err }));
      this.#worker = worker;
      for (const m of this.#pending) worker.postMessage(m);
      this.#pending = [];
    }, (err) => this.onerror?.({ message: String(err), error: err }));
  }

  postMessage(data) {
    if (this.#worker) this.#worker.postMessage(data);
    else this.#pending.push(data);
  }

  terminate() {
    this.#worker?.terminate();
  }
}

/**
 * Install the shim (only where the platform lacks the globals). Returns the number of threads
 * jax-js will start, or 0 when it will run single-threaded.
 */
export function installWebWorker(threads = availableParallelism()) {
  if (typeof globalThis.Worker === 'undefined') globalThis.Worker = WebWorker;
  if (typeof globalThis.navigator === 'undefined') {
    Object.defineProperty(globalThis, 'navigator', { value: { hardwareConcurrency: threads }, configurable: true });
  }
  if (typeof SharedArrayBuffer === 'undefined') return 0;
  return globalThis.navigator.hardwareConcurrency || 4;
}
