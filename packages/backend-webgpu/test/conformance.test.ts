// The conformance suite on the webgpu backend, in the configuration test/run.mjs selected
// (lavapipe: float16 as array<f16>; SwiftShader: float16 packed two per u32). Expectations are
// the backend's file in @core/conformance plus, for SwiftShader, the entries of
// test/expectations/swiftshader.json (that driver's own gaps, each with its reason).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeConformance } from '@core/conformance/vitest';
import { CONFIG, startBackend } from './helpers.js';

function readJson(relative: string): { backend: string; expectations: unknown[] } {
  return JSON.parse(readFileSync(fileURLToPath(new URL(relative, import.meta.url)), 'utf8'));
}

const base = readJson('../../conformance/expectations/webgpu.json');
const extra = CONFIG === 'swiftshader' ? readJson('./expectations/swiftshader.json').expectations : [];

describeConformance(() => startBackend(), {
  name: `webgpu (${CONFIG ?? 'default adapter'})`,
  expectations: { backend: 'webgpu', expectations: [...base.expectations, ...extra] },
  strict: true,
});
