// Python's argument binding for ops with PyTorch's signatures (API.md, "Naming the rest of
// PyTorch"): positional-or-keyword parameters come in PyTorch's order, and a trailing plain object
// holds keyword arguments, both the keyword-only ones and positional ones given by name. The
// signature helper writes the Tensor method overloads that go with it into the op table.

/** A plain object (an options bag), as opposed to a tensor, an array, a number or null. */
export function isOptionsObject(x: unknown): x is Readonly<Record<string, unknown>> {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Bind a call's arguments as Python binds `op(positional..., *, keywordOnly...)`: leading values
 * fill `positional` in order, a trailing plain object gives values by name. An argument passed as
 * `undefined` counts as not given. A name given both ways, a name the op does not have, or more
 * values than positional parameters is a TypeError that names it.
 */
export function bindArguments<const P extends string, const K extends string = never>(
  op: string,
  args: readonly unknown[],
  positional: readonly P[],
  keywordOnly: readonly K[] = [],
): { readonly [N in P | K]?: unknown } {
  let end = args.length;
  while (end > 0 && args[end - 1] === undefined) end--;
  const keywords = end > 0 && isOptionsObject(args[end - 1]) ? (args[end - 1] as Readonly<Record<string, unknown>>) : null;
  const values = args.slice(0, keywords ? end - 1 : end);
  if (values.length > positional.length) {
    const names = positional.length > 0 ? ` (${positional.join(', ')})` : '';
    throw new TypeError(`${op}() takes at most ${positional.length} positional argument${positional.length === 1 ? '' : 's'}${names} but ${values.length} were given`);
  }
  const bound: Record<string, unknown> = {};
  values.forEach((v, i) => {
    if (v !== undefined) bound[positional[i]!] = v;
  });
  for (const [name, v] of Object.entries(keywords ?? {})) {
    if (!(positional as readonly string[]).includes(name) && !(keywordOnly as readonly string[]).includes(name)) {
      const known = [...positional, ...keywordOnly];
      throw new TypeError(`${op}() got an unexpected keyword argument '${name}'${known.length > 0 ? ` (it takes ${known.join(', ')})` : ''}`);
    }
    if (v === undefined) continue;
    if (name in bound) throw new TypeError(`${op}() got multiple values for argument '${name}' (given by position and by name)`);
    bound[name] = v;
  }
  return bound as { readonly [N in P | K]?: unknown };
}

/** `name?: T` or `name: T` → [name, optional, type]. */
function parseParam(param: string): [string, boolean, string] {
  const m = /^(\w+)(\?)?:\s*(.+)$/.exec(param.trim());
  if (!m) throw new Error(`not a parameter: '${param}'`);
  return [m[1]!, m[2] === '?', m[3]!];
}

/**
 * The Tensor method overloads of a PyTorch signature, for the op table: every positional
 * parameter in order (with an options object for the keyword-only ones), then each form that gives
 * the parameters from one of the optional ones onward by name in the options object. Parameters
 * are written `name?: Type`.
 */
export function pythonSignatures(positional: readonly string[], keywordOnly: readonly string[], returns: string): string[] {
  const params = positional.map(parseParam);
  const named = (list: readonly [string, boolean, string][]) => list.map(([n, opt, t]) => `${n}${opt ? '?' : ''}: ${t}`);
  const kw = keywordOnly.map(parseParam);
  const options = (list: readonly [string, boolean, string][]) => `{ ${named(list).join('; ')} }`;
  const forms = [`(${[...named(params), ...(kw.length > 0 ? [`options?: ${options(kw)}`] : [])].join(', ')}): ${returns}`];
  for (let i = params.findIndex(([, opt]) => opt); i >= 0 && i < params.length; i++) {
    const byName = [...params.slice(i), ...kw];
    const optional = byName.every(([, opt]) => opt);
    forms.push(`(${[...named(params.slice(0, i)), `options${optional ? '?' : ''}: ${options(byName)}`].join(', ')}): ${returns}`);
  }
  return forms;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return (v as object).constructor?.name ?? 'an object';
  return `${typeof v} ${String(v)}`;
}

/** A bound integer argument, or `fallback` when not given; anything else is a TypeError naming it. */
export function intArgument(op: string, name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new TypeError(`${op}(): argument '${name}' must be an integer, got ${describe(value)}`);
  return value;
}

/** A bound boolean argument, or `fallback` when not given; anything else is a TypeError naming it. */
export function boolArgument(op: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`${op}(): argument '${name}' must be a boolean, got ${describe(value)}`);
  return value;
}

/** A required argument: a TypeError naming it when it was not given. */
export function required(op: string, name: string, value: unknown): unknown {
  if (value === undefined) throw new TypeError(`${op}() missing required argument '${name}'`);
  return value;
}
