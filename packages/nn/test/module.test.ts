// Module: registration (automatic and explicit), walks, Module.to in place (DEV-8), modes,
// zeroGrad (OPT-1), stateDict / loadStateDict and their errors, device-mismatch reporting.
import { describe, expect, it } from 'vitest';
import {
  DeviceMismatchError, float16, float32, float64, int32, ones, tensor, zeros, type Tensor,
} from '@core/tensor';
import { F, nn } from '../src/index.js';
import { FAKE, values } from './helpers.js';

/** A model written the way a PyTorch user writes one: fields, plus one explicit buffer. */
class Net extends nn.Module {
  fc1 = new nn.Linear(4, 3);
  scale = nn.Parameter(ones([3]));
  cache: Tensor = zeros([2]); // a plain tensor field: state, not a parameter or buffer
  head = new nn.Sequential(new nn.ReLU(), new nn.Linear(3, 2));
  bn = new nn.BatchNorm1d(2);

  constructor() {
    super();
    this.registerBuffer('steps', zeros([], { dtype: int32 }));
    this.registerBuffer('scratch', zeros([3]), false);
  }

  forward(x: Tensor): Tensor {
    return this.bn.forward(this.head.forward(this.fc1.forward(x).mul(this.scale)));
  }
}

describe('registration', () => {
  it('fields holding nn.Parameter tensors and Modules register themselves, in field order', () => {
    const net = new Net();
    expect(net.namedParameters().map(([n]) => n)).toEqual(['scale', 'fc1.weight', 'fc1.bias', 'head.1.weight', 'head.1.bias', 'bn.weight', 'bn.bias']);
    expect(net.parameters()).toHaveLength(7);
    expect(net.namedBuffers().map(([n]) => n)).toEqual(['steps', 'scratch', 'bn.running_mean', 'bn.running_var', 'bn.num_batches_tracked']);
    expect(net.namedChildren().map(([n]) => n)).toEqual(['fc1', 'head', 'bn']);
    expect(net.namedModules().map(([n]) => n)).toEqual(['', 'fc1', 'head', 'head.0', 'head.1', 'bn']);
    expect(net.modules()[0]).toBe(net);
    expect(net.getSubmodule('head.1')).toBe(net.head.at(1));
    expect(net.parameters(false)).toEqual([net.scale]);
  });

  it('stateDict: own params, persistent buffers, then children; detached views of the same memory', () => {
    const net = new Net();
    const sd = net.stateDict();
    expect(Object.keys(sd)).toEqual([
      'scale', 'steps', 'fc1.weight', 'fc1.bias', 'head.1.weight', 'head.1.bias',
      'bn.weight', 'bn.bias', 'bn.running_mean', 'bn.running_var', 'bn.num_batches_tracked',
    ]);
    expect(sd['fc1.weight']).not.toBe(net.fc1.weight);
    expect(sd['fc1.weight']!.requiresGrad).toBe(false);
    net.fc1.weight.grad = null;
    sd['scale']!.fill_(5); // shares memory
    expect(values(net.scale)).toEqual([5, 5, 5]);
    expect(net.stateDict({ keepVars: true })['fc1.weight']).toBe(net.fc1.weight);
    expect(Object.keys(net.stateDict({ prefix: 'model.' }))[0]).toBe('model.scale');
  });

  it('explicit registration checks its arguments', () => {
    class M extends nn.Module {
      forward(x: Tensor): Tensor { return x; }
    }
    const m = new M();
    m.registerParameter('w', nn.Parameter(zeros([2])));
    m.registerParameter('absent', null);
    m.registerModule('sub', new nn.ReLU());
    expect(m.namedParameters().map(([n]) => n)).toEqual(['w']);
    expect(() => m.registerParameter('p', zeros([2]))).toThrow(
      "cannot assign 'Tensor(shape=[2], dtype=float32, device=cpu)' as parameter 'p' (nn.Parameter or null expected): wrap it as nn.Parameter(t)",
    );
    expect(() => m.registerParameter('a.b', nn.Parameter(zeros([1])))).toThrow('parameter name can\'t contain ".", got "a.b"');
    expect(() => m.registerBuffer('', zeros([1]))).toThrow('buffer name can\'t be empty string ""');
    expect(() => m.registerBuffer('forward', zeros([1]))).toThrow("cannot register buffer 'forward': attribute 'forward' already exists");
    expect(() => m.registerBuffer('sub', zeros([1]))).toThrow("attribute 'sub' already exists");
    expect(() => m.registerModule('w', new nn.ReLU())).toThrow("attribute 'w' already exists");
  });

  it('nn.Parameter: a new leaf over the same memory that requires grad', () => {
    const t = zeros([2]);
    const p = nn.Parameter(t);
    expect(p).not.toBe(t);
    expect(p.requiresGrad).toBe(true);
    expect(p.isLeaf).toBe(true);
    expect(nn.isParameter(p)).toBe(true);
    expect(nn.isParameter(t)).toBe(false);
    t.fill_(3);
    expect(values(p)).toEqual([3, 3]);
    expect(nn.Parameter(zeros([1], { dtype: int32 }), false).requiresGrad).toBe(false);
    expect(() => nn.Parameter(zeros([1], { dtype: int32 }))).toThrow('only Tensors of floating point dtype can require gradients');
  });
});

describe('Module.to moves parameters and buffers in place (DEV-8)', () => {
  it('device: the same objects, now on the device, grads included', () => {
    const net = new Net();
    const params = net.parameters();
    const buffers = net.buffers();
    net.forward(ones([5, 4])).sum().backward();
    const grad = net.fc1.weight.grad!;
    expect(net.to(FAKE)).toBe(net);
    expect(net.parameters()).toEqual(params);
    net.parameters().forEach((p, i) => expect(p).toBe(params[i]));
    net.buffers().forEach((b, i) => expect(b).toBe(buffers[i]));
    for (const t of [...net.parameters(), ...net.buffers()]) expect(t.device.type).toBe(FAKE);
    expect(net.fc1.weight.grad).toBe(grad);
    expect(grad.device.type).toBe(FAKE);
    expect(net.fc1.weight.requiresGrad).toBe(true);
    expect(net.cache.device.type).toBe('cpu'); // not a buffer: not moved
    // It trains there.
    net.zeroGrad();
    net.forward(ones([5, 4], { device: FAKE })).sum().backward();
    expect(net.fc1.weight.grad!.device.type).toBe(FAKE);
    net.cpu();
    expect(net.fc1.weight.device.type).toBe('cpu');
    expect(net.parameters()[0]).toBe(params[0]);
  });

  it('dtype: floating tensors only; int buffers keep their dtype', () => {
    const net = new Net();
    const before = values(net.fc1.weight);
    net.to(float64);
    expect(net.fc1.weight.dtype).toBe(float64);
    expect(net.bn.runningVar!.dtype).toBe(float64);
    expect(net.bn.numBatchesTracked!.dtype).toBe(int32);
    expect((net as unknown as { steps: Tensor }).steps.dtype).toBe(int32);
    expect(values(net.fc1.weight)).toEqual(before);
    net.to({ device: FAKE, dtype: float16 });
    expect(net.fc1.weight.dtype).toBe(float16);
    expect(net.fc1.weight.device.type).toBe(FAKE);
    expect(() => net.to(int32)).toThrow('nn.Module.to only accepts floating point dtypes, but got desired dtype=int32');
    expect(new nn.Linear(2, 2).double().half().float().weight.dtype).toBe(float32);
  });
});

describe('modes and gradients', () => {
  it('train() / eval() set every submodule', () => {
    const net = new Net();
    expect(net.modules().every((m) => m.training)).toBe(true);
    net.eval();
    expect(net.modules().every((m) => !m.training)).toBe(true);
    net.train();
    expect(net.bn.training).toBe(true);
  });

  it('zeroGrad: null by default; setToNone false zeroes the same objects (OPT-1)', () => {
    const fc = new nn.Linear(3, 2);
    fc.forward(ones([1, 3])).sum().backward();
    const g = fc.weight.grad!;
    fc.zeroGrad({ setToNone: false });
    expect(fc.weight.grad).toBe(g);
    expect(values(g)).toEqual([0, 0, 0, 0, 0, 0]);
    fc.zeroGrad();
    expect(fc.weight.grad).toBeNull();
  });

  it('requiresGrad_(false) freezes; apply visits children first', () => {
    const net = new Net();
    net.head.requiresGrad_(false);
    expect(net.head.parameters().every((p) => !p.requiresGrad)).toBe(true);
    expect(net.fc1.weight.requiresGrad).toBe(true);
    const seen: string[] = [];
    net.head.apply((m) => seen.push(m.constructor.name));
    expect(seen).toEqual(['ReLU', 'Linear', 'Sequential']);
  });

  it('call() is forward()', () => {
    const fc = new nn.Linear(2, 1);
    const x = ones([1, 2]);
    expect(values(fc.call(x))).toEqual(values(fc.forward(x)));
  });
});

describe('loadStateDict', () => {
  const mlp = (hidden: number) => new nn.Sequential(new nn.Linear(4, hidden), new nn.ReLU(), new nn.Linear(hidden, 2));

  it('copies values into the existing tensors (same objects), across dtypes and devices', () => {
    const a = mlp(3);
    const b = mlp(3);
    const weight = b.at(0).parameters()[0]!;
    const result = b.loadStateDict(a.stateDict());
    expect(result).toEqual({ missingKeys: [], unexpectedKeys: [] });
    expect(b.at(0).parameters()[0]).toBe(weight);
    expect(values(weight)).toEqual(values(a.at(0).parameters()[0]!));
    expect(weight.requiresGrad).toBe(true);
    const onDevice = Object.fromEntries(Object.entries(mlp(3).double().stateDict()).map(([k, v]) => [k, v.to(FAKE)]));
    b.loadStateDict(onDevice);
    expect(weight.device.type).toBe('cpu');
    expect(weight.dtype).toBe(float32);
    expect(values(weight)).toEqual(values(onDevice['0.weight']!.to('cpu').float()));
  });

  it('missing keys', () => {
    const sd = mlp(3).stateDict();
    delete sd['2.bias'];
    delete sd['0.weight'];
    expect(() => mlp(3).loadStateDict(sd)).toThrow('Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: "0.weight", "2.bias".');
  });

  it('unexpected keys', () => {
    const sd = { ...mlp(3).stateDict(), 'fc.extra': zeros([1]), '3.weight': zeros([2]) };
    expect(() => mlp(3).loadStateDict(sd)).toThrow('Error(s) in loading state_dict for Sequential:\n\tUnexpected key(s) in state_dict: "fc.extra", "3.weight".');
  });

  it('size mismatch, with both shapes; nothing is copied', () => {
    const target = mlp(3);
    const before = values(target.at(2).parameters()[1]!);
    try {
      target.loadStateDict(mlp(5).stateDict());
      expect.unreachable();
    } catch (e) {
      const err = e as nn.StateDictError;
      expect(err).toBeInstanceOf(nn.StateDictError);
      expect(err.message).toBe([
        'Error(s) in loading state_dict for Sequential:',
        '\tsize mismatch for 0.weight: copying a param with shape [5, 4] from checkpoint, the shape in current model is [3, 4].',
        '\tsize mismatch for 0.bias: copying a param with shape [5] from checkpoint, the shape in current model is [3].',
        '\tsize mismatch for 2.weight: copying a param with shape [2, 5] from checkpoint, the shape in current model is [2, 3].',
      ].join('\n'));
      expect(err.sizeMismatches.map((m) => m.key)).toEqual(['0.weight', '0.bias', '2.weight']);
    }
    expect(values(target.at(2).parameters()[1]!)).toEqual(before);
  });

  it('the issue\'s example message: fc.weight [10, 256] vs [10, 128]', () => {
    class Head extends nn.Module {
      fc = new nn.Linear(128, 10);
      forward(x: Tensor) { return this.fc.forward(x); }
    }
    const sd = { 'fc.weight': zeros([10, 256]), 'fc.bias': zeros([10]) };
    expect(() => new Head().loadStateDict(sd)).toThrow(
      'size mismatch for fc.weight: copying a param with shape [10, 256] from checkpoint, the shape in current model is [10, 128]',
    );
  });

  it('all three at once, in PyTorch\'s order; strict=false reports keys but still rejects shapes', () => {
    const sd: Record<string, Tensor> = { ...mlp(3).stateDict(), extra: zeros([1]), '0.bias': zeros([7]) };
    delete sd['2.weight'];
    expect(() => mlp(3).loadStateDict(sd)).toThrow(
      'Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: "2.weight".\n\tUnexpected key(s) in state_dict: "extra".\n\tsize mismatch for 0.bias',
    );
    expect(() => mlp(3).loadStateDict(sd, { strict: false })).toThrow('Error(s) in loading state_dict for Sequential:\n\tsize mismatch for 0.bias');
    sd['0.bias'] = zeros([3]);
    expect(mlp(3).loadStateDict(sd, { strict: false })).toEqual({ missingKeys: ['2.weight'], unexpectedKeys: ['extra'] });
    expect(mlp(3).loadStateDict(sd, false).missingKeys).toEqual(['2.weight']);
  });

  it('buffers load too (BatchNorm running stats), non-persistent ones are not expected', () => {
    const a = new Net();
    a.bn.runningMean!.fill_(3);
    const b = new Net();
    b.loadStateDict(a.stateDict());
    expect(values(b.bn.runningMean!)).toEqual([3, 3]);
    expect('scratch' in a.stateDict()).toBe(false);
  });
});

describe('device mismatch: model on one device, batch on another (SD-5, SD-6)', () => {
  it('fails at the first op, naming both devices and where the batch was created', () => {
    const model = new nn.Sequential(new nn.Conv2d(1, 2, 3), new nn.ReLU()).to(FAKE);
    const batch = zeros([1, 1, 5, 5]); // created on the cpu here
    let err: DeviceMismatchError | undefined;
    try {
      model.forward(batch);
    } catch (e) {
      err = e as DeviceMismatchError;
    }
    expect(err).toBeInstanceOf(DeviceMismatchError);
    expect(err!.message).toContain('Expected all tensors to be on the same device, but found at least two devices, fake:0 and cpu! (when checking argument for argument input in method conv2d)');
    expect(err!.createdAt).toMatch(/module\.test\.ts:\d+:\d+$/);
    const line = Number(/:(\d+):\d+$/.exec(err!.createdAt!)![1]);
    expect(line).toBeGreaterThan(0);
    // F.linear and the losses report the same way
    expect(() => new nn.Linear(2, 2).to(FAKE).forward(ones([1, 2]))).toThrow('fake:0 and cpu! (when checking argument for argument input in method linear)');
    expect(() => F.crossEntropy(ones([2, 3], { device: FAKE }), tensor([0, 1], { dtype: int32 }))).toThrow('(when checking argument for argument target in method crossEntropy)');
  });
});

describe('printing', () => {
  it('toString shows the tree with constructor arguments', () => {
    const model = new nn.Sequential(new nn.Conv2d(1, 8, 3, { padding: 1 }), new nn.MaxPool2d(2), new nn.Flatten(), new nn.Linear(8, 2, { bias: false }));
    expect(model.toString()).toBe([
      'Sequential(',
      '  (0): Conv2d(1, 8, kernelSize=[3,3], stride=[1,1], padding=[1,1])',
      '  (1): MaxPool2d(kernelSize=[2,2], stride=[2,2], padding=[0,0], dilation=[1,1], ceilMode=false)',
      '  (2): Flatten(startDim=1, endDim=-1)',
      '  (3): Linear(inFeatures=8, outFeatures=2, bias=false)',
      ')',
    ].join('\n'));
  });
});
