// Running cases: capability skips, expectations (skip / xfail), timeouts, and the report.
import { buildCases } from '../cases/index.js';
import { EagerOnlyResult } from '../cases/compiled.js';
import { ConformanceFailure, NO_COMPILED_FORM, type Case, type CaseResult, type Env } from '../types.js';
import { prepareEnv, type BackendLoader, type LoadOptions } from './env.js';
import { parseExpectations, type Expectation } from './expectations.js';
import { buildReport, type Report } from './report.js';

/** Options of `runConformance` (and of `prepare`). */
export interface RunOptions extends LoadOptions {
  /** Parsed expectations JSON (see ExpectationsFile), or an index from parseExpectations. */
  readonly expectations?: unknown;
  /** Fail on xfail cases that pass and on expectation entries that match no case. */
  readonly strict?: boolean;
  /** Run only cases whose id this accepts (a RegExp, a substring, or a predicate). */
  readonly filter?: RegExp | string | ((c: Case) => boolean);
  /** Per-case time limit (default 60 s): a backend that never resolves a read fails instead of hanging. */
  readonly timeoutMs?: number;
  /** Called after every case (progress output). */
  readonly onResult?: (result: CaseResult) => void;
  /** The command that reruns one case, shown with its failure (default: `--filter '<id>'`). */
  readonly rerunCommand?: (id: string) => string;
  /**
   * Run every case compiled (default false): its library calls (and backward) wrapped in
   * `compile()` and called until they replay, on fresh values written into the same input tensors;
   * the replay is checked against the oracle like eager and against eager bit for bit. Cases listed
   * as eager only (a host read, a data-dependent shape) must raise their CompileError and are
   * skipped as "eager only: <reason>"; cases with no compiled form are skipped with NO_COMPILED_FORM.
   */
  readonly compiled?: boolean;
}

const defaultRerun = (id: string): string => `--filter '${id}'`;

/**
 * A filter (for `RunOptions.filter`) that picks the cases an isolated run of a slow backend covers
 * when the whole suite is too long to run twice: those where core reads values on the host or picks
 * a device — index ranges (gather, scatterAdd, indexSelect, take), data-dependent ops (nonzero,
 * maskedSelect), the losses (crossEntropy, nllLoss) and their gradients, the optimizers, the
 * training runs, and the device and transfer rules.
 */
export const ISOLATED_SUBSET =
  /^(primitives\/(gather|scatterAdd)\/|composites\/(indexSelect|crossEntropy|nllLoss|take|nonzero|maskedSelect)|autograd\/(gather|indexSelect|crossEntropy)\/|autocast\/crossEntropy\/|optimizers\/|training\/|devices\/|transfers\/)/;

export function expectationIndex(expectations: unknown): Map<string, Expectation> {
  if (expectations === undefined) return new Map();
  if (expectations instanceof Map) return expectations as Map<string, Expectation>;
  return parseExpectations(expectations);
}

/** The cases `filter` accepts (all when it is undefined). */
export function selectCases(cases: readonly Case[], filter: RunOptions['filter']): Case[] {
  if (filter === undefined) return [...cases];
  if (typeof filter === 'function') return cases.filter(filter);
  if (typeof filter === 'string') return cases.filter((c) => c.id.includes(filter));
  return cases.filter((c) => filter.test(c.id));
}

function describeError(error: unknown): string {
  if (error instanceof ConformanceFailure) return error.message;
  if (error instanceof Error) {
    const frame = error.stack?.split('\n').slice(1).find((l) => l.includes('at '))?.trim();
    return `${error.name}: ${error.message}${frame ? ` (${frame})` : ''}`;
  }
  return `threw ${String(error)}`;
}

function withTimeout<T>(promise: Promise<T>, ms: number, id: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConformanceFailure(`${id}: did not finish within ${ms} ms (a read or synchronize that never resolves?)`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Why `c` does not run at all (its capability skip, its expectation, no compiled form in a compiled run), or undefined. */
export function skipReason(c: Case, expectation: Expectation | undefined, compiled = false): string | undefined {
  return c.skip ?? (expectation?.status === 'skip' ? expectation.reason : compiled && c.compiled === undefined ? NO_COMPILED_FORM : undefined);
}

/** Run one case under its expectation; `compiled` runs its compiled form (RunOptions.compiled). */
export async function runCase(c: Case, expectation?: Expectation, timeoutMs = 60_000, rerunCommand = defaultRerun, compiled = false): Promise<CaseResult> {
  const base = { id: c.id, category: c.category, op: c.op, dtype: c.dtype };
  const skip = skipReason(c, expectation, compiled);
  if (skip !== undefined) return { ...base, status: 'skip', reason: skip };
  const start = now();
  let error: unknown;
  let measure: Awaited<ReturnType<Case['run']>> | undefined;
  try {
    measure = await withTimeout(Promise.resolve().then(() => (compiled ? c.compiled!() : c.run())), Math.max(timeoutMs, c.timeoutMs ?? 0), c.id);
  } catch (e) {
    error = e ?? new Error('a falsy value was thrown');
  }
  const ms = Math.round((now() - start) * 10) / 10;
  if (error instanceof EagerOnlyResult) return { ...base, status: 'skip', reason: error.reason, ms };
  const errors = measure ? { ...(measure.maxAbs !== undefined ? { maxAbs: measure.maxAbs } : {}), ...(measure.maxRel !== undefined ? { maxRel: measure.maxRel } : {}) } : {};
  if (expectation?.status === 'xfail') {
    return error === undefined
      ? { ...base, status: 'xpass', reason: expectation.reason, message: 'listed as xfail, but passed: remove the expectation', ms, ...errors }
      : { ...base, status: 'xfail', reason: expectation.reason, message: describeError(error), ms };
  }
  if (error === undefined) return { ...base, status: 'pass', ms, ...errors };
  return { ...base, status: 'fail', message: `${describeError(error)}\n  rerun only this case: ${rerunCommand(c.id)}`, ms };
}

function now(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}

/** A loaded backend and its instantiated cases, ready to run. */
export interface Prepared {
  /** The backend under test and the devices the cases use. */
  readonly env: Env;
  /** The cases, filtered. */
  readonly cases: Case[];
  /** The expectations, by case id. */
  readonly expectations: Map<string, Expectation>;
}

/** Load the backend and instantiate its cases (what the vitest adapter does at collection time). */
export async function prepare(load: BackendLoader | undefined, options: RunOptions = {}): Promise<Prepared> {
  const env = await prepareEnv(load, options);
  return { env, cases: selectCases(buildCases(env), options.filter), expectations: expectationIndex(options.expectations) };
}

/** Run the whole suite (or the filtered part) against one backend and return the report. */
export async function runConformance(load: BackendLoader | undefined, options: RunOptions = {}): Promise<Report> {
  const start = now();
  const { env, cases, expectations } = await prepare(load, options);
  const results: CaseResult[] = [];
  for (const c of cases) {
    const r = await runCase(c, expectations.get(c.id), options.timeoutMs, options.rerunCommand, options.compiled);
    results.push(r);
    options.onResult?.(r);
  }
  const known = new Set(cases.map((c) => c.id));
  const stale = options.filter === undefined ? [...expectations.keys()].filter((id) => !known.has(id)) : [];
  return buildReport(env, results, { strict: options.strict ?? false, staleExpectations: stale, durationMs: now() - start });
}
