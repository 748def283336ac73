import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { libraryBuild } from '../../tsup.shared';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

// __CORE_VERSION__ lets two loaded copies of core report their versions.
export default defineConfig(libraryBuild({ define: { __CORE_VERSION__: JSON.stringify(version) } }));
