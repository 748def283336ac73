// Extra device types for device-rule tests, both renamed CPU backends: 'fake' reads synchronously;
// 'nosync' can only be read with `await`, like a GPU.
import { createCpuBackend } from '@core/backend-cpu';
import { registerBackend } from '@core/tensor';

registerBackend({ name: 'fake', priority: 1, create: () => ({ ...createCpuBackend(), name: 'fake' }) });
registerBackend({
  name: 'nosync',
  priority: 0,
  create: () => {
    const { readSync: _readSync, ...cpu } = createCpuBackend();
    return { ...cpu, name: 'nosync', capabilities: { ...cpu.capabilities, syncRead: false } };
  },
});

export const FAKE = 'fake';
export const NO_SYNC = 'nosync';
