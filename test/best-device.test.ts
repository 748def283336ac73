// bestDevice(): priorities decide (cuda > webgpu > cpu by convention), but a GPU API emulated on
// the CPU (lavapipe, SwiftShader) declares 'software-adapter' and ranks below the cpu backend.
import '@core/backend-cpu';
import { createCpuBackend } from '@core/backend-cpu';
import { bestDevice, registerBackend, type Backend } from '@core/tensor';
import { describe, expect, it } from 'vitest';

function renamed(name: string, features: string[]): () => Backend<unknown> {
  return () => {
    const cpu = createCpuBackend();
    return { ...cpu, name, capabilities: { ...cpu.capabilities, features } };
  };
}

describe('bestDevice', () => {
  it('prefers the cpu over a higher-priority software adapter, and a hardware one over both', async () => {
    registerBackend({ name: 'softgpu', priority: 200, create: renamed('softgpu', ['software-adapter']) });
    expect((await bestDevice()).toString()).toBe('cpu');
    registerBackend({ name: 'hardgpu', priority: 150, create: renamed('hardgpu', []) });
    expect((await bestDevice()).toString()).toBe('hardgpu:0');
  });
});
