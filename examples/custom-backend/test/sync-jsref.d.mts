import type { Backend } from '@core/tensor';
import type { JsStorage } from '../src/index.js';

/** A jsref backend (named 'jsref', like the one its package registers) with `readSync`. */
export function createSyncJsRef(): Backend<JsStorage>;
export default createSyncJsRef;
