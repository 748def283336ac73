// One blob's bytes into the cache: written to `{blob}.incomplete`, continued with a Range request
// when that file is already there, checked (size, and sha256 where the ETag is one), then renamed to
// `{blob}`, so that a blob in the cache is always whole and right.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { HubRequestContext } from './errors.js';
import { getFile, type FileMetadata } from './http.js';
import { integrityError, readBody, SHA256 } from './protocol.js';
import type { HubSettings } from './settings.js';

/** Downloads in progress in this process, by blob path: a second download of the same blob waits for the first. */
const inFlight = new Map<string, Promise<void>>();

/** The size of a file, undefined when there is none. */
async function sizeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

async function hashFile(path: string, hash: Hash): Promise<void> {
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
}

/** Where a 206 answer's bytes start (`Content-Range: bytes 100-199/200`), and the whole size when given. */
function contentRange(response: Response): { start: number; total: number | undefined } | undefined {
  const m = /^bytes (\d+)-\d+\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
  return m ? { start: Number(m[1]), total: m[2] === '*' ? undefined : Number(m[2]) } : undefined;
}

/** The GET to use: a Range request continuing `offset` bytes when the server honours it, else the whole file from byte 0. */
async function openFrom(offset: number, meta: FileMetadata, settings: HubSettings, context: HubRequestContext): Promise<{ response: Response; offset: number }> {
  if (offset > 0) {
    const response = await getFile(meta.location, offset, settings, context);
    if (response.status === 206 && contentRange(response)?.start === offset) return { response, offset };
    if (response.status !== 416 && response.status !== 206) return { response, offset: 0 };
    await response.body?.cancel();
  }
  return { response: await getFile(meta.location, 0, settings, context), offset: 0 };
}

/** Streams the answer's body to `incomplete` (appending after `offset` bytes), reporting progress; returns the byte count. */
async function writeBody(
  response: Response, incomplete: string, offset: number, total: number | undefined, hash: Hash | undefined,
  settings: HubSettings, file: string,
): Promise<number> {
  const handle = await open(incomplete, offset > 0 ? 'a' : 'w');
  try {
    return await readBody(response, offset, total, settings, file, async (chunk) => {
      await handle.write(chunk);
      hash?.update(chunk);
    }, 'the bytes are kept; the next call continues from there');
  } finally {
    await handle.close();
  }
}

/** Refuses bytes that differ from what the Hub announced; the partial file is removed first. */
async function verify(incomplete: string, loaded: number, hash: Hash | undefined, meta: FileMetadata, file: string, context: HubRequestContext): Promise<void> {
  const error = integrityError(file, context, { size: meta.size, sha256: hash && meta.etag }, { size: loaded, sha256: hash?.digest('hex') });
  if (error === undefined) return;
  await rm(incomplete, { force: true });
  throw error;
}

async function download(meta: FileMetadata, blob: string, file: string, settings: HubSettings, context: HubRequestContext): Promise<void> {
  const incomplete = `${blob}.incomplete`;
  await mkdir(dirname(blob), { recursive: true });
  if (settings.forceDownload) await rm(incomplete, { force: true });
  let offset = (await sizeOf(incomplete)) ?? 0;
  if (meta.size !== undefined && offset >= meta.size) offset = 0;
  const opened = await openFrom(offset, meta, settings, context);
  offset = opened.offset;
  const hash = SHA256.test(meta.etag) ? createHash('sha256') : undefined;
  if (hash && offset > 0) await hashFile(incomplete, hash);
  const announced = opened.response.status === 206 ? contentRange(opened.response)?.total : Number(opened.response.headers.get('content-length') ?? NaN);
  const total = meta.size ?? (Number.isSafeInteger(announced) ? announced : undefined);
  const loaded = await writeBody(opened.response, incomplete, offset, total, hash, settings, file);
  await verify(incomplete, loaded, hash, { ...meta, size: total }, file, context);
  await rename(incomplete, blob);
}

/**
 * Puts the blob `meta` describes at `blob`, unless it is there already with the announced size (and
 * `forceDownload` is off).
 * Downloads of one blob in this process run one at a time: a snapshot may list the same content twice.
 */
export async function fetchBlob(meta: FileMetadata, blob: string, file: string, settings: HubSettings, context: HubRequestContext): Promise<void> {
  for (let running = inFlight.get(blob); running; running = inFlight.get(blob)) await running.catch(() => undefined);
  // Registered before its first await, so that a call arriving meanwhile waits for it.
  const job = (async () => {
    const cached = await sizeOf(blob);
    if (!settings.forceDownload && cached !== undefined && (meta.size === undefined || cached === meta.size)) return;
    await download(meta, blob, file, settings, context);
  })();
  inFlight.set(blob, job);
  try {
    await job;
  } finally {
    if (inFlight.get(blob) === job) inFlight.delete(blob);
  }
}
