// The errors this package throws on purpose. The HTTP ones carry huggingface_hub's names, so that a
// Python program's `except RepositoryNotFoundError` ports to `instanceof RepositoryNotFoundError`.
// No Node built-ins here: the browser entry exports these classes too.

/** Base class of every error `@core/hub` throws on purpose. */
export class HubError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Which argument a {@link HFValidationError} is about. */
export type HubArgument = 'repoId' | 'filename' | 'subfolder' | 'revision';

/**
 * A repo id, file name, subfolder or revision that the Hub cannot have, or that would reach outside
 * the cache (`..`, absolute paths). Raised before any network access (Python's `HFValidationError`).
 */
export class HFValidationError extends HubError {
  constructor(
    message: string,
    /** The argument at fault. */
    readonly argument: HubArgument,
    /** The value given. */
    readonly value: string,
  ) {
    super(message);
  }
}

/** What an HTTP error was about: which repo and, where one was asked for, which file and revision. */
export interface HubRequestContext {
  /** The repo id, e.g. `'openai-community/gpt2'`. */
  readonly repoId: string;
  /** The file in the repo, when the request was for one file. */
  readonly filename?: string;
  /** The branch, tag or commit asked for. */
  readonly revision: string;
  /** The Hub's address the request went to, e.g. `'https://huggingface.co'`. */
  readonly endpoint: string;
}

/** The Hub (or the server a download was redirected to) answered with an HTTP error status. */
export class HfHubHTTPError extends HubError {
  /** The repo id the request was for. */
  readonly repoId: string;
  /** The file the request was for, if it was for one. */
  readonly filename: string | undefined;
  /** The revision the request was for. */
  readonly revision: string;

  constructor(
    message: string,
    context: HubRequestContext,
    /** The HTTP status code. */
    readonly status: number,
    /** The address that answered, without its query string. */
    readonly url: string,
    /** The server's own explanation (its `X-Error-Message` header), when it sent one. */
    readonly serverMessage: string | undefined,
  ) {
    super(message);
    this.repoId = context.repoId;
    this.filename = context.filename;
    this.revision = context.revision;
  }
}

/**
 * The repo does not exist, or it is private or gated and the request carried no token that may read
 * it: the Hub answers both with 401 so as not to reveal which.
 */
export class RepositoryNotFoundError extends HfHubHTTPError {}

/** The repo is gated (HTTP 403, or 401 with the Hub's `GatedRepo` code): its terms must be accepted first. */
export class GatedRepoError extends RepositoryNotFoundError {}

/** The repo exists but has no such branch, tag or commit (HTTP 404, the Hub's `RevisionNotFound` code). */
export class RevisionNotFoundError extends HfHubHTTPError {}

/** The repo and revision exist but have no such file (HTTP 404). */
export class EntryNotFoundError extends HfHubHTTPError {}

/**
 * The file is not in the local cache and the network may not be used (offline mode, Python's
 * `local_files_only`).
 */
export class LocalEntryNotFoundError extends HubError {
  constructor(
    message: string,
    /** The repo id asked for. */
    readonly repoId: string,
    /** The file asked for; undefined for a whole snapshot. */
    readonly filename: string | undefined,
    /** The revision asked for. */
    readonly revision: string,
  ) {
    super(message);
  }
}

/**
 * The Hub could not be reached, or the connection broke during a download. A partial download is
 * kept as `blobs/<etag>.incomplete` and the next call continues it. The network error is `cause`.
 */
export class HubConnectionError extends HubError {
  constructor(
    message: string,
    /** The address that could not be read, without its query string. */
    readonly url: string,
    /** The network error. */
    override readonly cause: unknown,
  ) {
    super(message, { cause });
  }
}

/**
 * A finished download does not match what the Hub announced (its size, or for LFS files the sha256
 * that is its ETag). The bytes are deleted, never moved into the cache.
 */
export class HubIntegrityError extends HubError {
  constructor(
    message: string,
    /** The file in the repo. */
    readonly filename: string,
    /** What was compared. */
    readonly check: 'size' | 'sha256',
    /** The announced value (a byte count or a hex digest). */
    readonly expected: string,
    /** What the download had. */
    readonly got: string,
  ) {
    super(message);
  }
}
