// Importing the package registers the 'jsref' device with core.
import { registerBackend } from '@core/tensor';
import { createJsRefBackend, NAME } from './backend.js';

registerBackend({ name: NAME, priority: 10, create: () => createJsRefBackend() });

export { createJsRefBackend, NAME, type JsRefOptions } from './backend.js';
export { JsStorage } from './values.js';
