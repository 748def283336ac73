// Test settings every package shares. CI runs all packages at once on 2 cores, so timeouts are
// generous: a test that fails must fail on its assertions, never on load.
import { defineConfig } from 'vitest/config';

export function packageTests(include = ['test/**/*.test.ts'], exclude: string[] = []) {
  return defineConfig({
    test: {
      include,
      exclude: ['**/node_modules/**', ...exclude],
      setupFiles: process.env.CORE_TEST_BLOCKING ? [new URL('./vitest.blocking.ts', import.meta.url).pathname] : [],
      testTimeout: 120_000,
      hookTimeout: 120_000,
      // Memory tests call gc() so that live-byte counts measure leaks, not garbage-collector lag.
      poolOptions: { forks: { execArgv: ['--expose-gc'] } },
    },
  });
}
