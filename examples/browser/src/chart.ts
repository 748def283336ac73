// A live SVG chart: loss per step (raw, faint; moving average, solid) on the left axis and test
// accuracy at each evaluation (dots) on the right axis, 0–100%.
export interface ChartData {
  readonly losses: readonly number[];
  readonly accuracy: readonly { readonly step: number; readonly value: number }[];
  readonly totalSteps: number;
}

const W = 720;
const H = 320;
const PAD = 44;
const NS = 'http://www.w3.org/2000/svg';

function smooth(values: readonly number[], window: number): number[] {
  let sum = 0;
  return values.map((v, i) => {
    sum += v;
    if (i >= window) sum -= values[i - window]!;
    return sum / Math.min(i + 1, window);
  });
}

export function renderChart(host: HTMLElement, { losses, accuracy, totalSteps }: ChartData): void {
  const steps = Math.max(totalSteps, losses.length, 1);
  const maxLoss = Math.max(...losses.filter(Number.isFinite), 1e-6);
  const x = (step: number) => PAD + ((W - 2 * PAD) * step) / steps;
  const yLoss = (v: number) => H - PAD - ((H - 2 * PAD) * Math.min(v, maxLoss)) / maxLoss;
  const yAcc = (v: number) => H - PAD - (H - 2 * PAD) * v;
  const line = (pts: [number, number][]) => pts.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(' ');
  const text = (tx: number, ty: number, s: string, anchor = 'start', color = '#333') =>
    `<text x="${tx}" y="${ty}" font-size="11" fill="${color}" text-anchor="${anchor}">${s}</text>`;
  const last = losses.at(-1);
  const lastAcc = accuracy.at(-1);
  host.innerHTML = [
    `<svg xmlns="${NS}" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" data-loss-points="${losses.length}" data-acc-points="${accuracy.length}">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<line x1="${PAD}" y1="${H - PAD}" x2="${W - PAD}" y2="${H - PAD}" stroke="#999"/>`,
    `<line x1="${PAD}" y1="${PAD}" x2="${PAD}" y2="${H - PAD}" stroke="#999"/>`,
    `<line x1="${W - PAD}" y1="${PAD}" x2="${W - PAD}" y2="${H - PAD}" stroke="#999"/>`,
    text(PAD - 4, PAD + 4, maxLoss.toFixed(2), 'end', '#1f77b4'), text(PAD - 4, H - PAD, '0', 'end', '#1f77b4'),
    text(W - PAD + 4, PAD + 4, '100%', 'start', '#d62728'), text(W - PAD + 4, H - PAD, '0%', 'start', '#d62728'),
    text(W / 2, H - 12, `step (of ${steps})`, 'middle'),
    text(PAD, 20, `loss${last === undefined ? '' : ` ${last.toFixed(4)}`}`, 'start', '#1f77b4'),
    text(W - PAD, 20, `test accuracy${lastAcc ? ` ${(lastAcc.value * 100).toFixed(1)}%` : ''}`, 'end', '#d62728'),
    `<polyline class="loss-raw" fill="none" stroke="#1f77b4" stroke-opacity="0.25" points="${line(losses.map((v, i) => [x(i + 1), yLoss(v)]))}"/>`,
    `<polyline class="loss" fill="none" stroke="#1f77b4" stroke-width="1.8" points="${line(smooth(losses, 10).map((v, i) => [x(i + 1), yLoss(v)]))}"/>`,
    `<polyline class="acc" fill="none" stroke="#d62728" stroke-width="1.5" points="${line(accuracy.map((a) => [x(a.step), yAcc(a.value)]))}"/>`,
    ...accuracy.map((a) => `<circle class="acc-point" cx="${x(a.step).toFixed(1)}" cy="${yAcc(a.value).toFixed(1)}" r="3" fill="#d62728"><title>step ${a.step}: ${(a.value * 100).toFixed(2)}%</title></circle>`),
    '</svg>',
  ].join('');
}
