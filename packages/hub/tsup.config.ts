import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// browser.ts is the "browser" export condition: the same names, without Node built-ins, whose
// functions reject with a HubError saying that downloads need Node for now.
export default defineConfig(libraryBuild({ entry: ['src/index.ts', 'src/browser.ts'] }));
