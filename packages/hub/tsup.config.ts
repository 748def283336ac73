import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// browser.ts is the "browser" export condition: the same names, without Node built-ins; hubFile
// works there on the Cache API, and the functions that return file-system paths reject.
export default defineConfig(libraryBuild({ entry: ['src/index.ts', 'src/browser.ts'] }));
