/**
 * One suite that proves a @core/tensor backend behaves like every other: a float64 reference
 * oracle, OpInfo-style cases, and the runner and report. Runs under Node, in a bundler or in a
 * browser page.
 *
 * @module \@core/conformance
 */
// @core/conformance: one suite that proves a @core/tensor backend behaves like every other.
// This entry has no Node-only imports: it runs under Node, in a bundler, or in a browser page.
export { runConformance, runCase, prepare, selectCases, ISOLATED_SUBSET, type RunOptions, type Prepared } from './runner/run.js';
export { prepareEnv, ConformanceSetupError, type BackendLoader, type LoadOptions } from './runner/env.js';
export { parseExpectations, type Expectation, type ExpectationsFile, type ExpectationStatus } from './runner/expectations.js';
export { buildReport, renderMarkdown, STATUSES, type Report, type MatrixCell, type Counts } from './runner/report.js';
export { buildCases } from './cases/index.js';
export { OPS } from './ops/index.js';
export type { CallContext, OpInfo, Sample } from './opinfo.js';
export type { EagerOnly } from './cases/compiled.js';
export { CATEGORIES, ConformanceFailure, ISOLATED_SKIP, NO_COMPILED_FORM, type Case, type CaseResult, type Category, type CpuPresence, type Env, type Measure, type Status } from './types.js';
export { APPROX, GRAD, EXACT, toleranceFor, type Tolerance, type ToleranceClass, type Override } from './tolerance.js';
export { expectTensor, expectValues, type Expected, type CheckSpec } from './check.js';
/** The float64 reference oracle, for backend authors who want to check a kernel on its own. */
export * as oracle from './oracle/index.js';
