// Where the defaults come from: the same environment variables and files as huggingface_hub, read
// at each call (not at import), so a program may set them late.
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DownloadProgress, HubOptions, RepoType } from './options.js';
import { HTTP_ADDRESS } from './validate.js';

/** Everything a download needs to know beyond the repo and the file, defaults filled in. */
export interface HubSettings {
  readonly revision: string;
  readonly repoType: RepoType;
  /** Absolute. */
  readonly cacheDir: string;
  /** Without a trailing `/`. */
  readonly endpoint: string;
  readonly token: string | undefined;
  readonly offline: boolean;
  readonly forceDownload: boolean;
  readonly onProgress: ((progress: DownloadProgress) => void) | undefined;
  readonly signal: AbortSignal | undefined;
}

/** The environment variables read, as in `huggingface_hub.constants`. */
export type HubEnv = Readonly<Record<string, string | undefined>>;

/** `~` or `~/…` at the start of an environment variable's path means the home folder (Python expands it too). */
function expandHome(path: string): string {
  return path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
}

/** A variable that is set to something other than the empty string. */
function set(env: HubEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** `HF_HOME`, else `$XDG_CACHE_HOME/huggingface`, else `~/.cache/huggingface`. */
export function hfHome(env: HubEnv): string {
  const home = set(env, 'HF_HOME');
  return expandHome(home ?? join(set(env, 'XDG_CACHE_HOME') ?? join(homedir(), '.cache'), 'huggingface'));
}

/** Python's `_is_true`: 1, ON, YES, TRUE in any case. */
function isTrue(value: string | undefined): boolean {
  return value !== undefined && ['1', 'ON', 'YES', 'TRUE'].includes(value.toUpperCase());
}

/** The token: the option, else `HF_TOKEN`, else the token file (`HF_TOKEN_PATH`, else `HF_HOME/token`); `false` means none. */
async function findToken(option: string | false | undefined, env: HubEnv): Promise<string | undefined> {
  if (option === false) return undefined;
  if (option !== undefined) return option;
  const fromEnv = set(env, 'HF_TOKEN')?.trim();
  if (fromEnv) return fromEnv;
  try {
    const fromFile = (await readFile(expandHome(set(env, 'HF_TOKEN_PATH') ?? join(hfHome(env), 'token')), 'utf8')).trim();
    return fromFile === '' ? undefined : fromFile;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The options with their defaults; `env` is `process.env` but for tests. */
export async function resolveSettings(options: HubOptions, env: HubEnv = process.env): Promise<HubSettings> {
  const endpoint = (options.endpoint ?? set(env, 'HF_ENDPOINT') ?? 'https://huggingface.co').replace(/\/+$/, '');
  if (!HTTP_ADDRESS.test(endpoint)) throw new TypeError(`HF_ENDPOINT must be an http(s) address such as 'https://huggingface.co', got '${endpoint}'`);
  return {
    revision: options.revision ?? 'main',
    repoType: options.repoType ?? 'model',
    cacheDir: resolve(options.cacheDir ?? expandHome(set(env, 'HF_HUB_CACHE') ?? join(hfHome(env), 'hub'))),
    endpoint,
    token: await findToken(options.token, env),
    offline: options.offline ?? isTrue(env.HF_HUB_OFFLINE),
    forceDownload: options.forceDownload ?? false,
    onProgress: options.onProgress,
    signal: options.signal,
  };
}
