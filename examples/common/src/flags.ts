// Checks for flag values, with messages that name the flag.

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
