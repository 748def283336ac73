// Test settings every package shares. CI runs all packages at once on 2 cores, so timeouts are
// generous: a test that fails must fail on its assertions, never on load.
import { defineConfig } from 'vitest/config';

export function packageTests(include = ['test/**/*.test.ts'], exclude: string[] = []) {
  return defineConfig({
    test: {
      include,
      exclude: ['**/node_modules/**', ...exclude],
      setupFiles: process.env.CORE_TEST_BLOCKING ? [new URL('./vitest.blocking.ts', import.meta.url).pathname] : [],
      // Whole conformance runs in child processes take minutes when both cores are also busy with
      // other work: a limit is there to end a hang, never to fail a slow machine.
      testTimeout: 600_000,
      hookTimeout: 600_000,
      // Memory tests call gc() so that live-byte counts measure leaks, not garbage-collector lag.
      poolOptions: { forks: { execArgv: ['--expose-gc'] } },
    },
  });
}
