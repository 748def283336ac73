// A one-line progress bar on a terminal; nothing but the summary lines when output is a file or CI log.

/** A progress bar redrawn in place on a terminal, with summary lines that show everywhere. */
export class Progress {
  private readonly tty: boolean;
  private last = 0;

  /** Draw on `stream` (default stderr); the bar only when it is a terminal. */
  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.tty = Boolean(stream.isTTY);
  }

  /** `label ███░░░ done/total  status`, redrawn at most ~10 times a second (and always at the end). */
  update(label: string, done: number, total: number, status: string): void {
    if (!this.tty) return;
    const now = Date.now();
    if (now - this.last < 100 && done < total) return;
    this.last = now;
    const width = 30;
    const filled = Math.round((width * done) / total);
    const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
    this.stream.write(`\r${label} ${bar} ${done}/${total}  ${status} `);
  }

  /** End the bar's line (terminal) and print a summary line (everywhere). */
  line(text: string): void {
    if (this.tty) this.stream.write('\r\x1b[2K');
    this.stream.write(`${text}\n`);
  }
}
