// Module hooks of pretrained-models-run.mjs: plain Node (20) cannot import TypeScript, so the
// models' shared fixture module (packages/models/test/fixtures.ts) and the sources it imports are
// loaded with their types erased by TypeScript's transpileModule, and their `./x.js` imports are
// resolved to the `./x.ts` files beside them.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** A relative `.js` import from a `.ts` module names the `.ts` file when there is no `.js` one. */
export async function resolve(specifier, context, nextResolve) {
  if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.endsWith('.ts')) {
    const source = new URL(`${specifier.slice(0, -'.js'.length)}.ts`, context.parentURL);
    if (!existsSync(new URL(specifier, context.parentURL)) && existsSync(source)) return { url: source.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

/** A `.ts` module is its source with the types erased, as an ES module. */
export async function load(url, context, nextLoad) {
  if (!url.endsWith('.ts')) return nextLoad(url, context);
  const { outputText } = ts.transpileModule(await readFile(new URL(url), 'utf8'), {
    fileName: fileURLToPath(url),
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, isolatedModules: true },
  });
  return { format: 'module', source: outputText, shortCircuit: true };
}
