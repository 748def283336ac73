// Model configs: Hugging Face's config.json keys read into camelCase fields, and the size checks
// every architecture's config needs. A wrong type is a TypeError naming the config.json key; a
// size that cannot build the model is a ValueError naming the field.
import { ValueError } from '@core/tensor';

/** The JSON type a config.json key holds. */
type JsonKind = 'number' | 'boolean' | 'string';

/** A camelCase field's config.json key and JSON type. */
export type ConfigJsonKeys<C> = { readonly [K in keyof C]-?: readonly [key: string, kind: JsonKind] };

/**
 * The fields of `keys` present in `json` (Hugging Face's config.json, parsed), checked for type;
 * absent and null keys are left out, so the model's defaults apply. `model` names the config in errors.
 */
export function readConfigJson<C>(model: string, json: Readonly<Record<string, unknown>>, keys: ConfigJsonKeys<C>): Partial<C> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new TypeError(`${model}: expected the parsed config.json (an object), got ${Array.isArray(json) ? 'an array' : String(json)}`);
  }
  const out: Record<string, unknown> = {};
  for (const [field, [key, kind]] of Object.entries(keys) as Array<[string, readonly [string, JsonKind]]>) {
    const value = json[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== kind) throw new TypeError(`${model}: config.json key '${key}' should be a ${kind}, got ${JSON.stringify(value)}`);
    out[field] = value;
  }
  return out as Partial<C>;
}

/** Checks that the config field `field` of `model` is a positive integer. */
export function checkPositiveInteger(model: string, field: string, value: number): void {
  if (!Number.isInteger(value) || value <= 0) throw new ValueError(`${model}: ${field} must be a positive integer, got ${value}`);
}

/** Checks that `field` of `model` is a probability in [0, 1). */
export function checkDropout(model: string, field: string, value: number): void {
  if (!(value >= 0 && value < 1)) throw new ValueError(`${model}: ${field} must be a probability in [0, 1), got ${value}`);
}

/** `config` over `defaults`: a field `config` leaves out or sets to undefined takes the default. */
export function withDefaults<C extends object, D extends Partial<C>>(defaults: D, config: C): Required<C> {
  const given = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined));
  return { ...defaults, ...given } as Required<C>;
}
