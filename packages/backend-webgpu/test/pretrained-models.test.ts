// Pretrained models on webgpu: each tiny parity fixture of @core/models (GPT-2, Llama, BERT,
// written by PyTorch 1.13) loaded straight onto the device and measured against PyTorch by the
// models' shared fixture module: float32 outputs (through the KV cache too), 32 greedy tokens,
// and a training step (loss, gradients, one AdamW step). Only float32 is used, which every adapter
// has, so no configuration skips anything.
import '@core/backend-cpu';
import { registerBackend } from '@core/tensor';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebGPUBackend } from '../src/index.js';
import { deviceParityChecks, PARITY_FIXTURES } from '../../models/test/fixtures.js';
import { startBackend } from './helpers.js';

let gpu: WebGPUBackend;
beforeAll(async () => {
  gpu = await startBackend();
  registerBackend({ name: 'webgpu', priority: 200, create: () => gpu });
});
afterAll(() => gpu?.destroy());

describe('pretrained models on webgpu against PyTorch', () => {
  for (const name of PARITY_FIXTURES) {
    it(`${name}: float32 outputs, greedy tokens and the training step as PyTorch's`, async () => {
      const checks = await deviceParityChecks(name, 'webgpu');
      expect(checks.length).toBeGreaterThan(0);
      for (const check of checks) {
        if ('diff' in check) expect.soft(check.diff, check.what).toBeLessThan(check.tol);
        else expect.soft(check.actual, check.what).toEqual(check.expected);
      }
    });
  }
});
