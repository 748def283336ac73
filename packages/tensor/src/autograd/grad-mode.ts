// Whether ops record the autograd graph. Like PyTorch's grad mode: on by default, scoped off
// by noGrad() (optimizer steps, evaluation) and back on by enableGrad().

let enabled = true;

/** Whether ops record the autograd graph now (false inside `noGrad`). */
export function isGradEnabled(): boolean {
  return enabled;
}

function withGradMode<T>(on: boolean, fn: () => T): T {
  const saved = enabled;
  enabled = on;
  try {
    const result = fn();
    if (result instanceof Promise) {
      throw new TypeError('noGrad()/enableGrad() take a synchronous function: await inside it would leak the mode to other tasks');
    }
    return result;
  } finally {
    enabled = saved;
  }
}

/** Run `fn` without recording gradients (PyTorch's `with torch.no_grad():`). */
export function noGrad<T>(fn: () => T): T {
  return withGradMode(false, fn);
}

/** Run `fn` with gradient recording on, even inside noGrad (`torch.enable_grad`). */
export function enableGrad<T>(fn: () => T): T {
  return withGradMode(true, fn);
}

/** Set grad mode globally; returns the previous value. */
export function setGradEnabled(on: boolean): boolean {
  const saved = enabled;
  enabled = on;
  return saved;
}
