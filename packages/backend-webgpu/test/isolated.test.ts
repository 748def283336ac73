// The conformance suite's isolated mode on webgpu: a process with no cpu backend registered (this
// file never imports @core/backend-cpu, and vitest runs each file in a process of its own), so core
// must never need the cpu behind webgpu's back. The whole suite already runs in
// conformance.test.ts; here ISOLATED_SUBSET, the cases where core reads values on the host or picks
// a device (index checks, data-dependent ops, losses, optimizers, training, device and transfer
// rules), about 600 cases. None of them is in the expectations files (webgpu.json, swiftshader.json).
import { describe, expect, it } from 'vitest';
import { listBackends } from '@core/tensor';
import { ISOLATED_SUBSET } from '@core/conformance';
import { describeConformance } from '@core/conformance/vitest';
import { CONFIG, startBackend } from './helpers.js';

describe('an isolated process', () => {
  it('has no cpu backend registered', () => {
    expect(listBackends()).not.toContain('cpu');
  });
});

describeConformance(() => startBackend(), {
  name: `webgpu, isolated (${CONFIG ?? 'default adapter'})`,
  isolated: true,
  filter: ISOLATED_SUBSET,
  strict: true,
});
