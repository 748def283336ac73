// The conformance suite again with every case wrapped in compile() and called until it replays
// through a prepared program (fused elementwise chains included). Its own file, so its own
// process: the storage cases read memory statistics that another run in the same process would
// disturb. Same expectations as the eager run: compiled may fail only where eager may.
import { describeConformance } from '@core/conformance/vitest';
import { CONFIG, conformanceExpectations, startBackend } from './helpers.js';

describeConformance(() => startBackend(), {
  name: `webgpu (${CONFIG ?? 'default adapter'}), compiled`,
  compiled: true,
  expectations: conformanceExpectations(),
  strict: true,
});
