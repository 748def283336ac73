// Types for guide.mjs, which test/docs/benchmarks-guide.test.ts imports.

/** Absolute path of docs/guides/benchmarks.md. */
export declare const GUIDE: string;
/** How to regenerate the page, for the staleness test's message. */
export declare const REGENERATE: string;
/** The parsed docs/benchmarks/*.json results, cpu first. */
export declare function loadResults(dir?: string): unknown[];
/** The page generated from the results (by default, the committed json files). */
export declare function renderGuide(reports?: unknown[]): string;
/** Regenerate the page; returns its path. */
export declare function writeGuide(): string;
