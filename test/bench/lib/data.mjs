// Seeded input data, made once in plain JavaScript and handed to every library, so that all of
// them compute on the same numbers and their results can be compared element by element.

/** mulberry32: a small, fast 32-bit generator; good enough for benchmark inputs. */
function generator(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` standard-normal floats (Box–Muller), times `scale`. */
export function randn(n, seed, scale = 1) {
  const next = generator(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - next())) * scale;
    const phi = 2 * Math.PI * next();
    out[i] = r * Math.cos(phi);
    if (i + 1 < n) out[i + 1] = r * Math.sin(phi);
  }
  return out;
}

/** `n` floats uniform in [-bound, bound): PyTorch's default init for Linear and Conv2d weights. */
export function uniform(n, seed, bound) {
  const next = generator(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (2 * next() - 1) * bound;
  return out;
}

/** `n` class indices in [0, classes). */
export function labels(n, classes, seed) {
  const next = generator(seed);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(next() * classes);
  return out;
}

/** One-hot rows for class indices: the form tfjs's and jax-js's cross-entropy take. */
export function oneHot(indices, classes) {
  const out = new Float32Array(indices.length * classes);
  for (let i = 0; i < indices.length; i++) out[i * classes + indices[i]] = 1;
  return out;
}

/** A row-major [rows, cols] matrix transposed: ours stores Linear weights as [out, in], the peers as [in, out]. */
export function transpose(m, rows, cols) {
  const out = new Float32Array(m.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = m[r * cols + c];
  return out;
}

/** NCHW → NHWC (tfjs's layout for conv2d inputs and outputs); `back` does NHWC → NCHW. */
export function nchwToNhwc(x, [n, c, h, w], back = false) {
  const out = new Float32Array(x.length);
  for (let b = 0; b < n; b++) {
    for (let ch = 0; ch < c; ch++) {
      for (let i = 0; i < h * w; i++) {
        const nchw = (b * c + ch) * h * w + i;
        const nhwc = (b * h * w + i) * c + ch;
        if (back) out[nchw] = x[nhwc];
        else out[nhwc] = x[nchw];
      }
    }
  }
  return out;
}

/** OIHW (ours, jax-js) → HWIO (tfjs's conv2d filter layout). */
export function oihwToHwio(w, [o, i, kh, kw]) {
  const out = new Float32Array(w.length);
  for (let a = 0; a < o; a++) {
    for (let b = 0; b < i; b++) {
      for (let k = 0; k < kh * kw; k++) out[(k * i + b) * o + a] = w[(a * i + b) * kh * kw + k];
    }
  }
  return out;
}
