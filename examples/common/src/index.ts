// What the command-line examples (train-mnist, gpt) share: the --device flag's choice, flag
// parsing helpers and a terminal progress bar.
export { chooseDevice } from './device.js';
export { demoArgs, oneOf, positive } from './flags.js';
export { Progress } from './progress.js';
