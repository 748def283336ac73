// The conformance suite on the webgpu backend, in the configuration test/run.mjs selected
// (lavapipe: float16 as array<f16>; SwiftShader: float16 packed two per u32), with the
// configuration's expectations (helpers.ts).
import { describeConformance } from '@core/conformance/vitest';
import { CONFIG, conformanceExpectations, startBackend } from './helpers.js';

describeConformance(() => startBackend(), {
  name: `webgpu (${CONFIG ?? 'default adapter'})`,
  expectations: conformanceExpectations(),
  strict: true,
});
