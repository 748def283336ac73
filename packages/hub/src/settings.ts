// Where the defaults come from: the same environment variables and files as huggingface_hub, read
// at each call (not at import), so a program may set them late.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { HubOptions } from './options.js';
import { envValue, networkSettings, type HubEnv, type NetworkSettings } from './protocol.js';

/** Everything a download needs to know beyond the repo and the file, defaults filled in. */
export interface HubSettings extends NetworkSettings {
  /** Absolute. */
  readonly cacheDir: string;
}

export type { HubEnv };

/** `~` or `~/…` at the start of an environment variable's path means the home folder (Python expands it too). */
function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
}

/** `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`. */
export function hfHome(env: HubEnv): string {
  const home = envValue(env, 'HF_HOME');
  return expandHome(home ?? join(envValue(env, 'XDG_CACHE_HOME') ?? join(homedir(), '.cache'), 'huggingface'));
}

/** The token: the option, else `HF_TOKEN`, else the token file (`HF_TOKEN_PATH`, else `HF_HOME/token`); `false` means none. */
async function findToken(option: string | false | undefined, env: HubEnv): Promise<string | undefined> {
  if (option === false) return undefined;
  if (option !== undefined) return option;
  const fromEnv = envValue(env, 'HF_TOKEN')?.trim();
  if (fromEnv) return fromEnv;
  try {
    const fromFile = (await readFile(expandHome(envValue(env, 'HF_TOKEN_PATH') ?? join(hfHome(env), 'token')), 'utf8')).trim();
    return fromFile === '' ? undefined : fromFile;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The options with their defaults; `env` is `process.env` but for tests. */
export async function resolveSettings(options: HubOptions, env: HubEnv = process.env): Promise<HubSettings> {
  const network = networkSettings(options, env, await findToken(options.token, env));
  return { ...network, cacheDir: resolve(options.cacheDir ?? expandHome(envValue(env, 'HF_HUB_CACHE') ?? join(hfHome(env), 'hub'))) };
}
