// Child process of pretrained-models.test.ts, started with LD_LIBRARY_PATH pointing at the fake
// libcuda.so.1: runs one of @core/models' parity fixtures on 'cuda' with the models' shared
// `deviceParityChecks` and prints its checks as one JSON line, for the parent to assert.
// Usage: node pretrained-models-run.mjs <fixture name>
import { register } from 'node:module';

register('./pretrained-models-loader.mjs', import.meta.url);
await import('../dist/index.js');
await import('@core/backend-cpu');
const { availableDevices } = await import('@core/tensor');
const { deviceParityChecks } = await import('../../models/test/fixtures.ts');

await availableDevices();
console.log(JSON.stringify(await deviceParityChecks(process.argv[2], 'cuda')));
