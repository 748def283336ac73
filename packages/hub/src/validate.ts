// Checks on the arguments. The names that become URL parts and cache paths: one that passes can
// neither leave the cache directory nor change which URL is asked for (path traversal stops here).
// The options: an unknown name or a value of the wrong type is a TypeError naming the option.
import { HFValidationError, type HubArgument } from './errors.js';
import type { HubDownloadOptions, HubOptions, SnapshotDownloadOptions } from './options.js';

/** A repo or owner name as the Hub allows it: letters, digits, `_`, `-`, `.`, starting and ending with a letter, digit or `_`. */
const NAME = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;
/** The longest repo name the Hub accepts (owner names have no such limit in the Hub's rule). */
const MAX_NAME = 96;
/** An http(s) address with a host: what an endpoint must be. */
export const HTTP_ADDRESS = /^https?:\/\/[^/]/;
/** A full commit hash, the form a revision takes when it names a commit. */
export const COMMIT_HASH = /^[0-9a-f]{40}$/;

/** `name` or `owner/name` as on the Hub; no `--` or `..` (they would blur the cache folder name), no `.git` ending. */
export function validateRepoId(repoId: unknown): string {
  if (typeof repoId !== 'string') throw new TypeError(`repoId must be a string such as 'openai-community/gpt2', got ${describe(repoId)}`);
  const parts = repoId.split('/');
  const name = parts[parts.length - 1]!;
  const problem =
    parts.length > 2 ? 'it has more than one /' :
    !parts.every((p) => NAME.test(p)) ? 'the owner and the name may use only letters, digits, _, - and ., and must start and end with a letter, digit or _' :
    name.length > MAX_NAME ? `the name is longer than ${MAX_NAME} characters` :
    repoId.includes('--') || repoId.includes('..') ? 'it contains -- or ..' :
    repoId.endsWith('.git') ? 'it ends with .git' :
    undefined;
  if (problem) throw new HFValidationError(`Invalid repoId '${repoId}': ${problem} (expected 'name' or 'owner/name').`, 'repoId', repoId);
  return repoId;
}

/**
 * What is wrong with a `/`-separated relative path, if anything: empty, absolute, a backslash or
 * control character, or an empty, `.` or `..` segment. One that passes, joined to a folder, stays
 * inside it.
 */
function relativePathProblem(path: string): string | undefined {
  if (path === '') return 'it is empty';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return 'it is an absolute path';
  if (path.includes('\\')) return 'it contains a backslash (use / between folders)';
  if (/[\u0000-\u001f]/.test(path)) return 'it contains a control character';
  const bad = path.split('/').find((s) => s === '' || s === '.' || s === '..');
  return bad === undefined ? undefined : bad === '' ? 'it has an empty segment (//, or a / at the end)' : `it has a '${bad}' segment`;
}

/** A file or folder in the repo, as a relative path that cannot leave the snapshot folder. */
export function validateRepoPath(path: unknown, argument: Extract<HubArgument, 'filename' | 'subfolder'>): string {
  if (typeof path !== 'string') throw new TypeError(`${argument} must be a string, got ${describe(path)}`);
  const problem = relativePathProblem(path);
  if (problem) {
    throw new HFValidationError(`Invalid ${argument} '${path}': ${problem}. Give the path inside the repo, e.g. 'onnx/model.onnx'.`, argument, path);
  }
  return path;
}

/** A branch, tag or commit; it also names a file under `refs/`, so it follows the same rule as paths. */
export function validateRevision(revision: unknown): string {
  if (typeof revision !== 'string') throw new TypeError(`revision must be a string (a branch, tag or commit), got ${describe(revision)}`);
  const problem = relativePathProblem(revision);
  if (problem) throw new HFValidationError(`Invalid revision '${revision}': ${problem}. Give a branch, tag or commit hash, e.g. 'main'.`, 'revision', revision);
  return revision;
}

/**
 * A name the server sent that becomes one path segment of the cache (a commit hash or an ETag):
 * refused unless it is a plain file name.
 */
export function isSafeSegment(name: string): boolean {
  return /^[A-Za-z0-9._-]+$/.test(name) && name !== '.' && name !== '..';
}

/** A value for an error message: strings quoted, other things by their type. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/** An option's type test, and what the value must be (for the message when the test fails). */
export type OptionCheck = readonly [test: (value: unknown) => boolean, what: string];

const isStrings = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === 'string');
const isBoolean = (v: unknown): boolean => typeof v === 'boolean';
const patterns: OptionCheck = [(v) => typeof v === 'string' || isStrings(v), 'a string or an array of strings'];
/** A whole number ≥ 1. */
export const COUNT: OptionCheck = [(v) => Number.isInteger(v) && (v as number) >= 1, 'a whole number ≥ 1'];

/** The options both downloads take, in the order an error message lists them. */
const HUB_CHECKS = {
  revision: [(v) => typeof v === 'string', 'a string (a branch, tag or commit)'],
  repoType: [(v) => v === 'model' || v === 'dataset' || v === 'space', "'model', 'dataset' or 'space'"],
  cacheDir: [(v) => typeof v === 'string' && v !== '', 'a non-empty string (a folder)'],
  endpoint: [(v) => typeof v === 'string' && HTTP_ADDRESS.test(v), "an http(s) address such as 'https://huggingface.co'"],
  token: [(v) => v === false || (typeof v === 'string' && v !== ''), 'a non-empty string or false'],
  offline: [isBoolean, 'true or false'],
  forceDownload: [isBoolean, 'true or false'],
  onProgress: [(v) => typeof v === 'function', 'a function'],
  signal: [(v) => typeof v === 'object' && v !== null && typeof (v as AbortSignal).aborted === 'boolean', 'an AbortSignal'],
} satisfies Record<keyof HubOptions, OptionCheck>;

/** The options of hubDownload. */
export const DOWNLOAD_CHECKS = {
  ...HUB_CHECKS,
  subfolder: [(v) => typeof v === 'string', 'a string'],
} satisfies Record<keyof HubDownloadOptions, OptionCheck>;

/** The options of snapshotDownload. */
export const SNAPSHOT_CHECKS = {
  ...HUB_CHECKS,
  allowPatterns: patterns,
  ignorePatterns: patterns,
  files: [(v) => isStrings(v) && (v as string[]).length > 0, 'a non-empty array of file names'],
  maxWorkers: COUNT,
} satisfies Record<keyof SnapshotDownloadOptions, OptionCheck>;

/**
 * Throws a TypeError naming the first unknown option, or the first one whose value fails its check;
 * `undefined` counts as not given. `fn` names the function in the message.
 */
export function checkOptions(fn: string, options: unknown, checks: Readonly<Record<string, OptionCheck>>): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`${fn}(): the options must be an object, got ${describe(options)}`);
  }
  for (const [name, value] of Object.entries(options)) {
    const check = Object.hasOwn(checks, name) ? checks[name] : undefined;
    if (check === undefined) throw new TypeError(`${fn}() got an unknown option '${name}' (its options are ${Object.keys(checks).join(', ')})`);
    if (value !== undefined && !check[0](value)) throw new TypeError(`${fn}(): option '${name}' must be ${check[1]}, got ${describe(value)}`);
  }
}
