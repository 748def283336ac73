// A dependency's installed version, from its package.json, found from its entry point (some
// packages, @jax-js/jax among them, do not export ./package.json).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function installedVersion(name) {
  let dir = dirname(fileURLToPath(import.meta.resolve(name)));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      const json = JSON.parse(readFileSync(manifest, 'utf8'));
      if (json.name === name) return json.version;
    }
    const up = dirname(dir);
    if (up === dir) return null;
    dir = up;
  }
}
