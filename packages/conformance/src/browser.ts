/**
 * The browser entry: the runner for a test page, with no Node APIs.
 *
 * @module \@core/conformance/browser
 */
// The browser entry: the same runner, for a test page. No Node APIs are imported anywhere under
// this entry (the cpu reference device is loaded with a dynamic import that bundlers handle).
//
//   import { runInBrowser, renderMarkdown } from '@core/conformance/browser';
//   import { createMyBackend } from 'my-backend';
//   const report = await runInBrowser(() => createMyBackend(), { onResult: (r) => log(r) });
//   document.body.innerText = renderMarkdown(report);
import { runConformance, type RunOptions } from './runner/run.js';
import type { BackendLoader } from './runner/env.js';
import type { Report } from './runner/report.js';

/**
 * Run the suite in a browser page against the backend `load` provides (the cpu reference device is imported on demand); resolves with the report.
 */
export async function runInBrowser(load: BackendLoader, options: RunOptions = {}): Promise<Report> {
  return runConformance(load, options);
}

export { renderMarkdown, type Report } from './runner/report.js';
export { parseExpectations } from './runner/expectations.js';
export type { BackendLoader } from './runner/env.js';
export type { RunOptions } from './runner/run.js';
