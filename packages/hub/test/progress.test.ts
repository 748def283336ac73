// progressBar: a bar redrawn in place on a terminal, a summary line per finished file everywhere.
import { describe, expect, it } from 'vitest';
import { progressBar, type DownloadProgress, type ProgressStream } from '../src/index.js';
import { formatBytes } from '../src/progress.js';

function stream(isTTY: boolean): ProgressStream & { text: string; writes: number } {
  return { isTTY, text: '', writes: 0, write(t: string) { this.text += t; this.writes++; } };
}

const file = 'model.safetensors';
const MiB = 1024 * 1024;
const steps = (total: number, n: number): DownloadProgress[] =>
  Array.from({ length: n + 1 }, (_, i) => ({ file, loaded: Math.round((total * i) / n), total }));

describe('progressBar', () => {
  it('on a terminal draws `file ███░░░ done/total unit  pct%` in place, then a summary line', () => {
    const out = stream(true);
    const bar = progressBar({ stream: out, width: 10 });
    bar({ file, loaded: 0, total: 4 * MiB });
    bar({ file, loaded: 1 * MiB, total: 4 * MiB });
    expect(out.text).toBe(
      `\r\x1b[2K${file} ░░░░░░░░░░ 0.0/4.0 MiB  0%` +
      `\r\x1b[2K${file} ███░░░░░░░ 1.0/4.0 MiB  25%`,
    );
    bar({ file, loaded: 4 * MiB, total: 4 * MiB });
    expect(out.text.endsWith(`\r\x1b[2K${file}  4.0 MiB\n`)).toBe(true);
  });

  it('redraws only when the percentage or a bar cell changes, however many reports arrive', () => {
    const out = stream(true);
    const bar = progressBar({ stream: out, width: 30 });
    for (const p of steps(10 * MiB, 10_000)) bar(p);
    // 100 percent steps and 30 cells, plus the summary line.
    expect(out.writes).toBeLessThanOrEqual(100 + 30 + 1);
    expect(out.writes).toBeGreaterThanOrEqual(100);
  });

  it('off a terminal writes only the summary line of each finished file', () => {
    const out = stream(false);
    const bar = progressBar({ stream: out });
    for (const p of steps(2048, 4)) bar(p);
    bar({ file: 'config.json', loaded: 0, total: 512 });
    bar({ file: 'config.json', loaded: 512, total: 512 });
    expect(out.text).toBe(`${file}  2.0 KiB\nconfig.json  512 B\n`);
  });

  it('without a total shows the bytes so far', () => {
    const out = stream(true);
    progressBar({ stream: out })({ file, loaded: 3 * MiB / 2, total: undefined });
    expect(out.text).toBe(`\r\x1b[2K${file} 1.5 MiB`);
  });

  it('checks its options', () => {
    expect(() => progressBar({ width: 0 })).toThrow(/option 'width' must be a whole number ≥ 1/);
    expect(() => progressBar({ stream: {} as ProgressStream })).toThrow(/option 'stream' must be an object with a write method/);
    expect(() => progressBar({ colour: true } as never)).toThrow(/unknown option 'colour'/);
  });
});

describe('formatBytes', () => {
  it('uses powers of 1024, and the total\'s unit for both numbers', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1023)).toBe('1023 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(5 * 1024 ** 3)).toBe('5.0 GiB');
    expect(formatBytes(300 * MiB, 5 * 1024 ** 3)).toBe('0.3/5.0 GiB');
  });
});
