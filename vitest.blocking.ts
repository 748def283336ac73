// With CORE_TEST_BLOCKING=1 (see vitest.shared.ts): after each test file, print the tests that held
// the event loop longest. A worker answers vitest's messages only between event-loop turns, so a
// test body that runs synchronously for a long time fails on a loaded machine with
// `Timeout calling "onTaskUpdate"`; this finds such bodies. A diagnostic: it never fails a test.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, afterEach } from 'vitest';

const delay = monitorEventLoopDelay({ resolution: 20 });
delay.enable();
const longest: { ms: number; test: string }[] = [];

afterEach((context) => {
  longest.push({ ms: Math.round(delay.max / 1e6), test: context.task.name });
  delay.reset();
});

afterAll(() => {
  const top = longest.sort((a, b) => b.ms - a.ms).slice(0, 3);
  console.log(`[event-loop blocking] ${top.map((t) => `${t.ms} ms: ${t.test}`).join(' | ')}`);
});
