// The runtime import graph of packages/*/src and its cycles, for check-cycles.mjs.
//
// dpdm reads the graph: with `transform` it runs each file through TypeScript's transpileModule
// first, so it sees exactly the imports that survive compilation (`import type`, `{ type X }`,
// `export type … from` and imports used only as types are erased, as tsc and esbuild erase them),
// and it resolves specifiers with each package's tsconfig.json (`./x.js` → `./x.ts`).
//
// A cycle is kept canonically as the set of imports that lie on some cycle: an import a → b does
// exactly when a and b are in the same strongly connected component (SCC) of the graph. That set
// does not depend on file order or on which cycle a search happens to find first, and it catches
// both a new file joining a tangle and a new import inside one (which closes new loops while the
// SCC's files stay the same). Cycles are printed as paths, each rotated to start at its smallest
// file.
import { readFileSync, realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { parseDependencyTree } from 'dpdm';

/** Where the checked sources live, relative to the root; only imports between these files count. */
export const SOURCE_GLOB = 'packages/*/src/**/*.{ts,tsx}';
/** How an import is written in the baseline and in messages. */
export const ARROW = ' → ';

const toPosix = (path) => path.split(sep).join('/');
const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The runtime imports between the source files under `root`.
 * @param {string} root the repository (or fixture) root
 * @returns {Promise<{ graph: Map<string, string[]>, unresolved: string[], ignoreMarkers: string[] }>}
 *   graph: file → the files it imports at run time (root-relative, `/`-separated, sorted);
 *   unresolved: relative imports that resolve to no file (the graph cannot see past them);
 *   ignoreMarkers: files with a `@dpdm-ignore` comment, which would hide an import from dpdm.
 */
export async function readImportGraph(root) {
  // The real path: TypeScript's resolver follows symlinks, and the file filter below must match its paths.
  const absRoot = realpathSync(resolve(root));
  const sourceFile = new RegExp(`^${escapeRegExp(absRoot)}[\\\\/]packages[\\\\/][^\\\\/]+[\\\\/]src[\\\\/].*\\.tsx?$`);
  const tree = await parseDependencyTree(SOURCE_GLOB, {
    cwd: absRoot,
    context: absRoot,
    transform: true,
    // import() runs after every module has loaded, so it cannot see a half-initialised module:
    // it is how a cycle is broken, not a cycle.
    skipDynamicImports: true,
    include: sourceFile,
    exclude: /\.d\.tsx?$/,
  });
  const graph = new Map();
  const unresolved = [];
  const ignoreMarkers = [];
  for (const [key, deps] of Object.entries(tree)) {
    if (deps === null) continue; // outside the sources: a leaf
    const file = toPosix(key);
    const targets = new Set();
    for (const dep of deps) {
      if (dep.id === null) {
        if (dep.request.startsWith('.')) unresolved.push(`${file} imports '${dep.request}'`);
        continue;
      }
      const target = toPosix(dep.id);
      if (tree[dep.id] !== null && tree[dep.id] !== undefined) targets.add(target);
    }
    graph.set(file, [...targets].sort(compare));
    if (readFileSync(resolve(absRoot, key), 'utf8').includes('@dpdm-ignore')) ignoreMarkers.push(file);
  }
  return { graph: sortedMap(graph), unresolved: unresolved.sort(compare), ignoreMarkers: ignoreMarkers.sort(compare) };
}

/** Code-unit order: the same on every machine and locale. */
export function compare(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedMap(map) {
  return new Map([...map.entries()].sort(([a], [b]) => compare(a, b)));
}

/**
 * Strongly connected components with a cycle in them (two or more files, or a file importing
 * itself), each as its sorted files; sorted by first file. Tarjan's algorithm, iterative.
 * @param {Map<string, string[]>} graph
 * @returns {string[][]}
 */
export function cyclicComponents(graph) {
  const index = new Map();
  const low = new Map();
  const onStack = new Set();
  const stack = [];
  const components = [];
  let next = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    // Each frame is a file and how far through its imports the walk has got.
    const frames = [{ file: start, i: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (frames.length > 0) {
      const frame = frames[frames.length - 1];
      const targets = graph.get(frame.file) ?? [];
      if (frame.i < targets.length) {
        const target = targets[frame.i++];
        if (!index.has(target)) {
          index.set(target, next);
          low.set(target, next++);
          stack.push(target);
          onStack.add(target);
          frames.push({ file: target, i: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.file, Math.min(low.get(frame.file), index.get(target)));
        }
        continue;
      }
      frames.pop();
      if (frames.length > 0) {
        const parent = frames[frames.length - 1].file;
        low.set(parent, Math.min(low.get(parent), low.get(frame.file)));
      }
      if (low.get(frame.file) !== index.get(frame.file)) continue;
      const component = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        component.push(member);
      } while (member !== frame.file);
      const selfImport = (graph.get(frame.file) ?? []).includes(frame.file);
      if (component.length > 1 || selfImport) components.push(component.sort(compare));
    }
  }
  return components.sort((a, b) => compare(a[0], b[0]));
}

/**
 * The imports that lie on a cycle, grouped by component: the canonical form the baseline stores.
 * @param {Map<string, string[]>} graph
 * @returns {{ files: string[], imports: string[] }[]} imports written `from → to`, sorted
 */
export function cycleGroups(graph) {
  return cyclicComponents(graph).map((files) => {
    const members = new Set(files);
    const imports = [];
    for (const from of files) for (const to of graph.get(from) ?? []) if (members.has(to)) imports.push(edge(from, to));
    return { files, imports: imports.sort(compare) };
  });
}

/** `from → to`. */
export function edge(from, to) {
  return `${from}${ARROW}${to}`;
}

/** [from, to] of an `edge()` string, or null when it is not one. */
export function parseEdge(text) {
  const parts = typeof text === 'string' ? text.split(ARROW) : [];
  return parts.length === 2 && parts[0] && parts[1] ? parts : null;
}

/** A graph made of `from → to` strings. */
export function graphOfEdges(edges) {
  const graph = new Map();
  for (const text of edges) {
    const parsed = parseEdge(text);
    if (!parsed) continue;
    const [from, to] = parsed;
    if (!graph.has(from)) graph.set(from, []);
    if (!graph.has(to)) graph.set(to, []);
    graph.get(from).push(to);
  }
  for (const targets of graph.values()) targets.sort(compare);
  return graph;
}

/**
 * The shortest cycle through the import from → to, as a closed path [from, to, …, from] rotated
 * to start at its smallest file (so the same loop always prints the same way), or null if the
 * import is on no cycle. Breadth-first from `to` back to `from`; ties go to the smaller file.
 */
export function shortestCycleThrough(graph, from, to) {
  if (from === to) return [from, from];
  const previous = new Map([[to, null]]);
  let frontier = [to];
  while (frontier.length > 0 && !previous.has(from)) {
    const nextFrontier = [];
    for (const file of frontier) {
      for (const target of graph.get(file) ?? []) {
        if (previous.has(target)) continue;
        previous.set(target, file);
        nextFrontier.push(target);
      }
    }
    frontier = nextFrontier;
  }
  if (!previous.has(from)) return null;
  const back = [];
  for (let file = from; file !== null; file = previous.get(file)) back.push(file);
  // back is from … to, walked backwards: the loop is from → to → … → from.
  const loop = [from, ...back.reverse().slice(0, -1)];
  return rotateToSmallest(loop);
}

/** A loop [a, b, c] (without the closing file) rotated to its smallest file and closed: [b, c, a, b]. */
export function rotateToSmallest(loop) {
  let start = 0;
  for (let i = 1; i < loop.length; i++) if (compare(loop[i], loop[start]) < 0) start = i;
  const rotated = [...loop.slice(start), ...loop.slice(0, start)];
  return [...rotated, rotated[0]];
}

/**
 * Loops that cover the given imports: the shortest cycle through each import in `graph` (or, when
 * there is none, the import alone), shortest loops first, leaving out a loop once every import it
 * was found for is on a loop already listed. Each result names the given imports it contains, so a
 * message can say which of the loop's imports are new or gone. Short loops first because the
 * import a developer just added usually closes the shortest one.
 * @returns {{ path: string[], marked: string[] }[]}
 */
export function loopsCovering(graph, imports) {
  const candidates = [...new Set(imports)].map((text) => {
    const parsed = parseEdge(text);
    return { text, path: parsed ? (shortestCycleThrough(graph, parsed[0], parsed[1]) ?? parsed) : [text] };
  });
  candidates.sort((a, b) => a.path.length - b.path.length || compare(a.path.join(ARROW), b.path.join(ARROW)) || compare(a.text, b.text));
  const pending = new Set(imports);
  const loops = [];
  for (const { text, path } of candidates) {
    if (!pending.has(text)) continue;
    const marked = [];
    for (let i = 0; i + 1 < path.length; i++) {
      const step = edge(path[i], path[i + 1]);
      if (pending.delete(step)) marked.push(step);
    }
    if (pending.delete(text)) marked.push(text); // an import that is on no loop of `graph`
    loops.push({ path, marked });
  }
  return loops;
}

/**
 * Compares the cycles of `graph` with a baseline's imports.
 * @param {Map<string, string[]>} graph the current runtime import graph
 * @param {Iterable<string>} baselineImports `from → to` strings from the baseline
 * @returns {{ added: { path: string[], marked: string[] }[], gone: { path: string[], marked: string[] }[], groups: { files: string[], imports: string[] }[] }}
 *   added: loops through imports that are on a cycle now and not in the baseline;
 *   gone: loops of the baseline through imports that are on no cycle now.
 */
export function compareWithBaseline(graph, baselineImports) {
  const groups = cycleGroups(graph);
  const now = new Set(groups.flatMap((group) => group.imports));
  const before = new Set(baselineImports);
  const added = [...now].filter((text) => !before.has(text));
  const gone = [...before].filter((text) => !now.has(text));
  return {
    added: loopsCovering(graph, added),
    gone: loopsCovering(graphOfEdges(before), gone),
    groups,
  };
}
