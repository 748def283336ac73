import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// Four entries: the API, the vitest adapter (imports vitest), the browser entry (no Node APIs) and
// the CLI (its source starts with a hashbang, which esbuild keeps and tsup marks executable).
export default defineConfig(libraryBuild({
  entry: ['src/index.ts', 'src/vitest.ts', 'src/browser.ts', 'src/cli.ts'],
  external: ['vitest'],
}));
