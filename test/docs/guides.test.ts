// The guides cannot lie: every ```ts snippet in docs/guides/*.md type-checks against the published
// types and runs to completion as its own program (a snippet that throws, rejects or exits non-zero
// fails here, pointing at the guide's line). Snippets marked ```ts no-run: <reason> are only
// type-checked. Relative links in the guides and CONTRIBUTING.md must point at files that exist.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  extractSnippets, GUIDES_DIR, makeScratch, REPO_ROOT, runNode, scratchName, transpile, typecheck, writeSnippet, type Snippet,
} from './snippets.js';

const GUIDES = readdirSync(GUIDES_DIR).filter((f) => f.endsWith('.md')).sort();
const SNIPPETS = GUIDES.flatMap((g) => extractSnippets(join(GUIDES_DIR, g)));
/** A snippet is a small program on small shapes; this only stops a hang from stalling the suite. */
const SNIPPET_TIMEOUT_MS = 60_000;

let scratch: ReturnType<typeof makeScratch>;
const written = new Map<Snippet, string>();

beforeAll(() => {
  scratch = makeScratch();
  for (const s of SNIPPETS) written.set(s, writeSnippet(scratch.dir, s));
});
afterAll(() => scratch?.cleanup());

/** Markdown without fenced code blocks and inline code spans: what can hold real links. */
function proseOf(markdown: string): string {
  let fenced = false;
  const kept: string[] = [];
  for (const line of markdown.split('\n')) {
    if (/^\s*(`{3,}|~{3,})/.test(line)) { fenced = !fenced; continue; }
    if (!fenced) kept.push(line.replace(/(`+)[\s\S]*?\1/g, ''));
  }
  return kept.join('\n');
}

function where(s: Snippet): string {
  return `${s.source}:${s.line}`;
}

describe('the guides', () => {
  it('exist, and each one that teaches an API has runnable snippets', () => {
    for (const g of ['getting-started.md', 'devices.md', 'mixed-precision.md', 'memory.md', 'writing-a-backend.md', 'support-matrix.md']) {
      expect(GUIDES, `docs/guides/${g}`).toContain(g);
    }
    for (const g of ['getting-started.md', 'devices.md', 'mixed-precision.md', 'memory.md', 'writing-a-backend.md']) {
      const runnable = SNIPPETS.filter((s) => s.source.endsWith(`/${g}`) && s.noRun === null);
      expect(runnable.length, `${g} has runnable snippets`).toBeGreaterThan(0);
    }
  });

  it('mark few snippets no-run, each with a reason', () => {
    const skipped = SNIPPETS.filter((s) => s.noRun !== null);
    expect(skipped.length).toBeLessThanOrEqual(Math.ceil(SNIPPETS.length / 10));
    for (const s of skipped) expect(s.noRun!.length, where(s)).toBeGreaterThanOrEqual(10);
  });

  it('type-check: every snippet compiles against the packages\' published types', () => {
    const names = new Map(SNIPPETS.map((s) => [written.get(s)!, `${s.source}`]));
    const errors = typecheck([...written.values()], names);
    expect(errors, errors.join('\n')).toEqual([]);
  });

  it('link only to files that exist', () => {
    const pages = [...GUIDES.map((g) => join(GUIDES_DIR, g)), join(REPO_ROOT, 'CONTRIBUTING.md')];
    const broken: string[] = [];
    for (const page of pages) {
      const text = proseOf(readFileSync(page, 'utf8'));
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^(?:[a-z]+:|#)/i.test(target)) continue;
        const path = resolve(dirname(page), decodeURIComponent(target.split('#')[0]!));
        if (!existsSync(path)) broken.push(`${page.slice(REPO_ROOT.length)}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

for (const guide of GUIDES) {
  const snippets = SNIPPETS.filter((s) => s.source.endsWith(`/${guide}`) && s.noRun === null);
  if (snippets.length === 0) continue;
  describe(guide, () => {
    for (const s of snippets) {
      it.concurrent(`snippet at line ${s.line} runs`, async () => {
        const mjs = transpile(written.get(s)!);
        const r = await runNode(mjs, SNIPPET_TIMEOUT_MS);
        if (r.code !== 0) {
          const why = r.timedOut ? `did not finish within ${SNIPPET_TIMEOUT_MS / 1000} s` : `exited with ${r.code ?? r.signal}`;
          throw new Error(
            `${where(s)} (${scratchName(s)}) ${why}\n--- stderr ---\n${r.stderr.trim()}\n--- stdout ---\n${r.stdout.trim().slice(-2000)}`,
          );
        }
      }, SNIPPET_TIMEOUT_MS + 5_000);
    }
  });
}
