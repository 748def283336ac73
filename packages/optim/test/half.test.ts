import { describe, expect, it } from 'vitest';
import { bfloat16, float16, manualSeed, randn, type DType, type Tensor } from '@core/tensor';
import { Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, RAdam, RMSprop, SGD } from '../src/index.js';
import { expectClose, param, setGrad, values } from './helpers.js';

type Make = (p: Tensor[]) => { step(): unknown; state: Map<Tensor, object> };

const OPTIMIZERS: Array<[string, Make]> = [
  ['SGD momentum + nesterov + wd', (ps) => new SGD(ps, { lr: 0.05, momentum: 0.9, nesterov: true, weightDecay: 1e-2 })],
  ['Adam amsgrad + wd', (ps) => new Adam(ps, { lr: 0.01, amsgrad: true, weightDecay: 1e-2 })],
  ['AdamW', (ps) => new AdamW(ps, { lr: 0.01 })],
  ['RMSprop centered + momentum + wd', (ps) => new RMSprop(ps, { lr: 0.01, momentum: 0.9, centered: true, weightDecay: 1e-2 })],
  ['Adagrad', (ps) => new Adagrad(ps, { lr: 0.05, lrDecay: 0.01 })],
  ['Adadelta', (ps) => new Adadelta(ps, { weightDecay: 1e-2 })],
  ['Adamax', (ps) => new Adamax(ps, { lr: 0.01 })],
  ['NAdam', (ps) => new NAdam(ps, { lr: 0.01 })],
  ['RAdam', (ps) => new RAdam(ps, { lr: 0.01 })],
];

const TOLERANCE: Array<[DType, number]> = [[float16, 2e-2], [bfloat16, 1e-1]];

function finite(t: Tensor): boolean {
  return values(t.float()).every(Number.isFinite);
}

describe('half-precision parameters: state in the param dtype', () => {
  for (const [dtype, tol] of TOLERANCE) {
    for (const [name, make] of OPTIMIZERS) {
      it(`${dtype.name} ${name}: runs, keeps state in ${dtype.name}, stays finite and tracks a float32 run`, () => {
        manualSeed(3);
        const init = randn([32]).to(dtype).float(); // representable in both dtypes
        const half = init.to(dtype);
        const full = init.clone();
        const optHalf = make([half]);
        const optFull = make([full]);
        for (let t = 0; t < 30; t++) {
          const g = full.mul(3).add(t).sin(); // one gradient for both runs
          full.grad = g;
          half.grad = g.to(dtype);
          optFull.step();
          optHalf.step();
        }
        expect(half.dtype).toBe(dtype);
        const state = optHalf.state.get(half) as Record<string, unknown>;
        const tensors = Object.values(state).filter((v): v is Tensor => typeof v === 'object' && v !== null);
        expect(tensors.length).toBeGreaterThan(0);
        for (const s of tensors) {
          expect(s.dtype).toBe(dtype);
          expect(finite(s)).toBe(true);
        }
        expect(finite(half)).toBe(true);
        expectClose(values(half.float()), values(full), tol);
        expect(values(half.float())).not.toEqual(values(init)); // it moved
      });
    }
  }

  it('float16 OPT-9 worked values round to the nearest float16', () => {
    const p = param([1], float16);
    const opt = new Adam([p], { lr: 0.1 });
    setGrad(p, [0.5]);
    opt.step();
    expect(values(p)).toEqual([0.89990234375]); // float16(0.900000002)
    expect(opt.state.get(p)!.expAvg.dtype).toBe(float16);
  });

  it('the SGD momentum buffer takes the param dtype', () => {
    const p = param([1, 2], bfloat16);
    const opt = new SGD([p], { lr: 0.1, momentum: 0.9 });
    setGrad(p, [0.5, 0.5]);
    opt.step();
    expect(opt.state.get(p)!.momentumBuffer!.dtype).toBe(bfloat16);
    expect(p.dtype).toBe(bfloat16);
  });
});
