// The suite's vocabulary: categories, cases, the environment a run is instantiated for, results.
import type { Backend, Device, DTypeName } from '@core/tensor';

/** Case categories, in report order (mixed precision: 'autocast' for AC-*, 'gradscaler' for GS-*). */
export const CATEGORIES = [
  'storage', 'primitives', 'composites', 'views', 'promotion', 'numerics', 'devices', 'transfers',
  'random', 'autograd', 'optimizers', 'autocast', 'gradscaler', 'training', 'capabilities',
] as const;
/** A case category: a section of the report. */
export type Category = (typeof CATEGORIES)[number];

/** What a passing case measured (for the report's max abs/rel error columns). */
export interface Measure {
  /** The largest absolute error. */
  readonly maxAbs?: number;
  /** The largest relative error. */
  readonly maxRel?: number;
}

/** One conformance case: an id, where it goes in the report, and a `run` that throws on failure. */
export interface Case {
  /** Stable, unique: `category/op/dtype/sample`. Expectations files refer to it. */
  readonly id: string;
  /** Its category. */
  readonly category: Category;
  /** Row of the support matrix. */
  readonly op: string;
  /** Column of the support matrix ('-' when the case is not about one dtype). */
  readonly dtype: DTypeName | '-';
  /** Set when the backend's declared capabilities rule the case out; reported as a skip. */
  readonly skip?: string;
  /** Throws (a ConformanceFailure or any error) to fail. */
  readonly run: () => Promise<Measure | void> | Measure | void;
  /**
   * The case run compiled (the `compiled` run option): its library calls wrapped in `compile()` and
   * called until they replay, the replay checked like `run` checks eager and against eager bit for bit.
   * Absent: the case has no compiled form, and a compiled run reports it skipped with NO_COMPILED_FORM.
   */
  readonly compiled?: () => Promise<Measure | void>;
  /**
   * Its own hang guard in ms, when it runs much longer than a case does (a 100-step training run
   * on a software GPU): the run's `timeoutMs` applies when that is longer.
   */
  readonly timeoutMs?: number;
}

/**
 * How a run stands with the cpu backend:
 * - `under-test`: the backend under test is the cpu;
 * - `registered-by-runner`: the runner imported `@core/backend-cpu` as the reference host device
 *   (a run that is not isolated);
 * - `already-registered`: the cpu backend was registered before the runner looked (by the process
 *   or the backend's loader), so an isolated run cannot leave it out and the cases that need it run;
 * - `absent`: an isolated run: the cpu backend is not registered, and cases that need the cpu
 *   device are skipped with ISOLATED_SKIP as their reason.
 */
export type CpuPresence = 'under-test' | 'registered-by-runner' | 'already-registered' | 'absent';

/**
 * The reason of every case an isolated run skips because it needs the cpu device (transfers to and
 * from the cpu, the cpu-scalar device rules, comparisons with the cpu backend); the report counts them.
 */
export const ISOLATED_SKIP =
  'isolated run: needs the cpu device, and the cpu backend is not registered (core-conformance --with-cpu, or { isolated: false }, runs it)';

/** The skip reason, in a compiled run, of a case that has no compiled form. */
export const NO_COMPILED_FORM =
  'not run compiled: this case has no compiled form (the compiled run covers the op-table cases, forward and gradients, the autocast AC-8 cases and the optimizer and training runs); its eager run covers it';

/** The skip reason of a case that needs the cpu device: ISOLATED_SKIP in an isolated run, else `otherwise`. */
export function cpuSkip(env: Env, otherwise?: string): string | undefined {
  return env.cpuPresence === 'absent' ? ISOLATED_SKIP : otherwise;
}

/** The backend under test and the devices the cases use. */
export interface Env {
  /** Device type of the backend under test. */
  readonly name: string;
  /** The backend object. */
  readonly backend: Backend<unknown>;
  /** `name:0` (plain `cpu` for the cpu backend). */
  readonly device: Device;
  /** `name:1` when the backend has more than one device, else null. */
  readonly peer: Device | null;
  /**
   * The cpu device, when the backend under test is not cpu and the cpu backend is registered (the
   * reference host device), else null: the cpu is under test, or the run is isolated.
   */
  readonly cpu: Device | null;
  /** How the run stands with the cpu backend; in an isolated run the cases that need the cpu are skipped. */
  readonly cpuPresence: CpuPresence;
  /** dtypes the backend computes in / stores. */
  readonly compute: ReadonlySet<DTypeName>;
  /** dtypes the backend can store. */
  readonly storage: ReadonlySet<DTypeName>;
  /** Whether NaN/Inf follow IEEE 754 (NaN/Inf cases are skipped otherwise). */
  readonly strictNumerics: boolean;
  /** Whether the backend reads synchronously. */
  readonly syncRead: boolean;
  /** Composite ops the backend registers fused kernels for. */
  readonly fused: ReadonlySet<string>;
}

/** A case's outcome: passed, failed, skipped, failed as expected (xfail), or passed though expected to fail (xpass). */
export type Status = 'pass' | 'fail' | 'skip' | 'xfail' | 'xpass';

/** One case's outcome, as the report lists it. */
export interface CaseResult {
  /** The case id. */
  readonly id: string;
  /** The case's category. */
  readonly category: Category;
  /** The op (matrix row). */
  readonly op: string;
  /** The dtype (matrix column), or '-'. */
  readonly dtype: DTypeName | '-';
  /** The outcome. */
  readonly status: Status;
  /** Failure message (fail, xfail), or why the case was skipped or expected to fail. */
  readonly message?: string;
  /** The expectation's or the capability check's reason, for skip, xfail and xpass. */
  readonly reason?: string;
  /** The largest absolute error measured, when the case measured one. */
  readonly maxAbs?: number;
  /** The largest relative error measured, when the case measured one. */
  readonly maxRel?: number;
  /** How long the case ran, in milliseconds. */
  readonly ms?: number;
}

/** A failed expectation inside a case (as opposed to an unexpected exception). */
export class ConformanceFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConformanceFailure';
  }
}

export function fail(message: string): never {
  throw new ConformanceFailure(message);
}
