// A second device type for device-rule tests: 'fake', a renamed CPU backend (synchronous reads).
import { createCpuBackend } from '@core/backend-cpu';
import { registerBackend } from '@core/tensor';

registerBackend({ name: 'fake', priority: 1, create: () => ({ ...createCpuBackend(), name: 'fake' }) });

export const FAKE = 'fake';
