import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// Members marked @internal (the wasm heap a storage may live in) stay out of the published
// declarations, which then need no WebAssembly types (Node-only consumers have none: no DOM lib).
// shims: the CJS build gets an import.meta.url, which locates the native addon next to the package.
export default defineConfig(libraryBuild({ dts: { compilerOptions: { stripInternal: true } }, shims: true }));
