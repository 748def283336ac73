// Anomaly mode: every kernel's output is checked as it is produced, and the first kernel that
// turns finite inputs into a NaN or an Inf is reported with the user code that called it. A
// debugging tool: it reads every result synchronously, so it needs a backend with readSync.
import type { Backend, Kernels, TensorRef } from '../backend/contract.js';
import type { DTypeName, HostArray } from '../dtype/dtype.js';
import { bfloat16BitsToNumber, float16BitsToNumber } from '../dtype/half.js';
import { TensorError } from '../errors/errors.js';
import { captureSite } from '../tensor/site.js';

/** Where a non-finite value first appeared: what `detectAnomaly` reports. */
export interface AnomalyReport {
  /** The op that produced the first non-finite value, e.g. 'matmul' or 'exp'. */
  readonly op: string;
  /** 'NaN' or 'Inf' (the first kind found). */
  readonly value: 'NaN' | 'Inf';
  /** "file:line:col" of the user code that ran the op, when known. */
  readonly site: string | undefined;
  /** The output's shape and dtype. */
  readonly shape: readonly number[];
  /** The output's dtype. */
  readonly dtype: DTypeName;
  /** During backward: the node whose rule ran the op, e.g. 'ExpBackward' (a custom autograd.Function's name + 'Backward'). */
  readonly backward?: string;
  /** During backward: where the user code ran that node's forward op, when known. */
  readonly forwardSite?: string | undefined;
}

/** Raised inside `detectAnomaly` at the first kernel that produced a non-finite value from finite inputs. */
export class AnomalyError extends TensorError implements AnomalyReport {
  readonly op: string;
  readonly value: 'NaN' | 'Inf';
  readonly site: string | undefined;
  readonly shape: readonly number[];
  readonly dtype: DTypeName;
  readonly backward?: string;
  readonly forwardSite?: string | undefined;

  constructor(r: AnomalyReport) {
    super(
      `anomaly: ${r.op} produced ${r.value} from finite inputs (output [${r.shape.join(', ')}] ${r.dtype})` +
        (r.site ? ` at ${r.site}` : '') +
        (r.backward ? ` in ${r.backward}${r.forwardSite ? `, the backward of the op run at ${r.forwardSite}` : ''}` : '') +
        '. This is the first non-finite value of the run; in mixed precision it usually means the value overflowed the low-precision dtype.',
    );
    this.op = r.op;
    this.value = r.value;
    this.site = r.site;
    this.shape = r.shape;
    this.dtype = r.dtype;
    if (r.backward !== undefined) this.backward = r.backward;
    if (r.forwardSite !== undefined) this.forwardSite = r.forwardSite;
  }

  /** @internal The same report, naming the backward node that was running (PyTorch's "Error detected in ExpBackward"). */
  inBackward(node: string, forwardSite: string | undefined): AnomalyError {
    const { op, value, site, shape, dtype } = this;
    return new AnomalyError({ op, value, site, shape, dtype, backward: node, forwardSite });
  }
}

let depth = 0;
const instrumented = new WeakMap<Backend<unknown>, Backend<unknown>>();

export function anomalyModeActive(): boolean {
  return depth > 0;
}

const decoders: Partial<Record<DTypeName, (v: number) => number>> = {
  float16: float16BitsToNumber,
  bfloat16: bfloat16BitsToNumber,
};

/** NaN, Inf, or null for a float view's values; null for other dtypes. */
function nonFinite(backend: Backend<unknown>, ref: TensorRef<unknown>): 'NaN' | 'Inf' | null {
  if (!['float32', 'float16', 'bfloat16', 'float64'].includes(ref.dtype)) return null;
  const host: HostArray = backend.readSync!(ref.storage);
  const decode = decoders[ref.dtype];
  const rank = ref.shape.length;
  const index = new Array<number>(rank).fill(0);
  const total = ref.shape.reduce((a, b) => a * b, 1);
  let found: 'NaN' | 'Inf' | null = null;
  for (let n = 0; n < total; n++) {
    let at = ref.offset;
    for (let d = 0; d < rank; d++) at += index[d]! * ref.strides[d]!;
    const raw = host[at]!;
    const v = decode ? decode(raw) : raw;
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) found = 'Inf';
    for (let d = rank - 1; d >= 0; d--) {
      if (++index[d]! < ref.shape[d]!) break;
      index[d] = 0;
    }
  }
  return found;
}

function isRef(x: unknown): x is TensorRef<unknown> {
  return typeof x === 'object' && x !== null && 'strides' in x && 'storage' in x;
}

/** The backend with each kernel followed by a finiteness check of its output. */
function instrument(backend: Backend<unknown>): Backend<unknown> {
  if (!backend.readSync) {
    throw new TensorError(`detectAnomaly(): the ${backend.name} backend cannot read synchronously; run the anomaly check on the cpu (move the model and batch with .to('cpu'))`);
  }
  const kernels = backend.kernels as unknown as Record<string, (...args: unknown[]) => void>;
  const checked: Record<string, (...args: unknown[]) => void> = {};
  for (const name of Object.keys(kernels)) {
    checked[name] = (...args: unknown[]) => {
      const refs = args.filter(isRef);
      // scatterAdd, scatter and fill write into their first ref; every other kernel into its last.
      const inPlace = name === 'scatterAdd' || name === 'scatter';
      const out = inPlace || name === 'fill' ? refs[0]! : refs[refs.length - 1]!;
      const inputs = refs.filter((r) => r !== out);
      const inputsFinite = (inPlace ? refs : inputs).every((r) => nonFinite(backend, r) === null);
      kernels[name]!.apply(backend.kernels, args);
      if (!inputsFinite) return;
      const bad = nonFinite(backend, out);
      if (bad) {
        const op = typeof args[0] === 'string' ? (args[0] as string) : name;
        throw new AnomalyError({ op, value: bad, site: captureSite(), shape: out.shape, dtype: out.dtype });
      }
    };
  }
  // Everything but the kernels falls through to the backend itself (class-based backends too).
  return Object.assign(Object.create(backend) as Backend<unknown>, { kernels: checked as unknown as Kernels<unknown> });
}

/** @internal The backend dispatch should use: instrumented inside detectAnomaly. */
export function maybeInstrumented(backend: Backend<unknown>): Backend<unknown> {
  if (depth === 0) return backend;
  let wrapped = instrumented.get(backend);
  if (!wrapped) {
    wrapped = instrument(backend);
    instrumented.set(backend, wrapped);
  }
  return wrapped;
}

/**
 * Run `fn` with every op checked: the first op that turns finite inputs into NaN/Inf throws an
 * AnomalyError naming the op and the line of user code that ran it. Synchronous fns only.
 */
export function detectAnomaly<T>(fn: () => T): T {
  depth++;
  try {
    const result = fn();
    if (result instanceof Promise) throw new TypeError('detectAnomaly(fn): fn must be synchronous');
    return result;
  } finally {
    depth--;
  }
}
