import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// shims: the CJS build gets an import.meta.url, which locates the addon next to the package.
// browser.ts is the "browser" export: it registers cuda as unavailable without Node built-ins.
export default defineConfig(libraryBuild({ entry: ['src/index.ts', 'src/browser.ts'], shims: true }));
