import { describe, expect, it } from 'vitest';
import { renderLossChart } from '../src/loss-chart.js';

describe('the loss chart', () => {
  const svg = renderLossChart({
    stepLosses: [4, 3, 2, 2],
    evals: [{ step: 0, valLoss: 4.5 }, { step: 2, valLoss: 2.5 }, { step: 4, valLoss: 2.25 }],
    baseline: 3,
  });

  it('draws the smoothed training loss, one dot per validation estimate and the dashed unigram baseline', () => {
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect([...svg.matchAll(/<title>(.*?)<\/title>/g)].map((m) => m[1])).toEqual(['step 0: 4.5000', 'step 2: 2.5000', 'step 4: 2.2500']);
    expect(svg).toContain('unigram baseline 3.000 nats');
    expect(svg).toContain('step (1–4)');
  });

  it('scales the loss axis from 0 to just above the largest loss shown', () => {
    // Height 360, margins 48: y = 312 − 264·loss/top with top = 4.5·1.05.
    const y = (loss: number) => (312 - (264 * loss) / (4.5 * 1.05)).toFixed(1);
    expect(svg).toContain(`<line x1="48" y1="${y(3)}" x2="672" y2="${y(3)}"`);
    expect(svg).toContain(`<circle cx="48.0" cy="${y(4.5)}"`);
    expect(svg).toContain(`<circle cx="672.0" cy="${y(2.25)}"`);
  });
});

describe('the loss chart of a fine-tuning run', () => {
  it('names its baseline as told: the loss before fine-tuning, not a unigram entropy', () => {
    const svg = renderLossChart({ stepLosses: [2, 1], evals: [{ step: 0, valLoss: 2.5 }], baseline: 2.5, baselineLabel: 'before fine-tuning' });
    expect(svg).toContain('before fine-tuning 2.500 nats');
    expect(svg).not.toContain('unigram');
  });
});
