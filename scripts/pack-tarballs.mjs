#!/usr/bin/env node
// Packs what a backend author outside this repository installs before the packages are published:
// @core/tensor, @core/conformance and every workspace package they depend on, as the .tgz files
// `pnpm pack` makes (workspace: ranges replaced by real versions, exactly what would be published).
//
//   npx -y pnpm@12.4.2 pack:tarballs [destination]    builds them first, then packs
//   node scripts/pack-tarballs.mjs [destination]      packs the builds already there
//
// The destination defaults to dist/tarballs (git ignores dist/). Install them all at once, e.g.
// `npm install --save-dev --prefer-offline <destination>/*.tgz`: npm then resolves each package's
// @core/* dependencies from the tarballs instead of looking for unpublished versions.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The packages a backend author installs; `pnpm --filter <name>...` adds what each depends on. */
const ENTRY_PACKAGES = ['@core/tensor', '@core/conformance'];

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const destination = resolve(process.argv[2] ?? join(root, 'dist', 'tarballs'));
const pnpmVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager.replace(/^pnpm@/, '');

mkdirSync(destination, { recursive: true });
// Stale tarballs of an older version would be installed alongside the new ones.
for (const old of readdirSync(destination, { withFileTypes: true }).filter((f) => f.isFile() && f.name.endsWith('.tgz'))) {
  rmSync(join(destination, old.name));
}

const filters = ENTRY_PACKAGES.flatMap((name) => ['--filter', `${name}...`]);
const packed = spawnSync('npx', ['-y', `pnpm@${pnpmVersion}`, ...filters, 'pack', '--pack-destination', destination], {
  cwd: root,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
if (packed.status !== 0) {
  process.stderr.write(packed.stdout ?? '');
  console.error(`pack-tarballs: pnpm pack exited with ${packed.status ?? packed.signal}`);
  process.exit(1);
}

const tarballs = readdirSync(destination).filter((f) => f.endsWith('.tgz')).sort();
console.log(`${tarballs.length} tarballs in ${destination}:`);
for (const t of tarballs) console.log(`  ${t}`);
console.log(`install them together: npm install --save-dev --prefer-offline ${join(destination, '*.tgz')}`);
