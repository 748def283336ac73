// What the command-line examples (train-mnist, gpt, finetune-gpt2) share: the --device flag's choice, flag
// parsing helpers, a terminal progress bar and the loss chart.
export { chooseDevice } from './device.js';
export { count, demoArgs, oneOf, parseFlags, positive, type FlagSpec } from './flags.js';
export { Progress } from './progress.js';
export { renderLossChart, type LossChart } from './loss-chart.js';
