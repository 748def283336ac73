// The whole conformance suite against this backend, strict: no expectations file at all. Cases
// its declared capabilities rule out (float16 compute, bfloat16, fused kernels) are skipped by the
// suite itself, and the suite checks that core rejects them with a DTypeError instead. The second
// run is the same suite compiled.
import { describeConformance } from '@core/conformance/vitest';
import { createJsRefBackend } from '../src/backend.js';

const backend = createJsRefBackend();
describeConformance(() => backend, { name: 'jsref', strict: true });
// Every case compiled too, replayed through the generic interpreter (the backend has no prepare):
// the eager-only cases must be refused by compile() with the CompileError they are listed with.
describeConformance(() => backend, { name: 'jsref', compiled: true, strict: true });
