// The command line's training run: the loop of loop.ts on the device a --device flag names, with
// every backend a Node program may have registered first.
import '@core/backend-cpu';
import '@core/backend-webgpu'; // registers 'webgpu' when an adapter is found (else it reports why not)
import '@core/backend-cuda'; // registers 'cuda' when the addon, a driver and a GPU are present (else it reports why not)
import { chooseDevice } from '@core/example-common';
import { trainOn, type TokenSplit, type TrainHooks, type TrainResult, type TrainSettings } from './loop.js';

export * from './loop.js';

/** A training run's settings, with the device as the --device flag names it. */
export interface TrainConfig extends TrainSettings {
  /** 'auto' | 'cpu' | 'webgpu' | 'cuda' | 'cuda:1' … */
  readonly device: string;
}

/** Build a GPT for `data`'s vocabulary and train it as `config` says, on the device `config.device` names. */
export async function train(config: TrainConfig, data: TokenSplit, hooks: TrainHooks = {}): Promise<TrainResult> {
  return trainOn(await chooseDevice(config.device), config, data, hooks);
}
