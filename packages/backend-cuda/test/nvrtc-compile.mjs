// Child process of fusion.test.ts: compiles a fused module's source (read from the file named by
// argv[2]) with the NVRTC that CORE_CUDA_NVRTC names, through the addon's own NVRTC step
// (fusionCompile: fusedBuild's headers and options, no device), for each compute capability in
// argv[3..] ("9.0"), and prints one JSON line: what NVRTC was loaded, and per architecture whether it
// compiled, its log, the image's ELF machine (190: EM_CUDA) and which `extern "C"` kernels the image names.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const addon = createRequire(import.meta.url)(new URL('../build/Release/core_cuda.node', import.meta.url).pathname);
const source = readFileSync(process.argv[2], 'utf8');
const kernels = [...source.matchAll(/extern "C" __global__ void (\w+)\(/g)].map((m) => m[1]);
const results = process.argv.slice(3).map((cc) => {
  const [major, minor] = cc.split('.').map(Number);
  const { ok, log, image } = addon.fusionCompile(source, major, minor);
  const elf = image.length > 20 && image.readUInt32BE(0) === 0x7f454c46;
  const text = image.toString('latin1');
  return { cc, ok, log, elf, machine: elf ? image.readUInt16LE(18) : 0, named: kernels.filter((k) => text.includes(`\0${k}\0`)) };
});
console.log(JSON.stringify({ nvrtc: addon.nvrtc(), kernels, results }));
