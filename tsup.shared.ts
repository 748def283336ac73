// The build every publishable package shares: ESM + CJS + .d.ts from src/index.ts.
import type { Options } from 'tsup';

export function libraryBuild(overrides: Options = {}): Options {
  return {
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    sourcemap: true,
    clean: true,
    target: 'es2022',
    ...overrides,
  };
}
