// Every rule the conformance suite enforces is stated in the TSDoc of the backend contract
// (packages/tensor/src/backend/contract.ts), and each rule names the cases that check it as
// `conformance:` followed by case ids or id prefixes ending in '/'. This test enumerates the suite's
// cases at run time (for the cpu backend and for a restricted two-device backend, so that the cases
// only some backends get are listed too) and fails when a category, or in the categories that drive
// the Backend object directly an op group, has no rule; when a rule cites an id that matches no
// case; and when BACKENDS.md's summary leaves a category out or the backend docs name a stale id.
import '@core/backend-cpu';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCpuBackend } from '@core/backend-cpu';
import { buildCases, CATEGORIES, prepareEnv } from '@core/conformance';
import type { Backend } from '@core/tensor';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from './snippets.js';

const CONTRACT = 'packages/tensor/src/backend/contract.ts';
const BACKENDS_MD = 'packages/tensor/BACKENDS.md';
/** Pages that name case ids, e.g. as a filter or in an example failure. */
const BACKEND_DOCS = [BACKENDS_MD, 'docs/guides/writing-a-backend.md', 'examples/custom-backend/README.md'];
/** Categories whose cases each exercise one member of the Backend object: each op group needs its own rule. */
const PER_GROUP: readonly string[] = ['storage', 'primitives', 'random'];

interface Citation {
  /** A case id, or an id prefix ending in '/'. */
  readonly id: string;
  /** Where: file and line. */
  readonly at: string;
}

const read = (file: string): string => readFileSync(join(REPO_ROOT, file), 'utf8');
const lineOf = (text: string, index: number): number => text.slice(0, index).split('\n').length;

/** The `conformance:` citations in a source's doc comments (`/** … *\/`), each with its line. */
export function citations(source: string, file: string): Citation[] {
  const found: Citation[] = [];
  for (const block of source.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    for (const cite of block[0].matchAll(/conformance:((?:[\s*]*(?:,|and)?[\s*]*`[^`]+`)+)/g)) {
      for (const id of cite[1]!.matchAll(/`([^`]+)`/g)) {
        const at = block.index! + cite.index! + 'conformance:'.length + id.index!;
        found.push({ id: id[1]!, at: `${file}:${lineOf(source, at)}` });
      }
    }
  }
  return found;
}

function matches(citation: string, id: string): boolean {
  return citation.endsWith('/') ? id.startsWith(citation) : id === citation;
}

/** A case's op group: `category/op/`, or the id itself when it has only two segments. */
function groupOf(id: string): string {
  const parts = id.split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}/` : id;
}

/** What is wrong with a set of citations for a set of case ids: malformed or dangling citations, and uncovered categories and groups. */
export function problems(cited: readonly Citation[], ids: readonly string[], categories: readonly string[]): string[] {
  const out: string[] = [];
  for (const c of cited) {
    if (!/^[a-z]+\/\S*$/.test(c.id)) out.push(`${c.at}: '${c.id}' is not a case id or an id prefix (category/op/…)`);
    else if (!ids.some((id) => matches(c.id, id))) out.push(`${c.at}: '${c.id}' matches no conformance case`);
  }
  for (const category of categories) {
    if (!cited.some((c) => c.id.startsWith(`${category}/`))) out.push(`category '${category}' has no rule citing its cases`);
  }
  const groups = new Set(ids.filter((id) => PER_GROUP.includes(id.split('/')[0]!)).map(groupOf));
  for (const group of groups) {
    if (!cited.some((c) => c.id.startsWith(group))) out.push(`'${group}' has no rule of its own (cite '${group}' or ids under it)`);
  }
  return out;
}

/** The cpu backend, renamed, with two devices, no synchronous reads, no fused kernels, float16 stored only and no bfloat16. */
function restricted(): Backend<unknown> {
  const { readSync: _readSync, fused: _fused, ...cpu } = createCpuBackend() as Backend<unknown>;
  const { bfloat16: _bfloat16, ...dtypes } = cpu.capabilities.dtypes;
  return {
    ...cpu,
    name: 'docs_restricted',
    deviceCount: 2,
    capabilities: { ...cpu.capabilities, syncRead: false, dtypes: { ...dtypes, float16: { storage: true, compute: false } } },
  };
}

let ids: string[] = [];
let categories: string[] = [];

beforeAll(async () => {
  const envs = [await prepareEnv(() => 'cpu'), await prepareEnv(() => restricted())];
  const cases = envs.flatMap((env) => buildCases(env));
  ids = [...new Set(cases.map((c) => c.id))];
  categories = [...new Set([...CATEGORIES, ...cases.map((c) => c.category)])];
});

describe('the backend contract states every rule the conformance suite enforces', () => {
  it('the check itself: it reports a category without a rule, a group without one, and a dangling or malformed citation', () => {
    const someIds = ['storage/identity', 'storage/roundtrip/float32', 'primitives/exp/float32/rand-3x4', 'views/t/float32/2x3'];
    const cited: Citation[] = [
      { id: 'storage/identity', at: 'a:1' },
      { id: 'primitives/exp/', at: 'a:2' },
      { id: 'primitives/log/', at: 'a:3' },
      { id: 'exp', at: 'a:4' },
    ];
    expect(problems(cited, someIds, ['storage', 'primitives', 'views'])).toEqual([
      "a:3: 'primitives/log/' matches no conformance case",
      "a:4: 'exp' is not a case id or an id prefix (category/op/…)",
      "category 'views' has no rule citing its cases",
      "'storage/roundtrip/' has no rule of its own (cite 'storage/roundtrip/' or ids under it)",
    ]);
    const doc = '/**\n * A rule (conformance: `storage/identity`,\n * `primitives/exp/` and `views/`).\n */\n// conformance: `storage/nothing` (not a doc comment)\n';
    expect(citations(doc, 'f.ts')).toEqual([
      { id: 'storage/identity', at: 'f.ts:2' },
      { id: 'primitives/exp/', at: 'f.ts:3' },
      { id: 'views/', at: 'f.ts:3' },
    ]);
  });

  it('the case list is enumerated from the suite', () => {
    expect(categories.length).toBeGreaterThanOrEqual(CATEGORIES.length);
    for (const category of categories) expect(ids.some((id) => id.startsWith(`${category}/`)), category).toBe(true);
  });

  it(`${CONTRACT}: every category and every op group of ${PER_GROUP.join(', ')} has a rule, and every cited id matches a case`, () => {
    const cited = citations(read(CONTRACT), CONTRACT);
    expect(cited.length).toBeGreaterThan(0);
    expect(problems(cited, ids, categories)).toEqual([]);
  });

  it(`${BACKENDS_MD} summarises a rule for every category`, () => {
    const rows = read(BACKENDS_MD).split('\n').filter((l) => l.startsWith('| `'));
    const summarised = new Set(rows.map((l) => /^\| `([a-z]+)`/.exec(l)?.[1]));
    expect(categories.filter((c) => !summarised.has(c))).toEqual([]);
  });

  it('the backend docs name only case ids that exist', () => {
    const stale: string[] = [];
    for (const file of BACKEND_DOCS) {
      const text = read(file);
      for (const m of text.matchAll(/`([a-z]+\/[^`\s]*)`/g)) {
        if (!categories.includes(m[1]!.split('/')[0]!)) continue;
        if (!ids.some((id) => matches(m[1]!, id))) stale.push(`${file}:${lineOf(text, m.index!)}: ${m[1]}`);
      }
    }
    expect(stale).toEqual([]);
  });
});
