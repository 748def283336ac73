// A dependency-free SVG chart: training loss per step and test accuracy per epoch.

export interface ChartData {
  readonly stepLosses: readonly number[];
  /** Test accuracy (0..1) after each epoch, with the step count at that point. */
  readonly epochs: readonly { readonly step: number; readonly testAccuracy: number }[];
}

const W = 720;
const H = 360;
const PAD = 48;

function polyline(points: readonly [number, number][], color: string): string {
  const d = points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
  return `<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${d}"/>`;
}

/** Moving average, so a noisy per-step loss reads as a trend. */
function smooth(values: readonly number[], window: number): number[] {
  const out: number[] = [];
  let sum = 0;
  values.forEach((v, i) => {
    sum += v;
    if (i >= window) sum -= values[i - window]!;
    out.push(sum / Math.min(i + 1, window));
  });
  return out;
}

export function renderChart({ stepLosses, epochs }: ChartData): string {
  const steps = Math.max(stepLosses.length, 1);
  const losses = smooth(stepLosses, 20);
  const maxLoss = Math.max(...losses, 1e-6);
  const x = (step: number) => PAD + ((W - 2 * PAD) * step) / steps;
  const yLoss = (v: number) => H - PAD - ((H - 2 * PAD) * v) / maxLoss;
  // Accuracy climbs fast: zoom its axis to [floor of the lowest, 100%] in 10% steps.
  const accFloor = Math.max(0, Math.floor((Math.min(1, ...epochs.map((e) => e.testAccuracy)) - 0.02) * 10) / 10);
  const yAcc = (v: number) => H - PAD - ((H - 2 * PAD) * (v - accFloor)) / (1 - accFloor);
  const lossLine = polyline(losses.map((v, i) => [x(i + 1), yLoss(v)]), '#1f77b4');
  const accLine = polyline(epochs.map((e) => [x(e.step), yAcc(e.testAccuracy)]), '#d62728');
  const accDots = epochs
    .map((e) => `<circle cx="${x(e.step).toFixed(1)}" cy="${yAcc(e.testAccuracy).toFixed(1)}" r="3" fill="#d62728"><title>${(e.testAccuracy * 100).toFixed(2)}%</title></circle>`)
    .join('');
  const label = (tx: number, ty: number, text: string, anchor = 'start', color = '#333') =>
    `<text x="${tx}" y="${ty}" font-size="12" fill="${color}" text-anchor="${anchor}" font-family="sans-serif">${text}</text>`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<line x1="${PAD}" y1="${H - PAD}" x2="${W - PAD}" y2="${H - PAD}" stroke="#999"/>`,
    `<line x1="${PAD}" y1="${PAD}" x2="${PAD}" y2="${H - PAD}" stroke="#999"/>`,
    `<line x1="${W - PAD}" y1="${PAD}" x2="${W - PAD}" y2="${H - PAD}" stroke="#999"/>`,
    lossLine,
    accLine,
    accDots,
    label(PAD, PAD - 12, `training loss (20-step average), max ${maxLoss.toFixed(3)}`, 'start', '#1f77b4'),
    label(W - PAD, PAD - 12, `test accuracy after each epoch (${Math.round(accFloor * 100)}–100%)`, 'end', '#d62728'),
    label(W / 2, H - PAD + 32, `step (1–${steps})`, 'middle'),
    label(PAD - 6, H - PAD + 4, '0', 'end'),
    label(W - PAD + 6, PAD + 4, '100%', 'start', '#d62728'),
    label(W - PAD + 6, H - PAD + 4, `${Math.round(accFloor * 100)}%`, 'start', '#d62728'),
    '</svg>',
  ].join('\n');
}
