// jsref with synchronous reads: the same backend, declaring `syncRead` and reading a storage's
// values at once. Core then reads it without `await` — index range checks, the data-dependent ops
// (nonzero, masks), GradScaler's host mirror, anomaly mode — through this backend's own read. The
// tests run it with no cpu backend registered, where a read by way of the cpu would fail.
// It is also a module `core-conformance --backend` takes: its default export returns the backend.
import { float32ToFloat16Bits, hostArrayFor } from '@core/tensor';
import { createJsRefBackend } from '../dist/index.js';

/** A jsref backend (named 'jsref', like the one its package registers) with `readSync`. */
export function createSyncJsRef() {
  const base = createJsRefBackend();
  return {
    ...base,
    capabilities: { ...base.capabilities, syncRead: true },
    readSync(storage) {
      const values = storage.live('readSync');
      const out = hostArrayFor(storage.dtype, values.length);
      out.set(storage.dtype === 'float16' ? values.map((v) => float32ToFloat16Bits(v)) : values); // f16 travels as bits
      return out;
    },
  };
}

export default createSyncJsRef;
