// The suite's vocabulary: categories, cases, the environment a run is instantiated for, results.
import type { Backend, Device, DTypeName } from '@core/tensor';

/**
 * Case categories, in report order. Mixed precision adds 'autocast' (AC-*) and 'gradscaler' (GS-*)
 * here when issue 4 lands: one more builder in cases/index.ts each, nothing else changes.
 */
export const CATEGORIES = [
  'storage', 'primitives', 'composites', 'views', 'promotion', 'numerics', 'devices', 'transfers',
  'random', 'autograd', 'optimizers', 'training', 'capabilities',
] as const;
export type Category = (typeof CATEGORIES)[number];

/** What a passing case measured (for the report's max abs/rel error columns). */
export interface Measure {
  readonly maxAbs?: number;
  readonly maxRel?: number;
}

export interface Case {
  /** Stable, unique: `category/op/dtype/sample`. Expectations files refer to it. */
  readonly id: string;
  readonly category: Category;
  /** Row of the support matrix. */
  readonly op: string;
  /** Column of the support matrix ('-' when the case is not about one dtype). */
  readonly dtype: DTypeName | '-';
  /** Set when the backend's declared capabilities rule the case out; reported as a skip. */
  readonly skip?: string;
  /** Throws (a ConformanceFailure or any error) to fail. */
  readonly run: () => Promise<Measure | void> | Measure | void;
}

/** The backend under test and the devices the cases use. */
export interface Env {
  /** Device type of the backend under test. */
  readonly name: string;
  readonly backend: Backend<unknown>;
  /** `name:0` (plain `cpu` for the cpu backend). */
  readonly device: Device;
  /** `name:1` when the backend has more than one device, else null. */
  readonly peer: Device | null;
  /** The cpu device, when the backend under test is not cpu (the reference host device), else null. */
  readonly cpu: Device | null;
  /** dtypes the backend computes in / stores. */
  readonly compute: ReadonlySet<DTypeName>;
  readonly storage: ReadonlySet<DTypeName>;
  readonly strictNumerics: boolean;
  readonly syncRead: boolean;
  /** Composite ops the backend registers fused kernels for. */
  readonly fused: ReadonlySet<string>;
}

export type Status = 'pass' | 'fail' | 'skip' | 'xfail' | 'xpass';

export interface CaseResult {
  readonly id: string;
  readonly category: Category;
  readonly op: string;
  readonly dtype: DTypeName | '-';
  readonly status: Status;
  /** Failure message (fail, xfail), or why the case was skipped or expected to fail. */
  readonly message?: string;
  readonly reason?: string;
  readonly maxAbs?: number;
  readonly maxRel?: number;
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
