// The Hub's HTTP protocol on Node's fetch: redirects followed by hand (so that the token never goes
// to another host, and HEAD can stop at the CDN redirect that already carries the file's metadata).
// URLs and the typed errors of HTTP statuses are in protocol.ts, which the browser build shares.
import { HubError, type HubRequestContext } from './errors.js';
import {
  networkError, normalizeEtag, parseRevisionInfo, repoInfoUrl, statusError, withoutQuery, type NetworkSettings,
} from './protocol.js';
import { isSafeSegment } from './validate.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const MAX_REDIRECTS = 10;
const USER_AGENT = `@core/hub; node/${process.versions.node}`;

/** One request, no redirect followed; the token only to the endpoint's own origin. */
async function send(method: string, url: string, settings: NetworkSettings, headers: Record<string, string>): Promise<Response> {
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
  method: string, url: string, settings: NetworkSettings, headers: Record<string, string>,
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

/**
 * HEAD on the resolve URL. Redirects on the Hub's own origin are followed (a renamed repo); one to
 * another host stops the chase once commit and linked ETag are known, as the Hub puts them on that
 * redirect (LFS files), and the target is where the bytes will come from.
 */
export async function fileMetadata(url: string, settings: NetworkSettings, context: HubRequestContext): Promise<FileMetadata> {
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
export async function getFile(url: string, offset: number, settings: NetworkSettings, context: HubRequestContext): Promise<Response> {
  const { response, url: last } = await follow('GET', url, settings, offset > 0 ? { range: `bytes=${offset}-` } : {});
  if (!response.ok && response.status !== 416) {
    await response.body?.cancel();
    throw statusError(response, last, context);
  }
  return response;
}

/** The repo's commit for the revision and its file list, from the Hub's API. */
export async function repoInfo(settings: NetworkSettings, repoId: string, context: HubRequestContext): Promise<{ commit: string; files: string[] }> {
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
  const { commit, files } = parseRevisionInfo(text, url, settings.endpoint);
  return { commit, files: files.map((f) => f.path) };
}
