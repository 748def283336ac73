// A terminal progress bar for downloads, in the look of the examples' training bar
// (`label ███░░░ done/total  status`): redrawn in place on a terminal, a summary line per finished
// file everywhere. It redraws only when the percentage or the bar changes, so its cost does not
// grow with the number of chunks.
import type { DownloadProgress } from './options.js';
import { checkOptions, COUNT, type OptionCheck } from './validate.js';

/** Where {@link progressBar} writes: a Node stream such as `process.stderr`, or anything with `write`. */
export interface ProgressStream {
  /** Writes text (no newline added). */
  write(text: string): unknown;
  /** True on a terminal: only then is the bar drawn (else only the summary lines are written). */
  readonly isTTY?: boolean;
}

/** Options of {@link progressBar}. */
export interface ProgressBarOptions {
  /** Where to draw. Default `process.stderr`. */
  stream?: ProgressStream;
  /** The bar's width in characters. Default 30. */
  width?: number;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** The unit that suits `bytes`: the power of 1024 and its name. */
function unitFor(bytes: number): { scale: number; name: string } {
  const power = bytes < 1024 ? 0 : Math.min(UNITS.length - 1, Math.floor(Math.log2(bytes) / 10));
  return { scale: 1024 ** power, name: UNITS[power]! };
}

/** `1.5 GiB`, or `0.3/1.5 GiB` when `of` is given (both in `of`'s unit). */
export function formatBytes(bytes: number, of?: number): string {
  const { scale, name } = unitFor(of ?? bytes);
  const digits = scale === 1 ? 0 : 1;
  const amount = (n: number) => (n / scale).toFixed(digits);
  return of === undefined ? `${amount(bytes)} ${name}` : `${amount(bytes)}/${amount(of)} ${name}`;
}

/**
 * One file's bar, e.g. `model.safetensors ███████░░░ 1.2/5.0 GiB  24%` (without a total, the bytes
 * so far), and the part of it that decides a redraw: the percentage and the filled cells.
 */
function bar(p: DownloadProgress, width: number): { text: string; key: string } {
  if (p.total === undefined) {
    const text = `${p.file} ${formatBytes(p.loaded)}`;
    return { text, key: text };
  }
  const fraction = p.total === 0 ? 1 : Math.min(1, p.loaded / p.total);
  const filled = Math.round(width * fraction);
  const percent = Math.floor(fraction * 100);
  return {
    text: `${p.file} ${'█'.repeat(filled)}${'░'.repeat(width - filled)} ${formatBytes(p.loaded, p.total)}  ${percent}%`,
    key: `${p.file} ${filled} ${percent}`,
  };
}

/**
 * An `onProgress` handler that draws a one-line bar per file on stderr when stderr is a terminal
 * and, on any stream, prints `file  size` when a file is complete. Pass it to
 * {@link hubDownload} or {@link snapshotDownload}: `{ onProgress: progressBar() }`. In a snapshot
 * the line shows the file that last received bytes.
 */
export function progressBar(options: ProgressBarOptions = {}): (progress: DownloadProgress) => void {
  checkOptions('progressBar', options, {
    stream: [(v) => typeof (v as ProgressStream | null)?.write === 'function', 'an object with a write method, such as process.stderr'],
    width: COUNT,
  } satisfies Record<keyof ProgressBarOptions, OptionCheck>);
  const stream = options.stream ?? process.stderr;
  const width = options.width ?? 30;
  const tty = stream.isTTY === true;
  let shown = '';
  return (p) => {
    const done = p.total !== undefined && p.loaded >= p.total;
    if (tty && !done) {
      const { text, key } = bar(p, width);
      if (key !== shown) stream.write(`\r\x1b[2K${text}`);
      shown = key;
    }
    if (done) {
      stream.write(`${tty ? '\r\x1b[2K' : ''}${p.file}  ${formatBytes(p.total!)}\n`);
      shown = '';
    }
  };
}
