import { fileURLToPath } from 'node:url';
import { defineConfig, type Options } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// dist/browser.js is the "browser" export condition: src/index.ts again, with platform.ts (local
// folders through node:fs, the Hub through its file-system cache) replaced by platform-browser.ts
// (the Hub through hubFile and the Cache API), so a page's bundle has no Node import.
const BROWSER_PLATFORM = fileURLToPath(new URL('src/platform-browser.ts', import.meta.url));
const browserPlatform: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'browser-platform',
  setup(build) {
    build.onResolve({ filter: /^\.\/platform\.js$/ }, () => ({ path: BROWSER_PLATFORM }));
  },
};

export default defineConfig([
  // The Node build cleans dist/ but for the browser build's files, which the second build writes meanwhile.
  libraryBuild({ entry: ['src/index.ts'], clean: ['!browser.*'] }),
  libraryBuild({ entry: { browser: 'src/index.ts' }, format: ['esm'], dts: false, clean: false, platform: 'browser', esbuildPlugins: [browserPlatform] }),
]);
