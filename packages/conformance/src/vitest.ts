/**
 * The vitest adapter: `describeConformance` turns the suite into one `describe` per category and
 * one `it` per case (ESM only, like vitest).
 *
 * @module \@core/conformance/vitest
 */
// The vitest adapter: `describeConformance(loadBackend, options)` generates one `describe` per
// category and one `it` per case, instantiated from the capabilities the backend declares.
//
//   // my-backend/test/conformance.test.ts
//   import { describeConformance } from '@core/conformance/vitest';
//   import { createMyBackend } from '../src/index.js';
//   describeConformance(() => createMyBackend(), { expectations: './test/expectations.json' });
import { afterAll, describe, it } from 'vitest';
import { prepare, runCase, skipReason, type RunOptions } from './runner/run.js';
import type { BackendLoader } from './runner/env.js';
import { buildReport, renderMarkdown } from './runner/report.js';
import { CATEGORIES, type Case, type CaseResult } from './types.js';

/** Cases declared between two turns of the event loop. */
const DECLARE_SLICE = 250;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** Options of `describeConformance`. */
export interface DescribeOptions extends Omit<RunOptions, 'expectations' | 'onResult'> {
  /** Suite title suffix (default: the backend's device type). */
  readonly name?: string;
  /** Parsed expectations JSON, or the path of the JSON file (read with node:fs). */
  readonly expectations?: unknown;
  /** Write the JSON report / Markdown matrix here after the run. */
  readonly report?: string;
  /** Write the Markdown support matrix here after the run. */
  readonly markdown?: string;
}

async function readJson(path: string): Promise<unknown> {
  const { readFile } = await import('node:fs/promises');
  return JSON.parse(await readFile(path, 'utf8'));
}

async function writeText(path: string, text: string): Promise<void> {
  const { mkdir, writeFile } = await import('node:fs/promises');
  const { dirname } = await import('node:path');
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
}

/**
 * Declare the suite as vitest tests: one `describe` per category and one `it` per case, for the backend `load` provides; call it at the top level of a test file.
 */
export function describeConformance(load: BackendLoader, options: DescribeOptions = {}): void {
  describe(`conformance${options.name ? `: ${options.name}` : ''}${options.compiled ? ' (compiled)' : ''}`, async () => {
    const expectationsJson = typeof options.expectations === 'string' ? await readJson(options.expectations) : options.expectations;
    const { env, cases, expectations } = await prepare(load, { ...options, expectations: expectationsJson });
    const results: CaseResult[] = [];
    const strict = options.strict ?? false;

    for (const category of CATEGORIES) {
      const list = cases.filter((c) => c.category === category);
      if (list.length === 0) continue;
      // Declared in slices with a turn of the event loop between them: one long synchronous
      // stretch starves the worker's RPC to vitest on a busy machine ("Timeout calling onTaskUpdate").
      describe(category, async () => {
        for (let i = 0; i < list.length; i++) {
          if (i > 0 && i % DECLARE_SLICE === 0) await nextTurn();
          defineCase(list[i]!);
        }
      });
    }

    function defineCase(c: Case): void {
      const expectation = expectations.get(c.id);
      const reason = skipReason(c, expectation, options.compiled);
      if (reason !== undefined) {
        results.push({ id: c.id, category: c.category, op: c.op, dtype: c.dtype, status: 'skip', reason });
        it.skip(`${c.id} — skipped: ${reason}`, () => {});
        return;
      }
      it(c.id, async (test) => {
        const r = await runCase(c, expectation, options.timeoutMs, options.rerunCommand ?? ((id) => `vitest run -t '${id}'`), options.compiled);
        results.push(r);
        if (r.status === 'fail') throw new Error(r.message);
        if (r.status === 'skip') test.skip(r.reason); // eager only, found at run time
        if (r.status === 'xpass') {
          const message = `${c.id} is listed as xfail (${r.reason}) but passed: remove it from the expectations file`;
          if (strict) throw new Error(message);
          console.warn(`[conformance] ${message}`);
        }
      }, c.timeoutMs);
    }

    it('expectations file lists only existing cases', () => {
      if (options.filter !== undefined) return;
      const known = new Set(cases.map((c) => c.id));
      const stale = [...expectations.keys()].filter((id) => !known.has(id));
      if (stale.length === 0) return;
      const message = `expectations for ${env.name} list ids that match no case: ${stale.join(', ')}`;
      if (strict) throw new Error(message);
      console.warn(`[conformance] ${message}`);
    });

    afterAll(async () => {
      if (!options.report && !options.markdown) return;
      const known = new Set(cases.map((c) => c.id));
      const report = buildReport(env, results, { strict, staleExpectations: [...expectations.keys()].filter((id) => !known.has(id)), durationMs: 0 });
      if (options.report) await writeText(options.report, `${JSON.stringify(report, null, 2)}\n`);
      if (options.markdown) await writeText(options.markdown, renderMarkdown(report));
    });
  });
}

export type { BackendLoader } from './runner/env.js';
