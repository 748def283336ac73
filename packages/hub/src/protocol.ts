// The parts of the Hub's protocol that both builds share, with no Node built-in: the settings a
// request needs, URLs, HTTP error statuses turned into typed errors, the API's answer about a
// revision, reading a download's body with progress, and the check of the bytes that arrived.
import {
  EntryNotFoundError, GatedRepoError, HfHubHTTPError, HubConnectionError, HubError, HubIntegrityError, RepositoryNotFoundError,
  RevisionNotFoundError, type HubRequestContext,
} from './errors.js';
import type { DownloadProgress, HubOptions, RepoType } from './options.js';
import { HTTP_ADDRESS, isSafeSegment } from './validate.js';

/** The environment variables read, as in `huggingface_hub.constants` (a browser has none). */
export type HubEnv = Readonly<Record<string, string | undefined>>;

/** A variable that is set to something other than the empty string. */
export function envValue(env: HubEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** Python's `_is_true`: 1, ON, YES, TRUE in any case. */
function isTrue(value: string | undefined): boolean {
  return value !== undefined && ['1', 'ON', 'YES', 'TRUE'].includes(value.toUpperCase());
}

/** What a request to the Hub needs to know beyond the repo and the file, defaults filled in. */
export interface NetworkSettings {
  readonly revision: string;
  readonly repoType: RepoType;
  /** Without a trailing `/`. */
  readonly endpoint: string;
  readonly token: string | undefined;
  readonly offline: boolean;
  readonly forceDownload: boolean;
  readonly onProgress: ((progress: DownloadProgress) => void) | undefined;
  readonly signal: AbortSignal | undefined;
}

/** The options with their defaults from `env` (`HF_ENDPOINT`, `HF_HUB_OFFLINE`), and the token already found. */
export function networkSettings(options: HubOptions, env: HubEnv, token: string | undefined): NetworkSettings {
  const endpoint = (options.endpoint ?? envValue(env, 'HF_ENDPOINT') ?? 'https://huggingface.co').replace(/\/+$/, '');
  if (!HTTP_ADDRESS.test(endpoint)) throw new TypeError(`HF_ENDPOINT must be an http(s) address such as 'https://huggingface.co', got '${endpoint}'`);
  return {
    revision: options.revision ?? 'main',
    repoType: options.repoType ?? 'model',
    endpoint,
    token,
    offline: options.offline ?? isTrue(env.HF_HUB_OFFLINE),
    forceDownload: options.forceDownload ?? false,
    onProgress: options.onProgress,
    signal: options.signal,
  };
}

/** Where a download's messages and errors say it was going. */
export function requestContext(settings: NetworkSettings, repoId: string, file?: string): HubRequestContext {
  return { repoId, filename: file, revision: settings.revision, endpoint: settings.endpoint };
}

const URL_PREFIX: Record<RepoType, string> = { model: '', dataset: 'datasets/', space: 'spaces/' };

/** `{endpoint}/{prefix}{repoId}/resolve/{revision}/{file}`, each part percent-encoded but the file's `/`. */
export function resolveUrl(settings: NetworkSettings, repoId: string, file: string): string {
  const path = file.split('/').map(encodeURIComponent).join('/');
  return `${settings.endpoint}/${URL_PREFIX[settings.repoType]}${repoId}/resolve/${encodeURIComponent(settings.revision)}/${path}`;
}

/** `{endpoint}/api/{repoType}s/{repoId}/revision/{revision}`: the repo's commit and file list. */
export function repoInfoUrl(settings: NetworkSettings, repoId: string): string {
  return `${settings.endpoint}/api/${settings.repoType}s/${repoId}/revision/${encodeURIComponent(settings.revision)}`;
}

/** An address without its query string (a CDN's signed parameters do not belong in messages). */
export function withoutQuery(url: string): string {
  const u = new URL(url);
  u.search = '';
  u.hash = '';
  return u.href;
}

/** The error to throw for a failed fetch or body read: the abort reason when the caller aborted. */
export function networkError(error: unknown, url: string, signal: AbortSignal | undefined, what: string): unknown {
  if (signal?.aborted) return signal.reason;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new HubConnectionError(`${what} ${withoutQuery(url)} failed (${why}).`, withoutQuery(url), error);
}

/** The typed error for a response with an error status, read from the Hub's `X-Error-Code` and `X-Error-Message` headers. */
export function statusError(response: Response, url: string, context: HubRequestContext): HfHubHTTPError {
  const { status } = response;
  const code = response.headers.get('x-error-code');
  const said = response.headers.get('x-error-message') ?? undefined;
  const { repoId, filename, revision, endpoint } = context;
  const make = (Kind: typeof HfHubHTTPError, message: string) =>
    new Kind(`${message}${said ? ` The server said: ${said}` : ''}`, context, status, withoutQuery(url), said);
  const page = `${endpoint}/${repoId}`;
  const tokenHint = 'set the HF_TOKEN environment variable (or pass { token }) to an access token of an account that may read it';
  if (code === 'GatedRepo' || (status === 403 && code === null)) {
    return make(GatedRepoError, `Access to repo '${repoId}' is restricted (HTTP ${status}): it is gated or needs permissions this request did not have. ` +
      `Log in at ${page}, accept the model's terms there, then ${tokenHint}.`);
  }
  if (code === 'RepoNotFound' || status === 401 || (status === 404 && code === null && filename === undefined)) {
    return make(RepositoryNotFoundError, `Repo '${repoId}' was not found at ${endpoint} (HTTP ${status}): check its id; ` +
      `if it is private or gated, ${tokenHint}, and accept the model's terms at ${page}.`);
  }
  if (code === 'RevisionNotFound') {
    return make(RevisionNotFoundError, `Revision '${revision}' was not found in repo '${repoId}' (HTTP ${status}): check the branch, tag or commit name.`);
  }
  if (status === 404 && filename !== undefined) {
    return make(EntryNotFoundError, `File '${filename}' was not found in repo '${repoId}' at revision '${revision}' (HTTP 404): check the file name and the revision.`);
  }
  return make(HfHubHTTPError, `HTTP ${status} from ${withoutQuery(url)} for repo '${repoId}' at revision '${revision}'.`);
}

/** `W/"abc"` → `abc`. */
export function normalizeEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

/** An LFS file's ETag is the sha256 of its bytes. */
export const SHA256 = /^[0-9a-f]{64}$/;

/** One file of a revision as the API lists it; size and sha256 only when asked for with `?blobs=true`. */
export interface RepoFile {
  /** The path in the repo. */
  readonly path: string;
  /** The size in bytes (of the LFS object for LFS files). */
  readonly size: number | undefined;
  /** The sha256 of the bytes, for LFS files. */
  readonly sha256: string | undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isSize = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/**
 * The API's answer about a revision (`{ sha, siblings: [{ rfilename, size?, lfs?: { sha256, size } }] }`)
 * as the commit and the files; a HubError naming `url` when it is not that.
 */
export function parseRevisionInfo(text: string, url: string, endpoint: string): { commit: string; files: RepoFile[] } {
  const { sha, siblings } = (parseJson(text) ?? {}) as { sha?: unknown; siblings?: unknown };
  const files = Array.isArray(siblings) ? siblings.map((entry): RepoFile | undefined => {
    const { rfilename, size, lfs } = (entry ?? {}) as { rfilename?: unknown; size?: unknown; lfs?: { sha256?: unknown; size?: unknown } | null };
    if (typeof rfilename !== 'string') return undefined;
    const sha256 = lfs?.sha256;
    const bytes = lfs?.size ?? size;
    return { path: rfilename, size: isSize(bytes) ? bytes : undefined, sha256: typeof sha256 === 'string' && SHA256.test(sha256) ? sha256 : undefined };
  }) : undefined;
  if (typeof sha !== 'string' || !isSafeSegment(sha) || !files?.every((f): f is RepoFile => f !== undefined)) {
    throw new HubError(`${withoutQuery(url)} did not answer with a repo's commit and file list ({ sha, siblings: [{ rfilename }] }): the endpoint ${endpoint} does not speak the Hub's API.`);
  }
  return { commit: sha, files };
}

/**
 * Reads a download's body chunk by chunk into `sink`, reporting progress from `offset` bytes (a
 * resumed download's earlier part) on; returns the byte count, `offset` included. Stops early once
 * more than `total` bytes came (the size check refuses them). `broken` says, for the error of a
 * connection that breaks, what becomes of the bytes so far.
 */
export async function readBody(
  response: Response, offset: number, total: number | undefined, settings: NetworkSettings, file: string,
  sink: (chunk: Uint8Array<ArrayBuffer>) => unknown, broken: string,
): Promise<number> {
  const reader = response.body!.getReader();
  let loaded = offset;
  try {
    settings.onProgress?.({ file, loaded, total });
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array<ArrayBuffer>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        throw networkError(error, response.url, settings.signal, `The connection broke after ${loaded} bytes of '${file}' (${broken}):`);
      }
      if (chunk.done) break;
      await sink(chunk.value);
      loaded += chunk.value.length;
      if (total !== undefined && loaded > total) break;
      settings.onProgress?.({ file, loaded, total });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  if (total === undefined) settings.onProgress?.({ file, loaded, total: loaded });
  return loaded;
}

/**
 * The error for bytes that differ from what the Hub announced: the size first, then (when both are
 * known) the sha256; undefined when they match.
 */
export function integrityError(
  file: string, context: HubRequestContext, expected: { size: number | undefined; sha256: string | undefined },
  got: { size: number; sha256: string | undefined },
): HubIntegrityError | undefined {
  const problem: [check: 'size' | 'sha256', expected: string, got: string] | undefined =
    expected.size !== undefined && got.size !== expected.size ? ['size', `${expected.size}`, `${got.size}`] :
    expected.sha256 !== undefined && got.sha256 !== undefined ? ['sha256', expected.sha256, got.sha256] : undefined;
  if (problem === undefined || problem[1] === problem[2]) return undefined;
  const [check, want, have] = problem;
  return new HubIntegrityError(
    `The download of '${file}' from repo '${context.repoId}' has ${check === 'size' ? `${have} bytes where the Hub announced ${want}` : `sha256 ${have} where the Hub announced ${want}`}; ` +
    'it was deleted, not cached. Try again; if it happens again, a proxy or the server is changing the file.',
    file, check, want, have,
  );
}
