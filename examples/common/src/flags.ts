// Checks for flag values, with messages that name the flag.
import { parseArgs } from 'node:util';

/** `value` as a positive number (an integer when `integer`), or an error naming `--name`. */
export function positive(name: string, value: string, integer: boolean): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new Error(`--${name} must be a positive ${integer ? 'integer' : 'number'}, got '${value}'`);
  }
  return n;
}

/** `value` if it is one of `allowed`, else an error naming `--name` and the choices. */
export function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`--${name} must be one of ${allowed.join(', ')}, got '${value}'`);
  return value as T;
}

/**
 * The command line's flags. `pnpm demo -- --epochs 3` hands the script a literal `--` first (pnpm
 * passes the separator through), which parseArgs would take as the end of the flags: drop it.
 */
export function demoArgs(argv: readonly string[]): string[] {
  return argv[0] === '--' ? argv.slice(1) : [...argv];
}

/** `value` as a non-negative integer, or an error naming `--name`. */
export function count(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got '${value}'`);
  return n;
}

/**
 * One flag: its name, its default (undefined: none), and the help line's value and description. A
 * flag whose value is '' is a switch: it takes no value and reads 'on' when given, else 'off'.
 */
export type FlagSpec = readonly [name: string, defaultValue: string | undefined, value: string, about: string];

/**
 * The command line's flags as strings by name, or `null` after printing the help (`intro` lines,
 * then one line per flag with its default) when `--help` is given. Unknown flags and positional
 * arguments are errors that name them.
 */
export function parseFlags(argv: readonly string[], flags: readonly FlagSpec[], intro: readonly string[]): Record<string, string> | null {
  const args = demoArgs(argv);
  const switches = new Set(flags.filter(([, , value]) => value === '').map(([name]) => name));
  for (const arg of args) {
    const given = /^--([^=]+)=(.*)$/.exec(arg);
    if (given && switches.has(given[1]!)) throw new Error(`--${given[1]} takes no value, got '${given[2]}'`);
  }
  const { values } = parseArgs({
    args,
    options: {
      ...Object.fromEntries(flags.map(([name, defaultValue]) => [
        name,
        switches.has(name) ? { type: 'boolean' as const, default: false } : { type: 'string' as const, default: defaultValue },
      ])),
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    const lines = flags.map(([name, defaultValue, value, about]) => `  ${`--${name} ${value}`.padEnd(34)} ${about.padEnd(56)} [${defaultValue ?? ''}]`);
    process.stdout.write([...intro, '', ...lines, ''].join('\n'));
    return null;
  }
  return Object.fromEntries(Object.entries(values).map(([name, v]) => [name, switches.has(name) ? (v ? 'on' : 'off') : v])) as Record<string, string>;
}
