// @core/hub's browser build in headless Chromium against the fake Hub (started here, on another
// origin than the page, so every request is cross-origin as with the real Hub): hubFile downloads
// a file through the Hub's redirect to its storage host and keeps it in the Cache API; offline
// mode and a commit pin read it back with no request (the fake Hub's log says so); bytes whose
// sha256 differs from the announced one are refused and not cached; an error status is typed from
// the Hub's (exposed) X-Error-Code; a token reaches the Hub but not its storage host; and nn.safeOpen reads the tensors of a safetensors file from
// hubFile's Blob.
import '@core/backend-cpu';
import { float16, int32, tensor } from '@core/tensor';
import { nn } from '@core/nn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitOf, FakeHub, pattern, sha256 } from '../../packages/hub/test/helpers/fake-hub.js';
import { runEntryInPage } from './page.js';

const MAIN = commitOf('main');
const cached = pattern(200_000, 3);
const genuine = pattern(5_000, 4);
const secret = pattern(3_000, 5);
const tampered = genuine.slice();
tampered[17]! ^= 0xff;
const weights = nn.serializeSafetensors({
  'layer.weight': tensor([[1.5, -2, 0.25], [3.25, 4, -0.5]]),
  'layer.bias': tensor([0.5, -65504], { dtype: float16 }),
  'token.ids': tensor([7, -8, 9, 2147483647], { dtype: int32 }),
}, { format: 'pt' });

/** What the page reports. */
interface PageResult {
  error?: string;
  first: { size: number; sha256: string; lastProgress: { file: string; loaded: number; total: number } };
  offline: { size: number; sha256: string };
  pinned: { size: number; sha256: string };
  keysAfterFirst: string[];
  offlineMiss: { name: string; typed: boolean; message: string };
  mismatch: { name: string; typed: boolean; check: string; expected: string; got: string };
  badRevision: { name: string; status: number; serverMessage: string };
  privateFile: { size: number; sha256: string };
  keysAtEnd: string[];
  tensors: Record<string, { dtype: string; shape: number[]; values: number[] }>;
}

const entry = (endpoint: string) => `
import '@core/backend-cpu';
import { hubFile, HubIntegrityError, LocalEntryNotFoundError } from '@core/hub';
import { nn } from '@core/nn';
const options = { endpoint: ${JSON.stringify(endpoint)}, token: false };
const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
const describe = async (blob) => ({ size: blob.size, sha256: hex(await crypto.subtle.digest('SHA-256', await blob.arrayBuffer())) });
const keys = async () => (await (await caches.open('core-hub')).keys()).map((r) => r.url).sort();
const out = {};
try {
  const progress = [];
  out.first = await describe(await hubFile('acme/cached', 'model.bin', { ...options, onProgress: (p) => progress.push(p) }));
  out.first.lastProgress = progress.at(-1);
  out.keysAfterFirst = await keys();
  out.offline = await describe(await hubFile('acme/cached', 'model.bin', { ...options, offline: true }));
  out.pinned = await describe(await hubFile('acme/cached', 'model.bin', { ...options, revision: ${JSON.stringify(MAIN)} }));
  out.offlineMiss = await hubFile('acme/cached', 'config.json', { ...options, offline: true }).then(
    () => ({ name: 'no error' }), (e) => ({ name: e.name, typed: e instanceof LocalEntryNotFoundError, message: e.message }));
  out.mismatch = await hubFile('acme/tampered', 'tampered.safetensors', options).then(
    () => ({ name: 'no error' }), (e) => ({ name: e.name, typed: e instanceof HubIntegrityError, check: e.check, expected: e.expected, got: e.got }));
  out.badRevision = await hubFile('acme/weights', 'model.safetensors', { ...options, revision: 'nope' }).then(
    () => ({ name: 'no error' }), (e) => ({ name: e.name, status: e.status, serverMessage: e.serverMessage }));
  out.privateFile = await describe(await hubFile('acme/private', 'private.bin', { ...options, token: 'hf_secret' }));
  const file = await nn.safeOpen(await hubFile('acme/weights', 'model.safetensors', options));
  out.tensors = {};
  for (const key of file.keys()) {
    const t = await file.getTensor(key);
    out.tensors[key] = { dtype: t.dtype.name, shape: [...t.shape], values: Array.from(t.dataSync()) };
  }
  await file.close();
  out.keysAtEnd = await keys();
} catch (e) {
  out.error = String(e && e.stack || e);
}
window.__hub = out;
`;

describe('@core/hub in a page: hubFile on the Cache API, and nn.safeOpen on its Blob', () => {
  let hub: FakeHub;
  beforeAll(async () => {
    hub = await FakeHub.start([
      { id: 'acme/cached', commits: { [MAIN]: { 'model.bin': cached, 'config.json': '{}' } }, refs: { main: MAIN } },
      { id: 'acme/tampered', commits: { [MAIN]: { 'tampered.safetensors': genuine } }, refs: { main: MAIN } },
      { id: 'acme/weights', commits: { [MAIN]: { 'model.safetensors': weights } }, refs: { main: MAIN } },
      { id: 'acme/private', commits: { [MAIN]: { 'private.bin': secret } }, refs: { main: MAIN }, token: 'hf_secret' },
    ]);
  });
  afterAll(async () => {
    await hub?.close();
  });

  it('downloads and caches, reads offline and by commit with no request, refuses a sha256 mismatch, and safeOpen reads the tensors', async () => {
    hub.fault('tampered.safetensors', { body: tampered });
    const { result: r, errors, script } = await runEntryInPage<PageResult>(entry(hub.endpoint), '__hub', { timeoutMs: 120_000 });
    expect(errors).toEqual([]);
    expect(r.error).toBeUndefined();
    expect(script).not.toMatch(/from\s*["']node:|import\(\s*["']node:/);

    // The first call: the bytes, progress to the end, and the two cache entries (the file under its commit's URL, the ref).
    const file = { size: cached.length, sha256: sha256(cached) };
    expect(r.first).toEqual({ ...file, lastProgress: { file: 'model.bin', loaded: cached.length, total: cached.length } });
    expect(r.keysAfterFirst).toEqual([`${hub.endpoint}/acme/cached/resolve/${MAIN}/model.bin`, `${hub.endpoint}/api/models/acme/cached/revision/main`]);
    // Offline and by commit: the same bytes, and the Hub saw only the first call's requests for this repo.
    expect(r.offline).toEqual(file);
    expect(r.pinned).toEqual(file);
    expect(hub.requests.filter((q) => q.path.includes('acme/cached') || q.path.includes(sha256(cached))).map((q) => `${q.server} ${q.method} ${q.path}`)).toEqual([
      'hub GET /api/models/acme/cached/revision/main?blobs=true',
      `hub GET /acme/cached/resolve/${MAIN}/model.bin`,
      `cdn GET /blob/${sha256(cached)}?signature=abc`,
    ]);
    expect(r.offlineMiss.name).toBe('LocalEntryNotFoundError');
    expect(r.offlineMiss.typed).toBe(true);
    expect(r.offlineMiss.message).toMatch(/'config\.json' of repo 'acme\/cached' at revision 'main' is not in this browser's Cache API storage/);

    // A body whose sha256 is not the announced one: refused, and not cached.
    expect(r.mismatch).toEqual({ name: 'HubIntegrityError', typed: true, check: 'sha256', expected: sha256(genuine), got: sha256(tampered) });
    expect(r.keysAtEnd.filter((k) => k.includes('tampered.safetensors'))).toEqual([]);

    // An error status is typed from the Hub's X-Error-Code, which the page may read only because the Hub exposes it.
    expect(r.badRevision).toEqual({ name: 'RevisionNotFoundError', status: 404, serverMessage: 'Invalid rev id: nope' });

    // A token goes to the Hub (after the browser's preflight) and never to the storage host it redirects to.
    expect(r.privateFile).toEqual({ size: secret.length, sha256: sha256(secret) });
    const privateGets = hub.requests.filter((q) => q.method === 'GET' && (q.path.includes('acme/private') || q.path.includes(sha256(secret))));
    expect(privateGets.map((q) => [q.server, q.authorization])).toEqual([['hub', 'Bearer hf_secret'], ['hub', 'Bearer hf_secret'], ['cdn', undefined]]);

    // safeOpen on hubFile's Blob: every tensor with its dtype, shape and exact values (all representable in their dtype).
    expect(r.tensors).toEqual({
      'layer.weight': { dtype: 'float32', shape: [2, 3], values: [1.5, -2, 0.25, 3.25, 4, -0.5] },
      'layer.bias': { dtype: 'float16', shape: [2], values: [0.5, -65504] },
      'token.ids': { dtype: 'int32', shape: [4], values: [7, -8, 9, 2147483647] },
    });
  });
});
