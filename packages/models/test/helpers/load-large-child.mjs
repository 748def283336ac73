// Run by pretrained-large.test.ts in a child process, so that only this load counts in the peak
// resident memory: builds a model of float32 parameters of the shapes given, measures the
// process's peak memory before loading, loads the checkpoint folder into it through the built
// @core/models, and prints the measurements and the values at the marked places as JSON.
// Usage: node --expose-gc load-large-child.mjs <dir> <JSON { name: shape }> <JSON { name: [flat indices] }>
import '@core/backend-cpu';
import { nn } from '@core/nn';
import { empty } from '@core/tensor';
import { loadPretrainedWeights } from '@core/models';

const [dir, shapesJson, probesJson] = process.argv.slice(2);
const shapes = JSON.parse(shapesJson);
const probes = JSON.parse(probesJson);
const peakBytes = () => process.resourceUsage().maxRSS * 1024; // maxRSS is in KiB

class Flat extends nn.Module {
  forward(x) {
    return x;
  }
}

globalThis.gc?.();
const baseline = peakBytes();
const model = new Flat();
let modelBytes = 0;
for (const [name, shape] of Object.entries(shapes)) {
  const p = nn.Parameter(empty(shape));
  model.registerParameter(name, p);
  modelBytes += p.numel() * 4;
}
await loadPretrainedWeights(model, dir);
const peak = peakBytes();
const values = {};
for (const [name, indices] of Object.entries(probes)) {
  const flat = model[name].reshape([-1]);
  values[name] = [];
  for (const i of indices) values[name].push(await flat.narrow(0, i, 1).item());
}
const requiresGrad = model.parameters().every((p) => p.isLeaf && p.requiresGrad);
process.stdout.write(JSON.stringify({ baseline, peak, modelBytes, values, requiresGrad }));
