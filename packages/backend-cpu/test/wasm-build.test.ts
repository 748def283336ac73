// The shipped wasm modules (src/wasm/binary.ts) must be what wasm/kernels.c compiles to. Needs
// clang with the wasm32 target (CI installs clang-19 and lld-19); without it the check is skipped
// locally, and fails in CI, where a skipped check would hide a stale binary.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs build script without type declarations
import { findClang } from '../wasm/build.mjs';

const script = fileURLToPath(new URL('../wasm/build.mjs', import.meta.url));
const clang = (findClang as () => { clang: string; version: string } | null)();

describe('shipped wasm kernels', () => {
  it.skipIf(!clang && !process.env.CI)('src/wasm/binary.ts matches wasm/kernels.c', async () => {
    expect(clang, 'CI must install clang-19 and lld-19 (see .ci/run)').not.toBeNull();
    // Asynchronous: four clang builds take a minute on a busy machine, and a synchronous spawn
    // would stall this worker's event loop (and vitest's messages to it) for all of it.
    const { stdout } = await promisify(execFile)(process.execPath, [script, '--check'], { encoding: 'utf8' });
    expect(stdout).toContain('matches');
  });
});
