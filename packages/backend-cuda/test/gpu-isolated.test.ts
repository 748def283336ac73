// On a machine with an NVIDIA GPU and driver (skipped elsewhere, with the reason; or run it on the
// fake driver: LD_LIBRARY_PATH=build/fake-driver npx vitest run test/gpu-isolated.test.ts): the
// conformance suite's isolated mode, in a process with no cpu backend registered (this file never
// imports @core/backend-cpu, and vitest runs each file in a process of its own), so core must never
// need the cpu behind cuda's back. ISOLATED_SUBSET: the cases where core reads values on the host
// or picks a device (index checks, data-dependent ops, losses, optimizers, training, device and
// transfer rules); the whole suite, with the cpu, runs in gpu.test.ts.
import { describe, expect, it } from 'vitest';
import { listBackends } from '@core/tensor';
import { ISOLATED_SUBSET } from '@core/conformance';
import { describeConformance } from '@core/conformance/vitest';
import { createCudaBackend, probeCuda } from '../src/index.js';

const probe = probeCuda();
if (!probe.available) console.log(`[cuda] isolated GPU run skipped: ${probe.reason}`);

describe.skipIf(!probe.available)('cuda in an isolated process', () => {
  it('has no cpu backend registered', () => {
    expect(listBackends()).not.toContain('cpu');
  });
});

if (probe.available) {
  describeConformance(() => createCudaBackend(), { name: 'cuda, isolated', isolated: true, filter: ISOLATED_SUBSET, strict: true });
}
