// A tour of @core/tensor: devices, dtypes and rounding, and the error a mixed-device op gives.
import '@core/backend-cpu';
import {
  availableDevices, bestDevice, bfloat16, DeviceMismatchError, float16, manualSeed, randn, registerBackend,
  tensor, zeros, type Backend,
} from '@core/tensor';
import { createCpuBackend } from '@core/backend-cpu';

// A second device type so the same-device rule has something to catch on a CPU-only machine:
// 'demo' reuses the CPU kernels under another name.
registerBackend({
  name: 'demo',
  priority: 10,
  create: (): Backend<unknown> => ({ ...createCpuBackend(), name: 'demo' }),
});

const devices = await availableDevices();
console.log('Backends:');
for (const d of devices) console.log(`  ${d.type.padEnd(6)} ${d.available ? 'available' : `unavailable (${d.reason})`}, priority ${d.priority}`);
const dev = await bestDevice();
console.log(`bestDevice(): ${dev}\n`);

manualSeed(0);
const x = randn([2, 3]);
console.log(`x = randn([2, 3]) lives on ${x.device} as ${x.dtype}:`, await x.toArray());
console.log('x.half():    ', await x.half().toArray());
console.log('x.bfloat16():', await x.bfloat16().toArray());
const big = tensor([65504, 65519, 65520, 1 + 2 ** -11]);
console.log('65504, 65519, 65520, 1+2^-11 in float16:', await big.to(float16).toArray(), '(round to nearest even, overflow to Infinity)');
console.log('1 + 3·2^-8 in bfloat16:', await tensor([1 + 3 * 2 ** -8]).to(bfloat16).toArray());

const w = zeros([3, 4], { device: 'demo' });
const wOnCpu = w.to('cpu');
console.log(`\nw on ${w.device}; w.to('cpu') is on ${wOnCpu.device}; w.to('demo:0') returns w itself: ${w.to('demo:0') === w}`);
console.log('x.matmul(w.to(x.device)) has shape', x.matmul(w.to(x.device)).shape);

try {
  x.matmul(w); // x is on cpu, w on demo:0
} catch (e) {
  if (!(e instanceof DeviceMismatchError)) throw e;
  console.log(`\nx.matmul(w) with w on another device throws ${e.name}:\n${e.message}`);
}
