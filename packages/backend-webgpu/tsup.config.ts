import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

// `webgpu` (Dawn for Node) is loaded at run time only where navigator.gpu is absent: keep it external.
export default defineConfig(libraryBuild({ external: ['webgpu'] }));
