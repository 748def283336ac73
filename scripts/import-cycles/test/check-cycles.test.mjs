// The import-cycle check on a fixture tree (test/fixtures/tree/packages/demo/src), whose files say
// which of their imports make a runtime cycle and which are erased or lazy.
import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compareWithBaseline, cycleGroups, cyclicComponents, readImportGraph, shortestCycleThrough } from '../cycles.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const fixture = join(here, 'fixtures', 'tree');
const checker = join(here, '..', 'check-cycles.mjs');
const src = (file) => `packages/demo/src/${file}`;
const path = (...files) => files.map(src).join(' → ');

const ABC = [src('a.ts'), src('b.ts'), src('sub/c.ts')];
const TANGLE = [src('tangle/index.ts'), src('tangle/left.ts'), src('tangle/right.ts')];

let scratch;
let baseline;
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'import-cycles-'));
  baseline = join(scratch, 'baseline.json');
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

function check(...args) {
  return checkTree(fixture, ...args);
}

/** Runs the checker in a child process without blocking this one (a blocked test worker misses vitest's RPC deadline on a busy machine). */
function checkTree(root, ...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [checker, '--root', root, '--baseline', baseline, ...args], { encoding: 'utf8' }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, output: stdout + stderr });
    });
  });
}

describe('the runtime import graph', () => {
  it('follows `.js` specifiers to .ts files, into subfolders and through re-exports', async () => {
    const { graph, unresolved, ignoreMarkers } = await readImportGraph(fixture);
    expect(graph.get(src('a.ts'))).toEqual([src('b.ts')]);
    expect(graph.get(src('sub/c.ts'))).toEqual([src('a.ts')]);
    expect(graph.get(src('tangle/index.ts'))).toEqual([src('tangle/left.ts'), src('tangle/right.ts')]);
    expect(unresolved).toEqual([]);
    expect(ignoreMarkers).toEqual([]);
  });

  it('leaves out imports that TypeScript erases (type-only, or used only as types) and dynamic import()', async () => {
    const { graph } = await readImportGraph(fixture);
    expect(graph.get(src('render.ts'))).toEqual([src('shape.ts')]);
    expect(graph.get(src('shape.ts'))).toEqual([]); // import type
    expect(graph.get(src('inline-type.ts'))).toEqual([]); // import { type X }, export type … from
    expect(graph.get(src('used-as-type.ts'))).toEqual([]); // plain import, names used as types only
    expect(graph.get(src('lazy.ts'))).toEqual([]); // import()
  });

  it('reports the runtime cycles as strongly connected components, and no type-only one', async () => {
    const { graph } = await readImportGraph(fixture);
    expect(cyclicComponents(graph)).toEqual([ABC, TANGLE]);
  });
});

describe('canonical cycles', () => {
  const graph = new Map([
    ['x', ['y']],
    ['y', ['z', 'w']],
    ['z', ['x']],
    ['w', ['x']],
    ['self', ['self']],
    ['alone', ['x']],
  ]);

  it('prints the shortest loop through an import, rotated to its smallest file', () => {
    expect(shortestCycleThrough(graph, 'z', 'x')).toEqual(['x', 'y', 'z', 'x']);
    expect(shortestCycleThrough(graph, 'y', 'w')).toEqual(['w', 'x', 'y', 'w']);
    expect(shortestCycleThrough(graph, 'self', 'self')).toEqual(['self', 'self']);
    expect(shortestCycleThrough(graph, 'alone', 'x')).toBeNull();
  });

  it('does not depend on the order files or imports come in', () => {
    const shuffled = new Map([...graph.entries()].reverse().map(([file, targets]) => [file, [...targets].reverse()]));
    expect(cycleGroups(shuffled)).toEqual(cycleGroups(graph));
    expect(cycleGroups(graph)).toEqual([
      { files: ['self'], imports: ['self → self'] },
      { files: ['w', 'x', 'y', 'z'], imports: ['w → x', 'x → y', 'y → w', 'y → z', 'z → x'] },
    ]);
  });

  it('counts a new import inside a known tangle as a new cycle, though the tangle keeps its files', () => {
    const known = cycleGroups(graph).flatMap((group) => group.imports).filter((text) => text !== 'y → w');
    const { added, gone } = compareWithBaseline(graph, known);
    expect(added).toEqual([{ path: ['w', 'x', 'y', 'w'], marked: ['y → w'] }]);
    expect(gone).toEqual([]);
  });
});

describe('check-cycles.mjs', () => {
  it('fails on a cycle missing from the baseline, printing it as a path and the update command', async () => {
    const { code, output } = await check();
    expect(code).toBe(1);
    expect(output).toContain('New runtime import cycle(s)');
    expect(output).toContain(path('a.ts', 'b.ts', 'sub/c.ts', 'a.ts'));
    expect(output).toContain(path('tangle/index.ts', 'tangle/left.ts', 'tangle/right.ts', 'tangle/index.ts'));
    expect(output).toContain('npx -y pnpm@12.4.2 check:cycles --update');
    expect(output).not.toMatch(/shape|render|options|inline-type|config|used-as-type|lazy|eager/);
  });

  it('passes once --update has written the baseline, which a second update leaves byte for byte alone', async () => {
    expect((await check('--update')).code).toBe(0);
    const written = readFileSync(baseline, 'utf8');
    expect(JSON.parse(written).cycles).toEqual([
      { files: ABC, imports: [`${ABC[0]} → ${ABC[1]}`, `${ABC[1]} → ${ABC[2]}`, `${ABC[2]} → ${ABC[0]}`] },
      {
        files: TANGLE,
        imports: [
          `${TANGLE[0]} → ${TANGLE[1]}`,
          `${TANGLE[0]} → ${TANGLE[2]}`,
          `${TANGLE[1]} → ${TANGLE[2]}`,
          `${TANGLE[2]} → ${TANGLE[0]}`,
        ],
      },
    ]);
    const { code, output } = await check();
    expect(output).toContain("only the baseline's cycles");
    expect(code).toBe(0);
    expect((await check('--update')).code).toBe(0);
    expect(readFileSync(baseline, 'utf8')).toBe(written);
  });

  it('fails on a baseline entry that no longer exists, and says to shrink the baseline', async () => {
    expect((await check('--update')).code).toBe(0);
    const document = JSON.parse(readFileSync(baseline, 'utf8'));
    // shape ↔ render would be a cycle if `import type` counted: as a baseline entry it is stale.
    document.cycles.push({
      files: [src('render.ts'), src('shape.ts')],
      imports: [`${src('render.ts')} → ${src('shape.ts')}`, `${src('shape.ts')} → ${src('render.ts')}`],
    });
    writeFileSync(baseline, JSON.stringify(document, null, 2));
    const { code, output } = await check();
    expect(code).toBe(1);
    expect(output).toContain('lists import cycle(s) that no longer exist');
    expect(output).toContain(path('render.ts', 'shape.ts', 'render.ts'));
    expect(output).toContain(`no longer on a cycle: ${src('shape.ts')} → ${src('render.ts')}`);
    expect(output).toContain('Run `npx -y pnpm@12.4.2 check:cycles --update`');
    expect(output).not.toContain('New runtime import cycle');
  });

  it('fails when it cannot see every import: one that resolves to no file, or one hidden by @dpdm-ignore', async () => {
    const tree = join(scratch, 'tree');
    cpSync(fixture, tree, { recursive: true });
    appendFileSync(join(tree, src('b.ts')), "import { gone } from './gone.js';\nexport const g = gone;\n");
    const c = join(tree, src('sub/c.ts'));
    writeFileSync(c, `// @dpdm-ignore\n${readFileSync(c, 'utf8')}`); // would hide c → a, and so the cycle
    const { code, output } = await checkTree(tree, '--update');
    expect(code).toBe(1);
    expect(output).toContain(`${src('b.ts')} imports './gone.js'`);
    expect(output).toMatch(new RegExp(`@dpdm-ignore[^]*${src('sub/c.ts')}`));
    expect(output).not.toContain('wrote');
  });

  it('rejects unknown arguments', async () => {
    const { code, output } = await check('--updat');
    expect(code).toBe(2);
    expect(output).toContain('usage:');
  });
});
