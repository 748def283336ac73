import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// shims: the CJS build gets an import.meta.url, which locates the addon next to the package.
export default defineConfig(libraryBuild({ shims: true }));
