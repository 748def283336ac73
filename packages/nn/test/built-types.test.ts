// Type checks of the BUILT declarations (dist/index.d.ts, what users compile against; the build runs
// before the tests): a consumer program, compiled in memory as if it were a file of this package
// importing '@core/nn' by name, must type-check without errors. Its `@ts-expect-error` lines
// must each be an error, so the checks fail in both directions. The declaration bundler can lose
// one meaning of a name that is both a value and a type (nn.Parameter), which the source typecheck
// cannot see.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONSUMER = `${PACKAGE_ROOT}test/built-types-consumer.ts`;

/** This package's compiler settings (tsconfig.json, so the repository's), without output. */
const OPTIONS: ts.CompilerOptions = {
  ...ts.parseJsonConfigFileContent(ts.readConfigFile(`${PACKAGE_ROOT}tsconfig.json`, ts.sys.readFile).config, ts.sys, PACKAGE_ROOT).options,
  noEmit: true,
};

/** Parsed declaration files, shared by the programs (parsing them is most of the time). */
const parsed = new Map<string, ts.SourceFile | undefined>();

/** The error messages of `source` compiled as a file of this package, against the built @core/nn. */
function typeErrors(source: string): string[] {
  const host = ts.createCompilerHost(OPTIONS);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (file, ...rest) => {
    if (file === CONSUMER) return ts.createSourceFile(file, source, ts.ScriptTarget.ES2022, true);
    if (!parsed.has(file)) parsed.set(file, getSourceFile.call(host, file, ...rest));
    return parsed.get(file);
  };
  host.fileExists = (file) => file === CONSUMER || fileExists.call(host, file);
  host.readFile = (file) => (file === CONSUMER ? source : readFile.call(host, file));
  const program = ts.createProgram([CONSUMER], OPTIONS, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? `${d.file.fileName === CONSUMER ? 'consumer' : d.file.fileName}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
    return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
  });
}

describe('the built declarations (dist/index.d.ts)', () => {
  it('exist: the package is built before its tests', () => {
    expect(existsSync(`${PACKAGE_ROOT}dist/index.d.ts`), 'run `npx -y pnpm@12.4.2 --filter @core/nn build` first').toBe(true);
  });

  it('nn.Parameter is a function and a type, as PyTorch\'s class is', () => {
    expect(typeErrors(`
      import { randn, type Tensor } from '@core/tensor';
      import { nn } from '@core/nn';
      const w: nn.Parameter = nn.Parameter(randn([2, 3]));
      const fromTensor: nn.Parameter = randn([3]);
      class Scale extends nn.Module {
        scale: nn.Parameter = nn.Parameter(randn([3]));
        forward(x: Tensor): Tensor { return x.mul(this.scale); }
      }
      const all: nn.Parameter[] = new Scale().parameters();
      const t: Tensor = w;
      export { all, fromTensor, t };
    `)).toEqual([]);
  });

  it('new nn.ModuleDict({ … }) types each key\'s module; the untyped forms keep working', () => {
    expect(typeErrors(`
      import { randn } from '@core/tensor';
      import { nn } from '@core/nn';
      const dict = new nn.ModuleDict({ enc: new nn.Linear(2, 3), act: new nn.ReLU() });
      const enc: nn.Linear = dict.get('enc');
      const act: nn.ReLU = dict.get('act');
      const out = dict.get('act').forward(dict.get('enc').forward(randn([4, 2])));
      dict.set('enc', new nn.Linear(2, 3));
      // @ts-expect-error: 'act' holds a ReLU, which has no weight
      dict.get('act').weight;
      // @ts-expect-error: 'dec' is not a key of the record: it may hold any module
      const dec: nn.Linear = dict.get('dec');
      // @ts-expect-error: 'enc' holds a Linear
      dict.set('enc', new nn.ReLU());

      const untyped = new nn.ModuleDict();
      untyped.set('any', new nn.Tanh());
      const anyModule: nn.AnyModule = untyped.get('any');
      const linears = new nn.ModuleDict<nn.Linear>({ a: new nn.Linear(1, 1) });
      linears.set('b', new nn.Linear(2, 2));
      const weight: nn.Parameter = linears.get('b').weight;
      const fromPairs = new nn.ModuleDict([['x', new nn.ReLU()]]);
      const x: nn.AnyModule = fromPairs.get('x');
      export { enc, act, out, dec, anyModule, weight, x };
    `)).toEqual([]);
  });
});
