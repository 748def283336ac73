// nn.ModuleList, nn.ModuleDict, nn.ParameterList and nn.ParameterDict: registration as PyTorch's
// (parameters(), namedParameters(), stateDict() keys, to(), train()/eval(), zeroGrad), the list
// and dict methods, renumbering, printing and errors.
import { describe, expect, it } from 'vitest';
import { float64, ones, randn, tensor, TensorError, zeros, type Tensor } from '@core/tensor';
import { nn } from '../src/index.js';
import { FAKE, values } from './helpers.js';

/** A model that keeps its blocks in containers, as PyTorch programs do. */
class Stack extends nn.Module {
  layers = new nn.ModuleList([new nn.Linear(3, 4), new nn.ReLU(), new nn.Linear(4, 2)]);
  heads = new nn.ModuleDict({ cls: new nn.Linear(2, 5), reg: new nn.Linear(2, 1) });
  scales = new nn.ParameterList([ones([2]), zeros([2])]);
  extras = new nn.ParameterDict({ temperature: ones([]) });

  forward(x: Tensor): Tensor {
    let h = x;
    for (const layer of this.layers) h = layer.forward(h) as Tensor;
    const z = h.mul(this.scales.at(0)).add(this.scales[1]!);
    const both = (this.heads.get('cls').forward(z) as Tensor).sum(-1, true).add(this.heads.get('reg').forward(z) as Tensor);
    return both.mul(this.extras.get('temperature')!);
  }
}

describe('containers register what they hold like PyTorch\'s', () => {
  it('parameters, namedParameters and stateDict keys', () => {
    const model = new Stack();
    const names = ['layers.0.weight', 'layers.0.bias', 'layers.2.weight', 'layers.2.bias', 'heads.cls.weight', 'heads.cls.bias', 'heads.reg.weight', 'heads.reg.bias', 'scales.0', 'scales.1', 'extras.temperature'];
    expect(model.namedParameters().map(([n]) => n)).toEqual(names);
    expect(Object.keys(model.stateDict())).toEqual(names);
    expect(model.parameters()).toHaveLength(11);
    expect(model.parameters().every((p) => p.requiresGrad)).toBe(true);
    expect(model.namedModules().map(([n]) => n)).toEqual(['', 'layers', 'layers.0', 'layers.1', 'layers.2', 'heads', 'heads.cls', 'heads.reg', 'scales', 'extras']);
    expect(model.getSubmodule('layers.2')).toBe(model.layers.at(2));
  });

  it('to(device), train()/eval() and zeroGrad reach everything inside', () => {
    const model = new Stack();
    const params = model.parameters();
    model.forward(randn([4, 3])).sum().backward();
    expect(params.every((p) => p.grad !== null)).toBe(true);
    model.zeroGrad();
    expect(params.every((p) => p.grad === null)).toBe(true);
    model.eval();
    expect(model.modules().every((m) => !m.training)).toBe(true);
    model.train();
    expect(model.heads.get('reg').training).toBe(true);
    model.to(FAKE);
    expect(model.parameters().every((p) => p.device.type === FAKE)).toBe(true);
    expect(model.parameters()).toEqual(params); // the same objects, moved in place
    model.to(float64);
    expect(model.scales.at(1).dtype).toBe(float64);
  });

  it('loadStateDict fills list and dict entries in place', () => {
    const a = new Stack();
    const b = new Stack();
    b.loadStateDict(a.stateDict());
    expect(values(b.layers.at(0).stateDict().weight!)).toEqual(values(a.layers.at(0).stateDict().weight!));
    expect(values(b.extras.get('temperature')!)).toEqual([1]);
  });
});

describe('nn.ModuleList', () => {
  const lin = (n: number) => new nn.Linear(n, n);

  it('index access, length, iteration, append, extend, insert, pop, set, renumbering', () => {
    const [a, b, c, d] = [lin(1), lin(2), lin(3), lin(4)];
    const list = new nn.ModuleList([a, b]);
    expect(list.length).toBe(2);
    expect(list[0]).toBe(a);
    expect(list.at(-1)).toBe(b);
    expect(list.append(c)).toBe(list);
    list.extend([d]);
    expect([...list]).toEqual([a, b, c, d]);
    list.insert(1, c);
    expect([...list]).toEqual([a, c, b, c, d]);
    expect(list.pop(0)).toBe(a);
    expect([...list]).toEqual([c, b, c, d]);
    expect(list[0]).toBe(c);
    expect(list.pop()).toBe(d);
    list.set(-1, a);
    expect([...list]).toEqual([c, b, a]);
    // A module held twice is one child, as in PyTorch; its parameters are listed once.
    expect(Object.keys(list.stateDict())).toEqual(['0.weight', '0.bias', '1.weight', '1.bias', '2.weight', '2.bias']);
    list.insert(-10, d);
    expect(list[0]).toBe(d);
    list.insert(99, d);
    expect(list.at(-1)).toBe(d);
    expect(Object.keys(list.stateDict())).toContain('4.weight');
  });

  it('slice and concat return new lists over the same modules', () => {
    const mods = [lin(1), lin(2), lin(3)];
    const list = new nn.ModuleList(mods);
    const tail = list.slice(1);
    expect(tail).toBeInstanceOf(nn.ModuleList);
    expect([...tail]).toEqual(mods.slice(1));
    expect([...list.slice(-2, -1)]).toEqual([mods[1]]);
    expect([...list.concat([mods[0]!])]).toEqual([...mods, mods[0]]);
    expect(list.length).toBe(3);
  });

  it('prints its children; has no forward; errors name the problem', () => {
    const list = new nn.ModuleList([new nn.ReLU(), new nn.Linear(1, 2, false)]);
    expect(list.toString()).toBe('ModuleList(\n  (0): ReLU()\n  (1): Linear(inFeatures=1, outFeatures=2, bias=false)\n)');
    expect(() => list.forward()).toThrow(TensorError);
    expect(() => list.forward()).toThrow('ModuleList has no forward()');
    expect(() => list.at(2)).toThrow('ModuleList: index 2 is out of range for 2 entries');
    expect(() => list.append(tensor([1]) as never)).toThrow(TypeError);
    expect(() => list.extend(new nn.ReLU() as never)).toThrow('ModuleList.extend should be called with an iterable');
  });
});

describe('nn.ModuleDict', () => {
  it('get, set, has, delete, pop, update, keys/values/items, iteration over keys, insertion order', () => {
    const [enc, dec, head] = [new nn.Linear(2, 2), new nn.Linear(2, 2), new nn.Linear(2, 1)];
    const dict = new nn.ModuleDict({ encoder: enc, decoder: dec });
    expect(dict.length).toBe(2);
    expect(dict.get('encoder')).toBe(enc);
    expect(dict.has('decoder')).toBe(true);
    expect(dict.has('training')).toBe(false);
    dict.set('head', head);
    expect(dict.keys()).toEqual(['encoder', 'decoder', 'head']);
    expect([...dict]).toEqual(['encoder', 'decoder', 'head']);
    expect(dict.values()).toEqual([enc, dec, head]);
    expect(dict.items()).toEqual([['encoder', enc], ['decoder', dec], ['head', head]]);
    expect(dict.pop('decoder')).toBe(dec);
    dict.delete('encoder');
    expect(dict.keys()).toEqual(['head']);
    dict.update([['a', enc], ['b', dec]]);
    expect(Object.keys(dict.stateDict())).toEqual(['head.weight', 'head.bias', 'a.weight', 'a.bias', 'b.weight', 'b.bias']);
    dict.clear();
    expect(dict.length).toBe(0);
    expect(dict.parameters()).toEqual([]);
  });

  it('errors: a missing key, a key that is an attribute, a key with a dot, a non-module', () => {
    const dict = new nn.ModuleDict({ a: new nn.ReLU() });
    expect(() => dict.get('b')).toThrow("ModuleDict: no module under key 'b' (keys: a)");
    expect(() => dict.pop('b')).toThrow("no entry under key 'b'");
    expect(() => dict.set('training', new nn.ReLU())).toThrow("attribute 'training' already exists");
    expect(() => dict.set('a.b', new nn.ReLU())).toThrow('module name can\'t contain "."');
    expect(() => dict.set('c', tensor([1]) as never)).toThrow(TypeError);
    expect(() => new nn.ModuleDict([['a']] as never)).toThrow('update sequence element #0 should be a [key, value] pair');
  });
});

describe('nn.ParameterList and nn.ParameterDict', () => {
  it('tensors become parameters sharing their memory; parameters stay themselves', () => {
    const t = zeros([2]);
    const p = nn.Parameter(ones([3]));
    const list = new nn.ParameterList([t, p]);
    expect(nn.isParameter(list.at(0))).toBe(true);
    expect(list.at(0)).not.toBe(t);
    expect(list.at(1)).toBe(p);
    list.at(0).detach().fill_(5);
    expect(values(t)).toEqual([5, 5]);
    list.append(ones([1])).extend([ones([4])]);
    expect(list.length).toBe(4);
    expect(list.namedParameters().map(([n, q]) => [n, q.shape])).toEqual([['0', [2]], ['1', [3]], ['2', [1]], ['3', [4]]]);
    list.set(-1, zeros([5]));
    expect(list[3]!.shape).toEqual([5]);
    expect(list.slice(1, 3)).toBeInstanceOf(nn.ParameterList);
    expect([...list.slice(1, 3)]).toEqual([list.at(1), list.at(2)]);
  });

  it('ParameterDict: get with a default, set, has, pop, update, keys/values/items', () => {
    const dict = new nn.ParameterDict({ alpha: ones([2]) });
    const beta = nn.Parameter(zeros([3]));
    dict.set('beta', beta);
    expect(dict.get('beta')).toBe(beta);
    expect(dict.get('gamma')).toBeNull();
    const fallback = ones([1]);
    expect(dict.get('gamma', fallback)).toBe(fallback);
    expect(dict.keys()).toEqual(['alpha', 'beta']);
    expect(dict.items().map(([k, v]) => [k, v.shape])).toEqual([['alpha', [2]], ['beta', [3]]]);
    expect(dict.pop('alpha').shape).toEqual([2]);
    dict.update({ gamma: ones([4]) });
    expect(Object.keys(dict.stateDict())).toEqual(['beta', 'gamma']);
    expect(() => dict.pop('alpha')).toThrow("ParameterDict: no entry under key 'alpha'");
    expect(() => dict.set('delta', [1, 2] as never)).toThrow('ParameterDict: expected a Tensor, got object');
  });

  it('print one line per parameter as PyTorch does', () => {
    const list = new nn.ParameterList([zeros([3, 4]), zeros([5], { dtype: float64 })]);
    expect(list.toString()).toBe('ParameterList(\n    (0): Parameter containing: [float32 of size 3x4]\n    (1): Parameter containing: [float64 of size 5]\n)');
    // One line and no children: inline, as PyTorch prints it.
    const dict = new nn.ParameterDict({ w: zeros([2]) }).to(FAKE);
    expect(dict.toString()).toBe('ParameterDict(  (w): Parameter containing: [float32 of size 2 (fake:0)])');
    expect(new nn.ParameterList().toString()).toBe('ParameterList()');
  });
});

describe('Module.toString follows PyTorch\'s layout', () => {
  it('a one-line extraRepr with children goes on its own line', () => {
    class Block extends nn.Module {
      fc = new nn.Linear(1, 1, false);
      forward(x: Tensor): Tensor {
        return this.fc.forward(x);
      }
      override extraRepr(): string {
        return 'scale=2';
      }
    }
    expect(new Block().toString()).toBe('Block(\n  scale=2\n  (fc): Linear(inFeatures=1, outFeatures=1, bias=false)\n)');
  });
});
