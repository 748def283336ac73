// The contract's version rule: a minor bump (1.1.0 added the optional crossEntropy, unscaleAndCheck
// and adamw fused kernels, 1.2.0 addcmul, 1.3.0 the argsort, cumulative and scatter primitives,
// 1.4.0 the attention fused kernel, 1.5.0 the optional prepare member, 1.6.0 the maxPool2d, adadelta, rmsprop and
// stridedSum fused kernels, 1.7.0 matmulToFloat32, 1.8.0 matmulRounded, 1.9.0 matmulStridedSum) keeps backends built against 1.0.0 registering; a different
// major does not.
import { describe, expect, it } from 'vitest';
import { CONTRACT_VERSION, type Backend, type Kernels } from '../../src/backend/contract.js';
import { getBackend, isAvailable, registerBackend } from '../../src/backend/registry.js';
import { BackendUnavailableError } from '../../src/errors/errors.js';

/** A backend that only registers: its kernels are never called here. */
function stubBackend(name: string, contractVersion: string): Backend<number> {
  const never = () => {
    throw new Error('not called');
  };
  return {
    name,
    contractVersion,
    deviceCount: 1,
    capabilities: {
      dtypes: { float32: { storage: true, compute: true } },
      syncRead: false,
      maxBufferBytes: 1 << 20,
      features: [],
      strictNumerics: true,
      pinnedMemory: false,
    },
    alloc: () => 0,
    free: () => {},
    write: () => {},
    read: async () => new Float32Array(0),
    synchronize: async () => {},
    memoryStats: () => ({ allocatedBytes: 0, allocations: 0, reservedBytes: 0 }),
    kernels: new Proxy({}, { get: () => never }) as Kernels<number>,
    // A 1.0.0 backend knows only the softmax kernels.
    fused: { softmax: never, logSoftmax: never },
  };
}

describe('contract version', () => {
  it('is 1.9.0: the optional matmulStridedSum fused kernel (like matmulRounded in 1.8.0, matmulToFloat32 in 1.7.0, maxPool2d, adadelta, rmsprop and stridedSum in 1.6.0, prepare in 1.5.0, the attention fused kernel in 1.4.0, the argsort, cumulative and scatter primitives in 1.3.0, addcmul in 1.2.0, crossEntropy, unscaleAndCheck and adamw in 1.1.0) are optional, minor additions', () => {
    expect(CONTRACT_VERSION).toBe('1.9.0');
  });

  it('a backend declaring contract 1.0.0 (no new fused kernels) still registers and is usable', () => {
    registerBackend({ name: 'legacy100', priority: 1, create: () => stubBackend('legacy100', '1.0.0') });
    expect(isAvailable('legacy100')).toBe(true);
    expect(getBackend('legacy100').contractVersion).toBe('1.0.0');
  });

  it('a backend declaring another major version is refused with the reason', () => {
    registerBackend({ name: 'future2', priority: 1, create: () => stubBackend('future2', '2.0.0') });
    expect(isAvailable('future2')).toBe(false);
    expect(() => getBackend('future2')).toThrow(BackendUnavailableError);
    expect(() => getBackend('future2')).toThrow('it implements contract 2.0.0, core needs 1.x');
  });
});
