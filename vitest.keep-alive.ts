// vitest's global setup for every package (see vitest.shared.ts): keeps the main vitest process's
// event loop alive from the first test file to the last. tinypool 1.1.1, under vitest 3's forks
// pool, unrefs each test child process and, when it recycles one after a file, waits for its exit
// with only a 1 s SIGKILL timer holding the loop. A child still alive after that timer (seen on a
// busy machine with lavapipe's WebGPU children) leaves the main process with nothing to wait on:
// it ran `beforeExit`, printed no summary and exited with status 0 after 1–2 of 9 files.
export default function setup(): () => void {
  const keepAlive = setInterval(() => {}, 60_000);
  return () => clearInterval(keepAlive);
}
