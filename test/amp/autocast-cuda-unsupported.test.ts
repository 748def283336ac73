// AC-3's cuda paths on emulated devices: no 'cuda' backend at all, a registered 'cuda' whose
// factory throws (both: a warning and a disabled region), and a 'cuda' device without bf16 compute
// (an error). Backend registration is process-global, so these run in their own file, in order.
import '@core/backend-cpu';
import {
  autocast, bfloat16, DTypeError, float16, float32, getAutocastDtype, isAutocastEnabled, isAvailable, randn,
  registerBackend, type Backend,
} from '@core/tensor';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expectError } from '../helpers/assert.js';
import { createFakeBackend } from '../helpers/fake-backend.js';

const UNAVAILABLE = "User provided device_type of 'cuda', but CUDA is not available. Disabling";

afterEach(() => {
  vi.restoreAllMocks();
  expect(isAutocastEnabled('cuda')).toBe(false);
});

describe('AC-3: cuda not available', () => {
  it('AC-3: with no cuda backend registered, a cuda region warns and is disabled', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(isAvailable('cuda')).toBe(false);
    const ran = autocast({ deviceType: 'cuda' }, () => {
      expect(isAutocastEnabled('cuda')).toBe(false);
      return 42;
    });
    expect(ran).toBe(42);
    expect(warn).toHaveBeenCalledTimes(1);
    const message = String(warn.mock.calls[0]![0]);
    expect(message.startsWith(UNAVAILABLE)).toBe(true);
    expect(message).toContain("no 'cuda' backend is registered");
  });

  it('AC-3: the `using` form warns and is disabled too; cpu autocast is unaffected', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const a = randn([2, 2]);
    {
      using _cuda = autocast({ deviceType: 'cuda', dtype: bfloat16 });
      using _cpu = autocast({ deviceType: 'cpu' });
      expect(isAutocastEnabled('cuda')).toBe(false);
      expect(a.mm(a).dtype).toBe(bfloat16);
    }
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0]![0]).startsWith(UNAVAILABLE)).toBe(true);
  });

  it('AC-3: webgpu without a backend warns in the same words, with its own name', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    autocast({ deviceType: 'webgpu' }, () => expect(isAutocastEnabled('webgpu')).toBe(false));
    expect(String(warn.mock.calls[0]![0]).startsWith("User provided device_type of 'webgpu', but webgpu is not available. Disabling")).toBe(true);
  });

  it('AC-3: a registered cuda backend whose factory throws: exactly "…but CUDA is not available. Disabling", region disabled', () => {
    registerBackend({ name: 'cuda', priority: 10, create: () => { throw new Error('no driver'); } });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    autocast({ deviceType: 'cuda' }, () => expect(isAutocastEnabled('cuda')).toBe(false));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toBe(UNAVAILABLE);
  });
});

describe('AC-3: cuda without bfloat16 compute', () => {
  function noBf16Cuda(): Backend<unknown> {
    const b = createFakeBackend({ name: 'cuda' });
    return { ...b, capabilities: { ...b.capabilities, dtypes: { ...b.capabilities.dtypes, bfloat16: { storage: true, compute: false } } } };
  }

  it('AC-3: a bf16 cuda region raises "Current CUDA Device does not support bfloat16. Please switch dtype to float16."', () => {
    registerBackend({ name: 'cuda', priority: 10, create: noBf16Cuda });
    expect(isAvailable('cuda')).toBe(true);
    let ran = false;
    const e = expectError(() => autocast({ deviceType: 'cuda', dtype: bfloat16 }, () => { ran = true; }), DTypeError);
    expect(e.message).toBe('Current CUDA Device does not support bfloat16. Please switch dtype to float16.');
    expect(ran).toBe(false);
    expectError(() => autocast({ deviceType: 'cuda', dtype: bfloat16 }), DTypeError, 'Current CUDA Device does not support bfloat16.');
    // The failed entry left no state behind.
    expect(getAutocastDtype('cuda')).toBe(float16);
  });

  it('AC-3: the same device runs float16 regions; enabled: false skips the check', () => {
    registerBackend({ name: 'cuda', priority: 10, create: noBf16Cuda });
    const a = randn([2, 2]).to('cuda');
    expect(autocast({ deviceType: 'cuda' }, () => a.mm(a)).dtype).toBe(float16);
    expect(autocast({ deviceType: 'cuda', dtype: bfloat16, enabled: false }, () => a.mm(a)).dtype).toBe(float32);
  });
});
