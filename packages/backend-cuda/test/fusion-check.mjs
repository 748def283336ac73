// compile()'s elementwise fusion on cuda (src/fusion.ts, NVRTC) through the fake driver and the fake
// NVRTC, run by fake-driver-run.mjs ('fusion'): each check returns plain data that fusion.test.ts
// asserts on. Every comparison is of bits: a compiled (fused) function against the same function run
// eagerly, one kernel per op. Also used by native/cuda/gpu-check/main.mjs on a real GPU.
import { bfloat16, compile, float16, float32, getBackend, tensor, where } from '@core/tensor';

const DTYPES = [float32, float16, bfloat16];

/** The bits of a tensor's elements, read raw from its storage (float32 as u32, the half types as u16, int32, bool). */
async function bits(t) {
  const c = t.contiguous();
  const raw = await getBackend('cuda').read(c._storage.handle);
  const view = raw.subarray(c._offset, c._offset + c.numel());
  return Array.from(view instanceof Float32Array ? new Uint32Array(view.buffer, view.byteOffset, view.length) : view);
}

/** A deterministic generator (mulberry32). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Values with the awkward ones mixed in: NaN, ±Inf, ±0, tiny and huge. */
function values(n, random, special = true) {
  const odd = [NaN, Infinity, -Infinity, 0, -0, 1e-30, -3e38, 65504, 70000, 1e-8];
  return Array.from({ length: n }, (_, i) => (special && i % 7 === 3 ? odd[Math.floor(random() * odd.length)] : (random() - 0.5) * 8));
}

/** Whether bit pattern `b` of a `dtype` element is a NaN. */
function isNaNBits(b, dtype) {
  if (dtype === 'float32') return (b & 0x7fffffff) >>> 0 > 0x7f800000;
  if (dtype === 'float16') return (b & 0x7fff) > 0x7c00;
  if (dtype === 'bfloat16') return (b & 0x7fff) > 0x7f80;
  return false;
}

/**
 * Compares outputs' bits. `nan: 'any'` counts every NaN as one value: on the CPU emulation, x86 hands on
 * the first NaN operand of an arithmetic instruction, and the host compiler may swap the operands of a
 * commutative one, so a NaN's sign and payload depend on how each kernel was compiled (a GPU gives the
 * canonical NaN for every arithmetic result, so the GPU check compares strictly).
 */
function sameBits(a, b, dtypes, nan) {
  return a.every((xs, k) => xs.length === b[k].length && xs.every((x, i) => x === b[k][i] || (nan === 'any' && isNaNBits(x, dtypes[k]) && isNaNBits(b[k][i], dtypes[k]))));
}

/** Runs `fn` eagerly and compiled (warm-up, capture, then `replays` replays) on the same inputs: the outputs' bits each time. */
async function eagerVsCompiled(fn, inputs, { replays = 2, nan = 'any' } = {}) {
  const eagerOut = [fn(...inputs)].flat();
  const dtypes = eagerOut.map((t) => t.dtype.name);
  const eager = await Promise.all(eagerOut.map(bits));
  const step = compile(fn);
  const runs = [];
  for (let i = 0; i < 2 + replays; i++) runs.push(await Promise.all([step(...inputs)].flat().map(bits)));
  const explain = step.explain();
  const matches = runs.map((r) => sameBits(r, eager, dtypes, nan));
  return {
    same: matches.every(Boolean),
    strict: runs.every((r) => sameBits(r, eager, dtypes, 'strict')),
    firstDiff: matches.indexOf(false),
    replays: explain.replays,
    replay: explain.programs.map((p) => p.replay),
    eager: eager.map((b) => b.slice(0, 6)),
    compiled: runs.at(-1).map((b) => b.slice(0, 6)),
  };
}

/**
 * Fixed chains per dtype: unary and binary ops with broadcasts, a scalar operand, a cast to float32
 * and back, a compare and a where, the input full of NaN, ±Inf and ±0.
 */
export async function chains({ nan = 'any' } = {}) {
  const out = {};
  for (const dtype of DTYPES) {
    const random = rng(7 + DTYPES.indexOf(dtype));
    const x = tensor(values(24, random), { dtype, device: 'cuda' }).reshape([4, 6]);
    const y = tensor(values(6, random), { dtype, device: 'cuda' }); // broadcast over rows
    const z = tensor(values(4, random), { dtype, device: 'cuda' }).reshape([4, 1]); // over columns
    const fn = (a, b, c) => {
      const t = a.mul(b).add(a).sub(c); // a*b + a - c: no contraction across the ops
      const u = t.exp().mul(0.5).tanh().sigmoid();
      const v = u.to(float32).mul(a.to(float32)).add(1.25).to(dtype);
      const w = where(v.gt(b), v, t.neg().relu());
      return [w.div(c.abs().add(1)), t];
    };
    out[dtype.name] = await eagerVsCompiled(fn, [x, y, z], { nan });
  }
  return out;
}

const UNARY = ['neg', 'abs', 'exp', 'log', 'sqrt', 'rsqrt', 'reciprocal', 'sin', 'cos', 'tanh', 'sigmoid', 'relu', 'floor', 'round', 'expm1', 'log1p', 'erf', 'sign'];
const BINARY = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'pow', 'atan2', 'remainder'];

/** One random chain over [rows, cols] inputs of `dtype` (some broadcast), ending in a value of that dtype. */
function randomChain(random, dtype, depth) {
  const pick = (list) => list[Math.floor(random() * list.length)];
  const steps = [];
  for (let i = 0; i < depth; i++) {
    const r = random();
    if (r < 0.4) steps.push({ kind: 'unary', op: pick(UNARY) });
    else if (r < 0.75) steps.push({ kind: 'binary', op: pick(BINARY), operand: Math.floor(random() * 3), scalar: random() < 0.25 ? Math.fround((random() - 0.5) * 4) : null });
    else if (r < 0.85) steps.push({ kind: 'cast', via: pick(DTYPES.filter((d) => d !== dtype)) });
    else steps.push({ kind: 'where', op: pick(['gt', 'lt', 'eq', 'ne']), operand: Math.floor(random() * 3) });
  }
  return steps;
}

function applyChain(steps, inputs, dtype) {
  let t = inputs[0];
  for (const s of steps) {
    if (s.kind === 'unary') t = t[s.op]();
    else if (s.kind === 'binary') t = t[s.op](s.scalar ?? inputs[s.operand]);
    else if (s.kind === 'cast') t = t.to(s.via).to(dtype);
    else t = where(t[s.op](inputs[s.operand]), t, inputs[s.operand]);
  }
  return t;
}

/**
 * `count` random chains (seeded): each compiled function runs several chains separated by a
 * reduction (several fused kernels in one NVRTC module), compared bit for bit with eager.
 */
export async function fuzz(seed, count, { perFunction = 4, nan = 'any' } = {}) {
  const random = rng(seed);
  const failures = [];
  let functions = 0, fused = 0, nanOnly = 0;
  for (let done = 0; done < count; done += perFunction) {
    const dtype = DTYPES[Math.floor(random() * DTYPES.length)];
    const cols = 1 + Math.floor(random() * 9), rows = 1 + Math.floor(random() * 5);
    const special = random() < 0.5;
    const inputs = [
      tensor(values(rows * cols, random, special), { dtype, device: 'cuda' }).reshape([rows, cols]),
      tensor(values(cols, random, special), { dtype, device: 'cuda' }).reshape([1, cols]),
      tensor(values(rows, random, special), { dtype, device: 'cuda' }).reshape([rows, 1]),
    ];
    const chainsOf = Array.from({ length: Math.min(perFunction, count - done) }, () => randomChain(random, dtype, 2 + Math.floor(random() * 6)));
    const fn = (a, b, c) => {
      const results = [];
      let carry = a;
      for (const steps of chainsOf) {
        const r = applyChain(steps, [carry, b, c], dtype);
        results.push(r);
        // A reduction between chains: the next chain starts from a fresh kernel boundary.
        carry = a.add(r.to(float32).sum().to(dtype));
      }
      return results;
    };
    const r = await eagerVsCompiled(fn, inputs, { replays: 1, nan });
    functions++;
    for (const m of r.replay.join(' ').matchAll(/(\d+) fused kernels? of/g)) fused += Number(m[1]);
    if (r.same && !r.strict) nanOnly++;
    if (!r.same) failures.push({ dtype: dtype.name, rows, cols, chains: chainsOf, replay: r.replay, eager: r.eager, compiled: r.compiled });
  }
  return { functions, fusedKernels: fused, nanOnly, failures: failures.slice(0, 3), failed: failures.length };
}

/** A program prepared directly with deadAfter: the dead intermediate's storage is never written, the output is eager's. */
export async function deadIntermediate() {
  const cuda = getBackend('cuda');
  const put = (vals) => {
    const storage = cuda.alloc(0, 'float32', vals.length);
    cuda.write(storage, Float32Array.from(vals), 0);
    return { storage, dtype: 'float32', shape: [vals.length], strides: [1], offset: 0 };
  };
  const x = put([1, -2, 3, NaN, Infinity, -0, 0.5, 7]);
  const y = put([0.25, 4, -1, 2, 3, 5, -6, 1e-3]);
  const t = put(new Array(8).fill(42));
  const u = put(new Array(8).fill(42));
  const out = put(new Array(8).fill(42));
  const calls = [
    { run: () => cuda.kernels.binary('mul', x, y, t), varies: false },
    { run: () => cuda.kernels.unary('exp', t, u), varies: false },
    { run: () => cuda.kernels.binary('add', u, t, out), varies: false },
  ];
  const program = cuda.prepare(calls, { deadAfter: [[], [], [t.storage, u.storage]] });
  program.run();
  const got = { out: Array.from(await cuda.read(out.storage)), t: Array.from(await cuda.read(t.storage)), u: Array.from(await cuda.read(u.storage)) };
  for (const c of calls) c.run();
  const want = Array.from(await cuda.read(out.storage));
  program.release();
  const bitsOf = (a) => Array.from(new Uint32Array(Float32Array.from(a).buffer));
  return { description: program.description, same: JSON.stringify(bitsOf(got.out)) === JSON.stringify(bitsOf(want)), t: got.t, u: got.u };
}

/**
 * The same function compiled twice (two programs with one source): NVRTC compiles the module once
 * (the addon caches by source; with FAKE_NVRTC_COUNT the fake NVRTC counts its compilations).
 */
export async function cache() {
  const random = rng(3);
  const x = tensor(values(32, random), { dtype: float32, device: 'cuda' });
  const y = tensor(values(32, random), { dtype: float32, device: 'cuda' });
  // The calls that read the arguments vary per replay (made as calls); the chain after them is captured.
  const fn = (a, b) => {
    const s = a.add(b);
    return s.mul(s).add(s).exp().sub(s).sigmoid();
  };
  const replays = [];
  for (let k = 0; k < 2; k++) {
    const step = compile(fn);
    for (let i = 0; i < 3; i++) await bits(step(x, y));
    replays.push(step.explain().programs.map((p) => p.replay));
  }
  return { replays };
}
