import '@core/backend-cpu';
import { manualSeed, noGrad, tensor, int32, type Tensor } from '@core/tensor';
import { describe, expect, it } from 'vitest';
import { GPT, paramGroups, type GPTConfig } from '../src/model.js';

const tiny: GPTConfig = { vocabSize: 7, blockSize: 5, nLayer: 2, nHead: 2, nEmbd: 8, dropout: 0, bias: true };

/** Every parameter set to 0.3·sin(0.37·k + h), h the sum of its name's char codes mod 97 (test/reference/gpt_reference.py's fill). */
function fillByName(model: GPT): void {
  noGrad(() => {
    for (const [name, p] of model.namedParameters()) {
      const h = [...name].reduce((s, c) => s + c.charCodeAt(0), 0) % 97;
      p.copy_(tensor(Float32Array.from({ length: p.numel() }, (_, k) => 0.3 * Math.sin(0.37 * k + h))).view(p.shape));
    }
  });
}

const close = (actual: number, expected: number, rtol = 1e-5) => expect(Math.abs(actual - expected)).toBeLessThanOrEqual(rtol * Math.abs(expected) + 1e-7);

describe("the GPT (nanoGPT's model.py)", () => {
  it("computes PyTorch's logits, loss and gradients (tied head included) for the same weights", async () => {
    const model = new GPT(tiny);
    fillByName(model);
    const idx = tensor([[0, 3, 6, 2, 1], [5, 5, 4, 0, 2]], { dtype: int32 });
    const targets = tensor([[3, 6, 2, 1, 4], [5, 4, 0, 2, 6]], { dtype: int32 });
    const logits = model.forward(idx);
    expect(logits.shape).toEqual([2, 5, 7]);
    const loss = model.loss(idx, targets);
    loss.backward();
    // Reference values: python3 test/reference/gpt_reference.py (PyTorch 1.13, float32); float32 rounding allows 1e-5 relative.
    close(await loss.item(), 1.9749435186386108);
    const last = Array.from(await logits.select(0, 1).select(0, 4).data());
    [-0.428007, 0.351323, -0.263086, 0.166198, -0.063843, -0.04061, 0.143729].forEach((v, i) => expect(last[i]).toBeCloseTo(v, 5));
    const params = Object.fromEntries(model.namedParameters());
    const gradNorm = (name: string) => params[name]!.grad!.norm().item();
    close(await gradNorm('wte.weight'), 0.18366043269634247); // the embedding's and the head's gradients, summed
    close(await gradNorm('wpe.weight'), 0.036050669848918915);
    close(await gradNorm('h.0.attn.cAttn.weight'), 0.004932320211082697);
    close(await gradNorm('h.1.mlp.cProj.bias'), 0.026240574195981026);
    close(await gradNorm('lnF.weight'), 0.23830515146255493);
  });

  it('ties the head to the token embedding: one Parameter, listed once, saved under both names', () => {
    const model = new GPT(tiny);
    expect(model.lmHead.weight).toBe(model.wte.weight);
    const names = model.namedParameters().map(([n]) => n);
    expect(names).toContain('wte.weight');
    expect(names).not.toContain('lmHead.weight');
    expect(Object.keys(model.stateDict())).toEqual(expect.arrayContaining(['wte.weight', 'lmHead.weight']));
    expect(model.numParams()).toBe(model.parameters().reduce((n, p) => n + p.numel(), 0) - 5 * 8);
  });

  it("initialises as nanoGPT: weights N(0, 0.02), residual projections N(0, 0.02/√(2·nLayer)), biases 0, LayerNorm 1 and 0", async () => {
    manualSeed(0);
    const model = new GPT({ vocabSize: 64, blockSize: 64, nLayer: 4, nHead: 4, nEmbd: 128, dropout: 0, bias: true });
    const std = async (t: Tensor) => t.std().item();
    // 65,536 draws (cAttn: 49,152): the sample std is within 2% of the true one.
    expect(await std(model.h[0]!.mlp.cFc.weight)).toBeCloseTo(0.02, 3);
    expect(await std(model.h[1]!.attn.cAttn.weight)).toBeCloseTo(0.02, 3);
    expect(await std(model.wte.weight)).toBeCloseTo(0.02, 3);
    const residual = 0.02 / Math.sqrt(8);
    for (const block of model.h) {
      expect(Math.abs((await std(block.mlp.cProj.weight)) / residual - 1)).toBeLessThan(0.02);
      expect(Math.abs((await std(block.attn.cProj.weight)) / residual - 1)).toBeLessThan(0.05); // 16,384 draws
      expect(await block.attn.cAttn.bias!.abs().max().item()).toBe(0);
      expect(await block.ln1.weight!.min().item()).toBe(1);
      expect(await block.ln1.bias!.abs().max().item()).toBe(0);
    }
  });

  it('is causal: the logits at a position do not depend on later tokens', async () => {
    manualSeed(1);
    const model = new GPT(tiny);
    const a = model.forward(tensor([[1, 2, 3, 4, 5]], { dtype: int32 }));
    const b = model.forward(tensor([[1, 2, 3, 0, 6]], { dtype: int32 }));
    expect(await a.narrow(1, 0, 3).data()).toEqual(await b.narrow(1, 0, 3).data());
    expect(await a.narrow(1, 3, 1).data()).not.toEqual(await b.narrow(1, 3, 1).data());
  });

  it('refuses a context longer than blockSize, and a width that the heads do not divide', () => {
    const model = new GPT(tiny);
    expect(() => model.forward(tensor([[1, 2, 3, 4, 5, 6]], { dtype: int32 }))).toThrow(/T ≤ blockSize 5, got \[1, 6\]/);
    expect(() => new GPT({ ...tiny, nHead: 3 })).toThrow(/nEmbd \(8\) must be a multiple of nHead \(3\)/);
  });

  it("splits AdamW's parameters by nanoGPT's rule: ≥2-D ones decay, biases and LayerNorm weights do not", () => {
    const model = new GPT(tiny);
    const [decay, noDecay] = paramGroups(model, 0.1);
    const byTensor = new Map(model.namedParameters().map(([name, p]) => [p, name]));
    const names = (group: typeof decay) => [...(group.params as Iterable<Tensor>)].map((p) => byTensor.get(p)).sort();
    const perBlock = (i: number, parts: string[]) => parts.map((p) => `h.${i}.${p}`);
    expect(decay.weightDecay).toBe(0.1);
    expect(noDecay.weightDecay).toBe(0);
    expect(names(decay)).toEqual([
      ...[0, 1].flatMap((i) => perBlock(i, ['attn.cAttn.weight', 'attn.cProj.weight', 'mlp.cFc.weight', 'mlp.cProj.weight'])),
      'wpe.weight', 'wte.weight', // the tied head weight once, under the embedding's name
    ].sort());
    expect(names(noDecay)).toEqual([
      ...[0, 1].flatMap((i) => perBlock(i, ['attn.cAttn.bias', 'attn.cProj.bias', 'ln1.bias', 'ln1.weight', 'ln2.bias', 'ln2.weight', 'mlp.cFc.bias', 'mlp.cProj.bias'])),
      'lnF.bias', 'lnF.weight',
    ].sort());
  });
});
