// 'nosync': a renamed CPU backend without synchronous reads, so that its tensors behave like a
// GPU's for the code paths that read values (they can only be read with `await`).
import { createCpuBackend } from '@core/backend-cpu';
import { listBackends, registerBackend } from '@core/tensor';

export const NO_SYNC = 'nosync';

if (!listBackends().includes(NO_SYNC)) {
  registerBackend({
    name: NO_SYNC,
    priority: 0,
    create: () => {
      const { readSync: _, ...cpu } = createCpuBackend();
      return { ...cpu, name: NO_SYNC, capabilities: { ...cpu.capabilities, syncRead: false } };
    },
  });
}
