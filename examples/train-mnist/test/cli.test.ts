// The command line as the README runs it: `pnpm demo -- --flags` hands the script a literal `--`
// before the flags (pnpm passes the separator through), which must not end flag parsing.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));

describe('the train-mnist command line', () => {
  it('takes its flags after a leading `--`, as `pnpm demo -- --help` passes them', () => {
    const out = execFileSync(process.execPath, [MAIN, '--', '--help'], { encoding: 'utf8' });
    expect(out).toContain('--device auto|cpu|webgpu|cuda');
    expect(out).toContain('--compile ');
  });

  it('still refuses a stray positional argument', () => {
    expect(() => execFileSync(process.execPath, [MAIN, 'oops'], { encoding: 'utf8', stdio: 'pipe' })).toThrow(/positional/);
  });
});
