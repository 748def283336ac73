// The README's test command on a fresh machine: `pnpm test` first runs scripts/test-deps.sh, which
// passes silently when the suite's system packages are there, installs them as root, and otherwise
// names what is missing with the one command that installs it, and fails.
import { execFile } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const isRoot = process.getuid?.() === 0;

// The scripts, copied where the unprivileged user can read them (a clone may live in a private folder).
const home = mkdtempSync(join(tmpdir(), 'test-deps-'));
chmodSync(home, 0o755);
mkdirSync(join(home, 'scripts'), { mode: 0o755 });
for (const name of ['test-deps.sh', 'install-webgpu-deps.sh']) copyFileSync(fileURLToPath(new URL(`../scripts/${name}`, import.meta.url)), join(home, 'scripts', name));
const script = join(home, 'scripts', 'test-deps.sh');

/** Run the script as a user who may not install anything (nobody, when the suite runs as root). */
async function runAsUser(path: string): Promise<{ code: number; stderr: string; stdout: string }> {
  const env = { ...process.env, PATH: path };
  const [file, args] = isRoot
    ? ['/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '/bin/bash', script]]
    : ['/bin/bash', [script]];
  try {
    const { stdout, stderr } = await promisify(execFile)(file, args, { env, encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

// A PATH with the shell tools the script uses and none of the packages it checks for.
const bare = join(home, 'bin');
mkdirSync(bare, { mode: 0o755 });
for (const tool of ['bash', 'dirname', 'id', 'ls', 'head', 'dpkg-query']) symlinkSync(`/usr/bin/${tool}`, join(bare, tool));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe("the README's test command on a machine without the suite's system packages", () => {
  it('passes silently when everything is installed (as on this machine, which ran it before the tests)', async () => {
    const r = await runAsUser(process.env.PATH ?? '/usr/bin:/bin');
    expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('names each missing package and the one command that installs it, and fails, when it may not install', async () => {
    const r = await runAsUser(bare);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('  - chromium\n');
    expect(r.stderr).toContain('  - clang-19 and wasm-ld-19\n');
    expect(r.stderr).toContain("  - cmake, make and g++ (they build the cpu backend's native addon)\n");
    expect(r.stderr).toContain('\n  sudo bash scripts/test-deps.sh\n');
    expect(r.stdout).toBe('');
  });
});
