import '@core/backend-cpu';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chooseDevice, demoArgs, oneOf, parseFlags, positive, Progress, type FlagSpec } from '../src/index.js';

/** A stream that records what is written to it, as a terminal (`isTTY`) or as a file. */
function recorder(isTTY: boolean): { stream: NodeJS.WriteStream; written: () => string } {
  const stream = new PassThrough() as unknown as NodeJS.WriteStream;
  stream.isTTY = isTTY;
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, written: () => text };
}

describe('the flag helpers', () => {
  it('read positive numbers and integers, and name the flag when one is not', () => {
    expect(positive('lr', '0.5', false)).toBe(0.5);
    expect(positive('steps', '12', true)).toBe(12);
    expect(() => positive('steps', '1.5', true)).toThrow("--steps must be a positive integer, got '1.5'");
    expect(() => positive('lr', '0', false)).toThrow("--lr must be a positive number, got '0'");
    expect(() => positive('lr', 'abc', false)).toThrow(/--lr must be a positive number/);
  });

  it('accept one of a list of choices', () => {
    expect(oneOf('amp', 'bf16', ['off', 'bf16'])).toBe('bf16');
    expect(() => oneOf('amp', 'fp8', ['off', 'bf16'])).toThrow("--amp must be one of off, bf16, got 'fp8'");
  });

  it("drop the `--` that `pnpm demo -- --flags` passes first, and only that", () => {
    expect(demoArgs(['--', '--steps', '3'])).toEqual(['--steps', '3']);
    expect(demoArgs(['--steps', '3', '--', 'x'])).toEqual(['--steps', '3', '--', 'x']);
  });
});

describe('parseFlags', () => {
  const flags: FlagSpec[] = [['steps', '10', 'N', 'how many steps'], ['compile', 'off', '', 'replay the step']];

  it("reads value flags as strings and a switch (value '') as 'on' when given, 'off' when not", () => {
    expect(parseFlags(['--steps', '3', '--compile'], flags, [])).toEqual({ steps: '3', compile: 'on', help: false });
    expect(parseFlags(['--', '--steps', '4'], flags, [])).toEqual({ steps: '4', compile: 'off', help: false });
  });

  it('refuses a value given to a switch, naming it', () => {
    expect(() => parseFlags(['--compile=on'], flags, [])).toThrow("--compile takes no value, got 'on'");
  });
});

describe('chooseDevice', () => {
  it('returns a registered device at once and explains one that is not there', async () => {
    expect((await chooseDevice('cpu')).toString()).toBe('cpu');
    expect((await chooseDevice('auto')).type).toBe('cpu'); // the only backend this test registers
    await expect(chooseDevice('cuda')).rejects.toThrow("--device cuda: cuda is unavailable (no backend registered for it in this program); try --device auto or --device cpu");
  });
});

describe('Progress', () => {
  it('redraws one line on a terminal, at most ~10 times a second but always at the end, and clears it for a summary', () => {
    const { stream, written } = recorder(true);
    const progress = new Progress(stream);
    progress.update('train', 1, 4, 'loss 2.0');
    progress.update('train', 2, 4, 'loss 1.5'); // within 100 ms of the last redraw: skipped
    progress.update('train', 4, 4, 'loss 1.0');
    progress.line('done');
    expect(written()).toBe(
      `\rtrain ${'█'.repeat(8)}${'░'.repeat(22)} 1/4  loss 2.0 ` + `\rtrain ${'█'.repeat(30)} 4/4  loss 1.0 ` + '\r\x1b[2Kdone\n',
    );
  });

  it('writes only the summary lines to a file or CI log', () => {
    const { stream, written } = recorder(false);
    const progress = new Progress(stream);
    progress.update('train', 1, 4, 'loss 2.0');
    progress.line('step 1');
    expect(written()).toBe('step 1\n');
  });
});
