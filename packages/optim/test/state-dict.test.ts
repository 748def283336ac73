import { describe, expect, it } from 'vitest';
import { float16, float32, manualSeed, randn, ShapeError, tensor, type Tensor, ValueError } from '@core/tensor';
import { Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, RAdam, RMSprop, SGD, type Optimizer } from '../src/index.js';
import { FAKE } from './fake-device.js';
import { expectThrowsExactly, param, setGrad, values } from './helpers.js';

type AnyOptimizer = Optimizer<object, object>;

/** A deterministic gradient that depends on the parameter: grad = sin(3p + t). */
function setGrads(params: Tensor[], t: number): void {
  for (const p of params) p.grad = p.mul(3).add(t).sin();
}

function makeParams(): Tensor[] {
  manualSeed(7);
  return [randn([3, 2]), randn([4]), randn([2])].map((t) => { t.requiresGrad = true; return t; });
}

function clones(params: Tensor[]): Tensor[] {
  return params.map((p) => p.detach().clone().requiresGrad_());
}

const bits = (params: Tensor[]) => params.map((p) => Array.from(new Uint32Array(new Float32Array(p.dataSync()).buffer)));

const FACTORIES: Array<[string, (params: Tensor[]) => AnyOptimizer]> = [
  ['SGD nesterov + wd', (ps) => new SGD([{ params: ps.slice(0, 2) }, { params: ps.slice(2), lr: 0.05 }], { lr: 0.1, momentum: 0.9, nesterov: true, weightDecay: 1e-3 })],
  ['Adam amsgrad + wd', (ps) => new Adam([{ params: ps.slice(0, 2) }, { params: ps.slice(2), betas: [0.8, 0.99] }], { lr: 0.01, amsgrad: true, weightDecay: 1e-2 })],
  ['AdamW maximize', (ps) => new AdamW([{ params: ps.slice(0, 1) }, { params: ps.slice(1), lr: 3e-3 }], { lr: 0.01, maximize: true })],
  ['RMSprop centered + momentum', (ps) => new RMSprop([{ params: ps.slice(0, 2) }, { params: ps.slice(2), alpha: 0.9 }], { lr: 0.01, momentum: 0.9, centered: true, weightDecay: 1e-2 })],
  ['Adagrad lrDecay', (ps) => new Adagrad([{ params: ps.slice(0, 2) }, { params: ps.slice(2), lr: 0.05 }], { lr: 0.1, lrDecay: 0.01, initialAccumulatorValue: 0.1 })],
  ['Adadelta maximize', (ps) => new Adadelta([{ params: ps.slice(0, 1) }, { params: ps.slice(1), rho: 0.8 }], { maximize: true, weightDecay: 1e-2 })],
  ['Adamax', (ps) => new Adamax([{ params: ps.slice(0, 2) }, { params: ps.slice(2), betas: [0.8, 0.99] }], { lr: 0.01 })],
  ['NAdam', (ps) => new NAdam([{ params: ps.slice(0, 2) }, { params: ps.slice(2), momentumDecay: 0.01 }], { lr: 0.01, weightDecay: 1e-2 })],
  ['RAdam', (ps) => new RAdam([{ params: ps.slice(0, 2) }, { params: ps.slice(2), lr: 3e-3 }], { lr: 0.01, betas: [0.9, 0.9] })],
];

describe('stateDict / loadStateDict', () => {
  for (const [name, make] of FACTORIES) {
    it(`${name}: a fresh optimizer loaded from a state dict continues bit-identically`, () => {
      const straight = makeParams();
      const optA = make(straight);
      for (let t = 0; t < 6; t++) { setGrads(straight, t); optA.step(); }

      const resumed = makeParams();
      const optB = make(resumed);
      for (let t = 0; t < 3; t++) { setGrads(resumed, t); optB.step(); }
      const sd = optB.stateDict();
      const params = clones(resumed);
      const optC = make(params);
      optC.loadStateDict(sd);
      for (let t = 3; t < 6; t++) { setGrads(params, t); optC.step(); }

      expect(bits(params)).toEqual(bits(straight));

      // Without the loaded state the run differs: the check above is not vacuous.
      const cold = clones(resumed);
      const optD = make(cold);
      for (let t = 3; t < 6; t++) { setGrads(cold, t); optD.step(); }
      expect(bits(cold)).not.toEqual(bits(straight));
    });
  }

  it('has PyTorch\'s layout: state by parameter index, groups listing indices across groups', () => {
    const [a, b, c] = [param([1]), param([2]), param([3])];
    const opt = new Adam([{ params: [a, b] }, { params: [c], lr: 0.1 }], { amsgrad: true });
    setGrad(a, [0.5]);
    setGrad(c, [0.5]);
    opt.step();
    const sd = opt.stateDict();
    expect(Object.keys(sd.state)).toEqual(['0', '2']); // b has no grad, so no state
    expect(Object.keys(sd.state[0]!).sort()).toEqual(['expAvg', 'expAvgSq', 'maxExpAvgSq', 'step']);
    expect(sd.state[2]!.step).toBe(1);
    expect(sd.paramGroups).toEqual([
      { lr: 1e-3, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, amsgrad: true, maximize: false, params: [0, 1] },
      { lr: 0.1, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, amsgrad: true, maximize: false, params: [2] },
    ]);
  });

  it('is a snapshot: later steps and option changes do not show in a saved dict', () => {
    const p = param([1, 2]);
    const opt = new Adam([p], { lr: 0.1 });
    setGrad(p, [0.5, -0.5]);
    opt.step();
    const sd = opt.stateDict();
    const saved = values(sd.state[0]!.expAvg);
    expect(sd.state[0]!.expAvg).not.toBe(opt.state.get(p)!.expAvg);
    opt.step();
    opt.paramGroups[0]!.lr = 1;
    opt.paramGroups[0]!.betas[0] = 0.5;
    expect(values(sd.state[0]!.expAvg)).toEqual(saved);
    expect(sd.state[0]!.step).toBe(1);
    expect(sd.paramGroups[0]).toMatchObject({ lr: 0.1, betas: [0.9, 0.999] });
  });

  it('loading restores the group options and copies the state (the dict stays untouched)', () => {
    const p = param([1]);
    const src = new SGD([p], { lr: 0.1, momentum: 0.9 });
    setGrad(p, [0.5]);
    src.step();
    src.paramGroups[0]!.lr = 0.02;
    const sd = src.stateDict();
    const q = param([1]);
    const dst = new SGD([q], { lr: 0.5 });
    dst.loadStateDict(sd);
    expect(dst.paramGroups[0]).toMatchObject({ lr: 0.02, momentum: 0.9 });
    expect(dst.paramGroups[0]!.params[0]).toBe(q);
    const buf = dst.state.get(q)!.momentumBuffer!;
    expect(buf).not.toBe(sd.state[0]!.momentumBuffer);
    setGrad(q, [0.5]);
    dst.step();
    expect(values(sd.state[0]!.momentumBuffer!)).toEqual([0.5]);
    expect(values(buf)).toEqual([0.949999988079071]); // 0.9·0.5 + 0.5 in float32
  });

  it('loading moves state tensors to the param\'s device, casts floating ones to its dtype, keeps step a number', () => {
    const p = param([1, 2]);
    const src = new Adam([p], { lr: 0.1, amsgrad: true });
    setGrad(p, [0.5, 0.5]);
    src.step();
    const sd = src.stateDict();

    const onFake = tensor([1, 2], { device: FAKE, requiresGrad: true });
    const dstFake = new Adam([onFake]);
    dstFake.loadStateDict(sd);
    const s = dstFake.state.get(onFake)!;
    expect([s.expAvg, s.expAvgSq, s.maxExpAvgSq!].map((t) => String(t.device))).toEqual(['fake:0', 'fake:0', 'fake:0']);
    expect(s.step).toBe(1);
    expect(sd.state[0]!.expAvg.device.type).toBe('cpu'); // the dict itself is unchanged

    const half = param([1, 2], float16);
    const dstHalf = new Adam([half]);
    dstHalf.loadStateDict(sd);
    const h = dstHalf.state.get(half)!;
    expect([h.expAvg.dtype, h.expAvgSq.dtype, h.maxExpAvgSq!.dtype]).toEqual([float16, float16, float16]);
    expect(sd.state[0]!.expAvg.dtype).toBe(float32);
    setGrad(half, [0.5, 0.5]);
    dstHalf.step();
    expect(h.step).toBe(2);
  });

  it('a different number of groups, or a group of another size, is a ValueError', () => {
    const [a, b] = [param([1]), param([2])];
    const sd = new SGD([{ params: [a] }, { params: [b] }]).stateDict();
    expectThrowsExactly(
      () => new SGD([param([1]), param([2])]).loadStateDict(sd),
      ValueError,
      'loaded state dict has a different number of parameter groups (2, this optimizer has 1)',
    );
    expectThrowsExactly(
      () => new SGD([{ params: [param([1])] }, { params: [param([2]), param([3])] }]).loadStateDict(sd),
      ValueError,
      "loaded state dict contains a parameter group that doesn't match the size of optimizer's group (group 1: 1 params saved, 2 here)",
    );
  });

  it('state for an index no group lists is a ValueError; a non-dict is a TypeError; a failed load changes nothing', () => {
    const p = param([1]);
    const opt = new SGD([p], { lr: 0.1, momentum: 0.9 });
    setGrad(p, [0.5]);
    opt.step();
    const sd = opt.stateDict();
    sd.state[5] = { momentumBuffer: param([0]) };
    const fresh = new SGD([param([1])], { lr: 0.3 });
    expectThrowsExactly(() => fresh.loadStateDict(sd), ValueError, 'loaded state dict has state for parameter 5, which none of its parameter groups lists');
    expect(fresh.state.size).toBe(0);
    expect(fresh.paramGroups[0]!.lr).toBe(0.3);
    expect(() => fresh.loadStateDict({} as never)).toThrow(TypeError);
  });

  it('bad options, a bad step or a state tensor of the wrong shape are refused at load, naming the entry, and change nothing', () => {
    const p = param([1, 2]);
    const make = () => new Adam([p], { lr: 0.01 });
    const opt = make();
    setGrad(p, [0.5, -0.5]);
    opt.step();
    const good = opt.stateDict();
    const bad = (edit: (sd: any) => void) => {
      const sd = structuredClone({ ...good, state: {} }) as any;
      sd.state = { 0: { ...good.state[0] } };
      edit(sd);
      return sd;
    };
    const target = make();
    const refused = (edit: (sd: any) => void, cls: new (...a: any[]) => Error, message: string) => {
      expect(() => target.loadStateDict(bad(edit)), message).toThrow(cls);
      expect(() => target.loadStateDict(bad(edit))).toThrow(message);
      expect(target.state.size).toBe(0);
      expect(target.paramGroups[0]!.lr).toBe(0.01);
    };
    refused((sd) => { sd.paramGroups[0].lr = 'abc'; }, ValueError, 'loadStateDict(): parameter group 0: Invalid learning rate: abc');
    refused((sd) => { sd.paramGroups[0].lr = -5; }, ValueError, 'Invalid learning rate: -5');
    refused((sd) => { sd.paramGroups[0].betas = [2, 2]; }, ValueError, 'Invalid beta parameter at index 0: 2');
    refused((sd) => { sd.state[0].step = 'x'; }, ValueError, `parameter 0: 'step' must be a non-negative integer, got "x"`);
    refused((sd) => { sd.state[0].expAvg = param([1, 2, 3]); }, ShapeError, "parameter 0: 'expAvg' has shape [3], but the parameter has shape [2]");
    refused((sd) => { sd.state[0].expAvg = 0.5; }, TypeError, "parameter 0: 'expAvg' must be a tensor, got 0.5");
    refused((sd) => { delete sd.state[0].expAvgSq; }, ValueError, "parameter 0: the state has no 'expAvgSq' (Adam keeps step, expAvg, expAvgSq, maxExpAvgSq)");
    refused((sd) => { sd.state[0].momentumBuffer = sd.state[0].expAvg; }, ValueError, "parameter 0: unknown state key 'momentumBuffer' (Adam keeps step, expAvg, expAvgSq, maxExpAvgSq)");
    // The good dict still loads afterwards.
    target.loadStateDict(good);
    expect(target.state.size).toBe(1);
  });

  it('each optimizer checks its own state keys: NAdam\'s muProduct is a number in (0, 1]', () => {
    const p = param([1, 2]);
    const opt = new NAdam([p]);
    setGrad(p, [0.5, -0.5]);
    opt.step();
    const sd = opt.stateDict();
    const target = new NAdam([param([1, 2])]);
    expect(() => target.loadStateDict({ ...sd, state: { 0: { ...sd.state[0]!, muProduct: 1.5 } } })).toThrow(
      new ValueError("loadStateDict(): parameter 0: 'muProduct' must be in (0, 1], got 1.5"));
    expect(() => target.loadStateDict({ ...sd, state: { 0: { ...sd.state[0]!, expInf: sd.state[0]!.expAvg } } as never })).toThrow(
      /unknown state key 'expInf' \(NAdam keeps step, muProduct, expAvg, expAvgSq\)/);
    expect(target.state.size).toBe(0);
  });

  it('a step saved as a one-element tensor (PyTorch\'s layout) loads as a number and the run goes on', () => {
    const p = param([1, 2]);
    const opt = new Adam([p], { lr: 0.1 });
    setGrad(p, [0.5, -0.5]);
    opt.step();
    const sd = opt.stateDict();
    const q = param([1, 2]);
    const target = new Adam([q], { lr: 0.1 });
    target.loadStateDict({ ...sd, state: { 0: { ...sd.state[0]!, step: tensor([1]) as never } } });
    expect(target.state.get(q)!.step).toBe(1);
    setGrad(q, [0.5, -0.5]);
    target.step();
    expect(target.state.get(q)!.step).toBe(2);
  });
});
