// The whole conformance suite against this backend, strict: no expectations file at all. Cases
// its declared capabilities rule out (float16 compute, bfloat16, fused kernels) are skipped by the
// suite itself, and the suite checks that core rejects them with a DTypeError instead.
import { describeConformance } from '@core/conformance/vitest';
import { createJsRefBackend } from '../src/backend.js';

describeConformance(() => createJsRefBackend(), { name: 'jsref', strict: true });
