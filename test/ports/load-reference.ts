// Reads what the PyTorch reference scripts (reference/*.py) wrote into fixtures/: state dicts as
// safetensors, runs as JSON. Tests need no Python: the fixtures are committed.
import { readFileSync } from 'node:fs';
import { nn } from '@core/nn';
import type { Tensor } from '@core/tensor';

const fixture = (file: string): string => new URL(`./fixtures/${file}`, import.meta.url).pathname;

/**
 * A PyTorch state dict from a reference script, by PyTorch's key names. Float32 tensors come as
 * they are; an int8 tensor holds a weight on the grid k·2^−e (fixture_io.py's
 * write_state_dict(int8_grid=True)), e in the file's metadata under the tensor's name, and comes
 * back as those float32 values exactly.
 */
export function loadReferenceStateDict(file: string): nn.StateDict {
  const bytes = readFileSync(fixture(file));
  const exponents = nn.parseSafetensorsHeader(bytes, file).metadata;
  const stateDict = nn.deserializeSafetensors(bytes, { source: file });
  for (const [key, e] of Object.entries(exponents)) stateDict[key] = stateDict[key]!.float().mul(2 ** -Number(e));
  return stateDict;
}

/** A JSON record from a reference script. */
export function loadReferenceRecord<T>(file: string): T {
  return JSON.parse(readFileSync(fixture(file), 'utf8')) as T;
}

/** Every tensor of a safetensors fixture (inputs, not weights), by name. */
export function loadReferenceTensors(file: string): Record<string, Tensor> {
  return nn.deserializeSafetensors(readFileSync(fixture(file)), { source: file });
}

/** Each key's shape: what a port's state dict must share with PyTorch's. */
export function shapes(stateDict: nn.StateDict): Record<string, number[]> {
  return Object.fromEntries(Object.entries(stateDict).map(([key, t]) => [key, [...t.shape]]));
}
