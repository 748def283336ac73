// A small Hugging Face Hub on 127.0.0.1 for the tests, with the real Hub's protocol: `/resolve/`
// answers regular files itself (ETag = git blob sha1) and redirects LFS files (here: *.safetensors
// and *.bin) with a 302 to a `/blob/{sha256}` route on a second server, the "CDN" (another origin,
// so the token must not reach it), putting X-Repo-Commit, X-Linked-Etag and X-Linked-Size on the
// redirect; Range requests; 401/403/404 with the Hub's X-Error-Code; `/api/{type}s/{id}/revision/{rev}`
// (with `?blobs=true`, each file's size and, for LFS files, its sha256). Both servers answer pages
// of other origins as the real Hub does (CORS: `Access-Control-Allow-Origin: *`, the headers a
// client reads exposed, preflights answered). Every request is recorded, and a fault can be set for
// the next GET of one file.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type FileContent = string | Uint8Array;

export interface FakeRepo {
  /** 'owner/name' or 'name'. */
  readonly id: string;
  readonly type?: 'model' | 'dataset' | 'space';
  /** commit hash → (path → content). */
  readonly commits: Record<string, Record<string, FileContent>>;
  /** branch or tag → commit hash. */
  readonly refs: Record<string, string>;
  /** A token that must be sent: without it, 401 (private) or 403 (gated). */
  readonly token?: string;
  readonly gated?: boolean;
}

/** What the next GET of a file's bytes does instead of the normal answer (used once). */
export type Fault =
  /** Send this many bytes, then hold the connection open until `cutHeld()` (or the client aborts). */
  | { readonly hold: number }
  /** Send these bytes as the body (with their own Content-Length) instead of the file's. */
  | { readonly body: Uint8Array }
  /** Answer a Range request with the whole file (200), as a server without range support does. */
  | { readonly ignoreRange: true };

export interface RecordedRequest {
  readonly server: 'hub' | 'cdn';
  readonly method: string;
  /** The path with its query, decoded as sent. */
  readonly path: string;
  readonly authorization: string | undefined;
  readonly range: string | undefined;
}

export const bytes = (c: FileContent): Uint8Array => (typeof c === 'string' ? new TextEncoder().encode(c) : c);
export const sha256 = (c: FileContent): string => createHash('sha256').update(bytes(c)).digest('hex');
/** git's blob id: what the Hub's ETag is for a file not stored in LFS. */
export const gitSha1 = (c: FileContent): string => createHash('sha1').update(`blob ${bytes(c).length}\0`).update(bytes(c)).digest('hex');
/** A commit hash made from a word. */
export const commitOf = (word: string): string => createHash('sha1').update(word).digest('hex');
export const isLfs = (path: string): boolean => /\.(safetensors|bin)$/.test(path);
/** The pointer file git stores for an LFS file. */
const lfsPointer = (c: FileContent): string => `version https://git-lfs.github.com/spec/v1\noid sha256:${sha256(c)}\nsize ${bytes(c).length}\n`;

/** `n` bytes of a repeatable pattern, large enough to arrive in several chunks. */
export function pattern(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  return out;
}

/** The response headers a page may read, as the real Hub exposes them. */
const EXPOSED = 'X-Repo-Commit, X-Linked-Etag, X-Linked-Size, X-Error-Code, X-Error-Message, ETag, Content-Length, Content-Range, Accept-Ranges';

/** CORS headers on every answer; true when `req` is a preflight, which they answer alone. */
function cors(req: IncomingMessage, res: ServerResponse): boolean {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', EXPOSED);
  if (req.method !== 'OPTIONS') return false;
  res.writeHead(204, { 'Access-Control-Allow-Methods': 'GET, HEAD', 'Access-Control-Allow-Headers': 'Authorization, Range' }).end();
  return true;
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

export class FakeHub {
  readonly requests: RecordedRequest[] = [];
  endpoint = '';
  cdnOrigin = '';
  private readonly faults = new Map<string, Fault>();
  private readonly held = new Set<Socket>();
  private readonly hub = createServer((req, res) => this.serveHub(req, res));
  private readonly cdn = createServer((req, res) => this.serveCdn(req, res));

  private constructor(private readonly repos: FakeRepo[]) {}

  static async start(repos: FakeRepo[]): Promise<FakeHub> {
    const hub = new FakeHub(repos);
    hub.endpoint = await listen(hub.hub);
    hub.cdnOrigin = await listen(hub.cdn);
    return hub;
  }

  /** The next GET of `path`'s bytes (on whichever server serves them) goes wrong as `fault` says. */
  fault(path: string, fault: Fault): void {
    this.faults.set(path, fault);
  }

  /** Ends every held connection early, as a network failure would. */
  cutHeld(): void {
    for (const socket of this.held) socket.destroy();
    this.held.clear();
  }

  /** The recorded requests of one method, optionally on one server. */
  count(method: string, server?: 'hub' | 'cdn'): number {
    return this.requests.filter((r) => r.method === method && (server === undefined || r.server === server)).length;
  }

  async close(): Promise<void> {
    this.cutHeld();
    for (const s of [this.hub, this.cdn]) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  }

  private record(server: 'hub' | 'cdn', req: IncomingMessage): void {
    this.requests.push({ server, method: req.method!, path: decodeURIComponent(req.url!), authorization: req.headers.authorization, range: req.headers.range });
  }

  /** The repo, or the error answer the Hub gives when it does not exist or the token does not fit. */
  private repoFor(type: string, id: string, req: IncomingMessage, res: ServerResponse): FakeRepo | undefined {
    const repo = this.repos.find((r) => r.id === id && (r.type ?? 'model') === type);
    if (repo === undefined || (repo.token !== undefined && !repo.gated && req.headers.authorization !== `Bearer ${repo.token}`)) {
      res.writeHead(401, { 'X-Error-Code': 'RepoNotFound', 'X-Error-Message': 'Repository not found' }).end();
      return undefined;
    }
    if (repo.gated && req.headers.authorization !== `Bearer ${repo.token}`) {
      res.writeHead(403, { 'X-Error-Code': 'GatedRepo', 'X-Error-Message': 'Access to this model is restricted.' }).end();
      return undefined;
    }
    return repo;
  }

  private serveHub(req: IncomingMessage, res: ServerResponse): void {
    this.record('hub', req);
    if (cors(req, res)) return;
    const [path = '', query = ''] = (req.url ?? '').split('?');
    const api = /^\/api\/(model|dataset|space)s\/(.+)\/revision\/([^/]+)$/.exec(path);
    const resolve = /^\/(?:(dataset|space)s\/)?(.+?)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const match = api ?? resolve;
    if (!match) {
      res.writeHead(404).end();
      return;
    }
    const repo = this.repoFor(api ? match[1]! : (match[1] ?? 'model'), match[2]!, req, res);
    if (!repo) return;
    const revision = decodeURIComponent(match[3]!);
    const commit = repo.commits[revision] ? revision : repo.refs[revision];
    if (commit === undefined) {
      res.writeHead(404, { 'X-Error-Code': 'RevisionNotFound', 'X-Error-Message': `Invalid rev id: ${revision}` }).end();
      return;
    }
    const files = repo.commits[commit]!;
    if (api) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const blobs = new URLSearchParams(query).get('blobs') === 'true';
      const siblings = Object.entries(files).map(([rfilename, content]) => !blobs ? { rfilename } : {
        rfilename, blobId: gitSha1(isLfs(rfilename) ? lfsPointer(content) : content), size: bytes(content).length,
        ...(isLfs(rfilename) ? { lfs: { sha256: sha256(content), size: bytes(content).length, pointerSize: bytes(lfsPointer(content)).length } } : {}),
      });
      res.end(JSON.stringify({ id: repo.id, sha: commit, siblings }));
      return;
    }
    const file = match[4]!.split('/').map(decodeURIComponent).join('/');
    const content = files[file];
    if (content === undefined) {
      res.writeHead(404, { 'X-Error-Code': 'EntryNotFound', 'X-Error-Message': 'Entry not found' }).end();
      return;
    }
    if (isLfs(file)) {
      res.writeHead(302, {
        Location: `${this.cdnOrigin}/blob/${sha256(content)}?signature=abc`,
        'X-Repo-Commit': commit,
        'X-Linked-Etag': `"${sha256(content)}"`,
        'X-Linked-Size': String(bytes(content).length),
        ETag: `"${gitSha1(lfsPointer(content))}"`,
      }).end();
      return;
    }
    this.sendBytes(req, res, file, bytes(content), { 'X-Repo-Commit': commit, ETag: `"${gitSha1(content)}"` });
  }

  private serveCdn(req: IncomingMessage, res: ServerResponse): void {
    this.record('cdn', req);
    if (cors(req, res)) return;
    const blob = /^\/blob\/([0-9a-f]{64})/.exec(req.url ?? '')?.[1];
    for (const repo of this.repos) {
      for (const files of Object.values(repo.commits)) {
        for (const [path, content] of Object.entries(files)) {
          if (sha256(content) === blob) return this.sendBytes(req, res, path, bytes(content), { ETag: `"cdn-${blob.slice(0, 8)}"` });
        }
      }
    }
    res.writeHead(404).end();
  }

  /** A file's bytes for HEAD or GET, with Range support and the fault set for it, if any. */
  private sendBytes(req: IncomingMessage, res: ServerResponse, path: string, data: Uint8Array, headers: Record<string, string>): void {
    const fault = req.method === 'GET' ? this.faults.get(path) : undefined;
    if (fault) this.faults.delete(path);
    const range = fault && 'ignoreRange' in fault ? undefined : /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const start = range ? Number(range[1]) : 0;
    if (start > 0 && start >= data.length) {
      res.writeHead(416, { 'Content-Range': `bytes */${data.length}` }).end();
      return;
    }
    let body = data.subarray(start);
    if (fault && 'body' in fault) body = fault.body;
    res.writeHead(range ? 206 : 200, {
      ...headers,
      'Content-Length': String(body.length),
      'Accept-Ranges': 'bytes',
      ...(range ? { 'Content-Range': `bytes ${start}-${data.length - 1}/${data.length}` } : {}),
    });
    if (req.method === 'HEAD') {
      res.end();
    } else if (fault && 'hold' in fault) {
      this.held.add(res.socket!);
      res.write(body.subarray(0, fault.hold));
    } else {
      res.end(body);
    }
  }
}
