// The Hub's HTTP protocol on Node's fetch: URLs, redirects followed by hand (so that the token
// never goes to another host, and HEAD can stop at the CDN redirect that already carries the
// file's metadata), and HTTP error statuses turned into typed errors.
import {
  EntryNotFoundError, GatedRepoError, HfHubHTTPError, HubConnectionError, HubError, RepositoryNotFoundError, RevisionNotFoundError,
  type HubRequestContext,
} from './errors.js';
import type { RepoType } from './options.js';
import type { HubSettings } from './settings.js';
import { isSafeSegment } from './validate.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 10;
const USER_AGENT = `@core/hub; node/${process.versions.node}`;
const URL_PREFIX: Record<RepoType, string> = { model: '', dataset: 'datasets/', space: 'spaces/' };

/** `{endpoint}/{prefix}{repoId}/resolve/{revision}/{file}`, each part percent-encoded but the file's `/`. */
export function resolveUrl(settings: HubSettings, repoId: string, file: string): string {
  const path = file.split('/').map(encodeURIComponent).join('/');
  return `${settings.endpoint}/${URL_PREFIX[settings.repoType]}${repoId}/resolve/${encodeURIComponent(settings.revision)}/${path}`;
}

/** `{endpoint}/api/{repoType}s/{repoId}/revision/{revision}`: the repo's commit and file list. */
export function repoInfoUrl(settings: HubSettings, repoId: string): string {
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

/** One request, no redirect followed; the token only to the endpoint's own origin. */
async function send(method: string, url: string, settings: HubSettings, headers: Record<string, string>): Promise<Response> {
  const all: Record<string, string> = { 'user-agent': USER_AGENT, 'accept-encoding': 'identity', ...headers };
  if (settings.token !== undefined && new URL(url).origin === new URL(settings.endpoint).origin) all.authorization = `Bearer ${settings.token}`;
  try {
    return await fetch(url, { method, headers: all, redirect: 'manual', signal: settings.signal });
  } catch (error) {
    throw networkError(error, url, settings.signal, `Could not reach the Hub: ${method}`);
  }
}

/**
 * A request that follows redirects, each hop through `send`. `stop(response, next)` sees every
 * redirect before it is followed and may end the chase there; the result is the last response and
 * its address, or for a stopped chase the redirect and its target.
 */
async function follow(
  method: string, url: string, settings: HubSettings, headers: Record<string, string>,
  stop: (response: Response, next: string) => boolean = () => false,
): Promise<{ response: Response; url: string; stopped: boolean }> {
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const response = await send(method, url, settings, headers);
    const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
    if (location === null) return { response, url, stopped: false };
    await response.body?.cancel();
    const next = new URL(location, url).href;
    if (stop(response, next)) return { response, url: next, stopped: true };
    url = next;
  }
  throw new HubError(`More than ${MAX_REDIRECTS} redirects from ${withoutQuery(url)}: the server is misconfigured.`);
}

/** The typed error for a response with an error status, read from the Hub's `X-Error-Code` and `X-Error-Message` headers. */
function statusError(response: Response, url: string, context: HubRequestContext): HfHubHTTPError {
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

/** What the Hub says about one file before it is downloaded. */
export interface FileMetadata {
  /** The commit the revision points at (`X-Repo-Commit`). */
  readonly commit: string;
  /** The blob's id: the sha256 for LFS files (`X-Linked-Etag`), the git blob sha1 for others (`ETag`). */
  readonly etag: string;
  /** The size in bytes (`X-Linked-Size`, else `Content-Length`), when announced. */
  readonly size: number | undefined;
  /** Where to GET the bytes: a CDN address the Hub redirected to, or the resolve URL itself. */
  readonly location: string;
}

/** `W/"abc"` → `abc`. */
function normalizeEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

/**
 * HEAD on the resolve URL. Redirects on the Hub's own origin are followed (a renamed repo); one to
 * another host stops the chase once commit and linked ETag are known, as the Hub puts them on that
 * redirect (LFS files), and the target is where the bytes will come from.
 */
export async function fileMetadata(url: string, settings: HubSettings, context: HubRequestContext): Promise<FileMetadata> {
  let commit: string | null = null;
  let linkedEtag: string | null = null;
  let linkedSize: string | null = null;
  const note = (r: Response) => {
    commit ??= r.headers.get('x-repo-commit');
    linkedEtag ??= r.headers.get('x-linked-etag');
    linkedSize ??= r.headers.get('x-linked-size');
  };
  const endpointOrigin = new URL(settings.endpoint).origin;
  const { response, url: location, stopped } = await follow('HEAD', url, settings, {}, (r, next) => {
    note(r);
    return commit !== null && linkedEtag !== null && new URL(next).origin !== endpointOrigin;
  });
  if (!stopped) {
    if (!response.ok) throw statusError(response, location, context);
    note(response);
  }
  const etag = normalizeEtag(linkedEtag ?? response.headers.get('etag') ?? '');
  const sizeText = linkedSize ?? (stopped ? null : response.headers.get('content-length'));
  const where = `${withoutQuery(url)} (repo '${context.repoId}')`;
  if (commit === null || !isSafeSegment(commit)) {
    throw new HubError(`${where} answered without a usable X-Repo-Commit header: the endpoint ${settings.endpoint} does not speak the Hub's protocol (check HF_ENDPOINT, proxies and firewalls).`);
  }
  if (!isSafeSegment(etag)) {
    throw new HubError(`${where} answered without a usable ETag (got '${etag}'): the file cannot be cached reliably; check HF_ENDPOINT, proxies and firewalls.`);
  }
  const size = sizeText === null ? undefined : Number(sizeText);
  return { commit, etag, size: Number.isSafeInteger(size) && size! >= 0 ? size : undefined, location };
}

/**
 * GET of a file's bytes from `url` (a Range request when `offset > 0`), redirects followed. An
 * error status is a typed error, but for 416 (a range past the end), which the caller handles.
 */
export async function getFile(url: string, offset: number, settings: HubSettings, context: HubRequestContext): Promise<Response> {
  const { response, url: last } = await follow('GET', url, settings, offset > 0 ? { range: `bytes=${offset}-` } : {});
  if (!response.ok && response.status !== 416) {
    await response.body?.cancel();
    throw statusError(response, last, context);
  }
  return response;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The repo's commit for the revision and its file list, from the Hub's API. */
export async function repoInfo(settings: HubSettings, repoId: string, context: HubRequestContext): Promise<{ commit: string; files: string[] }> {
  const url = repoInfoUrl(settings, repoId);
  const { response, url: last } = await follow('GET', url, settings, { accept: 'application/json' });
  if (!response.ok) {
    await response.body?.cancel();
    throw statusError(response, last, context);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    throw networkError(error, url, settings.signal, 'Reading the answer of');
  }
  const { sha, siblings } = (parseJson(text) ?? {}) as { sha?: unknown; siblings?: unknown };
  const files = Array.isArray(siblings) ? siblings.map((s) => (s as { rfilename?: unknown } | null)?.rfilename) : undefined;
  if (typeof sha !== 'string' || !isSafeSegment(sha) || !files?.every((f): f is string => typeof f === 'string')) {
    throw new HubError(`${withoutQuery(url)} did not answer with a repo's commit and file list ({ sha, siblings: [{ rfilename }] }): the endpoint ${settings.endpoint} does not speak the Hub's API.`);
  }
  return { commit: sha, files };
}
