// bestDevice(): priorities decide (cuda > webgpu > cpu by convention), but a GPU API emulated on
// the CPU (lavapipe, SwiftShader) declares 'software-adapter' and ranks below the cpu backend; a
// backend's probe lets bestDevice() pass over such a backend without starting it.
import '@core/backend-cpu';
import { createCpuBackend } from '@core/backend-cpu';
import { bestDevice, getBackend, registerBackend, type Backend, type BackendProbe } from '@core/tensor';
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

describe('bestDevice and BackendFactory.probe', () => {
  /** A factory whose create() calls are counted, with the given probe. */
  function probed(name: string, priority: number, probe: () => Promise<BackendProbe | null>) {
    const made = { count: 0 };
    const create = renamed(name, []);
    registerBackend({ name, priority, create: () => (made.count++, create()), probe });
    return made;
  }

  it('does not start a backend whose probe says software adapter or unavailable while a better device is available', async () => {
    const soft = probed('probedsoft', 400, async () => ({ available: true, features: ['software-adapter'] }));
    const absent = probed('probedabsent', 500, async () => ({ available: false, features: [] }));
    expect((await bestDevice()).toString()).not.toMatch(/^probed/);
    expect(soft.count).toBe(0);
    expect(absent.count).toBe(0);
    // Asked for by name, it still starts.
    expect(getBackend('probedsoft').name).toBe('probedsoft');
    expect(soft.count).toBe(1);
  });

  it('starts a backend whose probe finds a hardware device, or cannot tell (null, or a probe that throws)', async () => {
    const hard = probed('probedhard', 600, async () => ({ available: true, features: [] }));
    expect((await bestDevice()).toString()).toBe('probedhard:0');
    expect(hard.count).toBe(1);
    const unknown = probed('probedunknown', 700, async () => null);
    const failing = probed('probedfailing', 800, async () => { throw new Error('probe crashed'); });
    expect((await bestDevice()).toString()).toBe('probedfailing:0');
    expect([unknown.count, failing.count]).toEqual([1, 1]);
  });
});
