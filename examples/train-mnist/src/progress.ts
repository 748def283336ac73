// A one-line progress bar on a terminal; plain per-epoch lines when output is a file or CI log.

export class Progress {
  private readonly tty: boolean;
  private last = 0;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.tty = Boolean(stream.isTTY);
  }

  /** Redraw at most ~10 times a second. */
  update(epoch: number, epochs: number, done: number, total: number, loss: number, imagesPerSecond: number): void {
    if (!this.tty) return;
    const now = Date.now();
    if (now - this.last < 100 && done < total) return;
    this.last = now;
    const width = 30;
    const filled = Math.round((width * done) / total);
    const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
    this.stream.write(`\repoch ${epoch}/${epochs} ${bar} ${done}/${total}  loss ${loss.toFixed(4)}  ${imagesPerSecond.toFixed(0)} img/s `);
  }

  /** End the bar's line (terminal) and print a summary line (everywhere). */
  line(text: string): void {
    if (this.tty) this.stream.write('\r\x1b[2K');
    this.stream.write(`${text}\n`);
  }
}
