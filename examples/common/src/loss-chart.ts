// The run's loss curves as a dependency-free SVG: the training loss of every step (smoothed), the
// validation estimates, and a baseline the validation loss should fall well below (the unigram
// entropy of a text for a model trained from scratch, the loss before fine-tuning for a pretrained one).

/** What the chart shows. */
export interface LossChart {
  /** Every step's training loss. */
  readonly stepLosses: readonly number[];
  /** Validation loss estimates with the step they were taken after. */
  readonly evals: readonly { readonly step: number; readonly valLoss: number }[];
  /** The reference loss drawn as a dashed line, in nats. */
  readonly baseline: number;
  /** What the baseline is, as its legend says it ('unigram baseline' unless told). */
  readonly baselineLabel?: string;
}

const W = 720;
const H = 360;
const PAD = 48;
const TRAIN_COLOR = '#1f77b4';
const VAL_COLOR = '#d62728';
const BASELINE_COLOR = '#7f7f7f';

/** An exponential moving average (weight `keep` on the past), so a noisy per-step loss reads as a trend. */
function ema(values: readonly number[], keep: number): number[] {
  let average = values[0] ?? 0;
  return values.map((v) => (average = keep * average + (1 - keep) * v));
}

function text(x: number, y: number, content: string, color: string, anchor = 'start'): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" font-size="12" fill="${color}" text-anchor="${anchor}" font-family="sans-serif">${content}</text>`;
}

/** The SVG document: loss (nats, from 0 to the largest shown) against step. */
export function renderLossChart({ stepLosses, evals, baseline, baselineLabel = 'unigram baseline' }: LossChart): string {
  const steps = Math.max(stepLosses.length, 1);
  const train = ema(stepLosses, 0.9);
  const top = Math.max(baseline, ...train, ...evals.map((e) => e.valLoss).filter(Number.isFinite)) * 1.05;
  const px = (step: number) => PAD + ((W - 2 * PAD) * step) / steps;
  const py = (loss: number) => H - PAD - ((H - 2 * PAD) * Math.min(loss, top)) / top;
  const path = (points: readonly (readonly [number, number])[]) => points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
  const trainLine = `<polyline fill="none" stroke="${TRAIN_COLOR}" stroke-width="1.5" points="${path(train.map((v, i) => [i + 1, v]))}"/>`;
  const valLine = `<polyline fill="none" stroke="${VAL_COLOR}" stroke-width="1.5" points="${path(evals.map((e) => [e.step, e.valLoss]))}"/>`;
  const valDots = evals
    .map((e) => `<circle cx="${px(e.step).toFixed(1)}" cy="${py(e.valLoss).toFixed(1)}" r="3" fill="${VAL_COLOR}"><title>step ${e.step}: ${e.valLoss.toFixed(4)}</title></circle>`)
    .join('');
  const baselineLine = `<line x1="${PAD}" y1="${py(baseline).toFixed(1)}" x2="${W - PAD}" y2="${py(baseline).toFixed(1)}" stroke="${BASELINE_COLOR}" stroke-dasharray="6 4"/>`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<line x1="${PAD}" y1="${H - PAD}" x2="${W - PAD}" y2="${H - PAD}" stroke="#999"/>`,
    `<line x1="${PAD}" y1="${PAD}" x2="${PAD}" y2="${H - PAD}" stroke="#999"/>`,
    baselineLine,
    trainLine,
    valLine,
    valDots,
    text(PAD, PAD - 28, 'training loss (moving average)', TRAIN_COLOR),
    text(PAD, PAD - 12, 'validation loss', VAL_COLOR),
    text(W - PAD, PAD - 12, `${baselineLabel} ${baseline.toFixed(3)} nats`, BASELINE_COLOR, 'end'),
    text(W / 2, H - PAD + 32, `step (1–${steps})`, '#333', 'middle'),
    text(PAD - 6, H - PAD + 4, '0', '#333', 'end'),
    text(PAD - 6, PAD + 4, top.toFixed(2), '#333', 'end'),
    '</svg>',
  ].join('\n');
}
