/** Let the event loop run (timers, I/O, a page's rendering) between chunks of synchronous work: setImmediate in Node, a 0 ms timeout elsewhere. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)));
}
