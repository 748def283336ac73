// The options of hubDownload and snapshotDownload (validate.ts checks them). Types only: the
// browser entry shares them.

/** The kind of repo, as in huggingface_hub: it decides the URL prefix and the cache folder's (`models--…`). */
export type RepoType = 'model' | 'dataset' | 'space';

/** One progress report of one file's download. */
export interface DownloadProgress {
  /** The file's path in the repo, e.g. `'model.safetensors'`. */
  readonly file: string;
  /** Bytes on disk so far, counting a resumed download's earlier part; never decreases. */
  readonly loaded: number;
  /** The file's size, when the server announced it; the last report has `loaded === total`. */
  readonly total: number | undefined;
}

/** Options both downloads take. Each defaults as in huggingface_hub, environment variables included. */
export interface HubOptions {
  /** A branch, tag or commit hash. Default `'main'`. */
  revision?: string;
  /** `'model'` (default), `'dataset'` or `'space'`. */
  repoType?: RepoType;
  /**
   * The cache folder. Default: `HF_HUB_CACHE`, else `HF_HOME/hub`, else
   * `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub` (Python's, so the two share it).
   */
  cacheDir?: string;
  /** The Hub's address. Default `HF_ENDPOINT`, else `https://huggingface.co`. */
  endpoint?: string;
  /**
   * An access token, sent as `Authorization: Bearer …` to the endpoint's host only (never to a host a
   * download is redirected to). Default `HF_TOKEN`, else the file `HF_TOKEN_PATH` or `HF_HOME/token`
   * that Python's `hf auth login` writes. `false` sends none.
   */
  token?: string | false;
  /**
   * Use the cache only, with no network access (Python's `local_files_only`); a file that is not
   * cached is a {@link LocalEntryNotFoundError}. Default: true when `HF_HUB_OFFLINE` is `1`, `ON`,
   * `YES` or `TRUE`.
   */
  offline?: boolean;
  /** Download again even when the file is cached (a partial download is discarded). Default false. */
  forceDownload?: boolean;
  /** Called as bytes arrive, per file; {@link progressBar} makes one that draws a bar. */
  onProgress?: (progress: DownloadProgress) => void;
  /** Aborts the download; the bytes already on disk are kept, and the next call resumes from them. */
  signal?: AbortSignal;
}

/** Options of {@link hubDownload}. */
export interface HubDownloadOptions extends HubOptions {
  /** A folder in the repo that `filename` is in, as in Python's `subfolder`. */
  subfolder?: string;
}

/**
 * Options of {@link hubFile}: those of {@link hubDownload}. In a browser there is no `cacheDir`
 * (the bytes go to the Cache API) and no environment variable: `endpoint` defaults to
 * `https://huggingface.co`, `token` to none, `offline` to false.
 */
export type HubFileOptions = HubDownloadOptions;

/** Options of {@link snapshotDownload}. */
export interface SnapshotDownloadOptions extends HubOptions {
  /**
   * Download only the files that match one of these patterns (`fnmatch` syntax as in Python:
   * `*` also matches `/`, `?`, `[abc]`, `[!abc]`; a pattern ending in `/` means everything below).
   */
  allowPatterns?: string | readonly string[];
  /** Leave out the files that match one of these patterns (same syntax). */
  ignorePatterns?: string | readonly string[];
  /**
   * Exactly these files, without asking the Hub's API for the repo's file list (a mirror that
   * serves only `/resolve/` URLs works). Not together with the patterns.
   */
  files?: readonly string[];
  /** How many files download at once. Default 8, as in Python. */
  maxWorkers?: number;
}
