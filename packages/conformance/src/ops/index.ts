// The op table: every op the library exposes, one entry each.
import type { OpInfo } from '../opinfo.js';
import { COMPOSITE_INFOS } from './composites.js';
import { ELEMENTWISE_INFOS } from './elementwise.js';
import { LOSS_INFOS } from './losses.js';
import { NN_INFOS } from './nn.js';
import { REDUCTION_INFOS } from './reductions.js';
import { STRUCTURAL_INFOS } from './structural.js';
import { VIEW_INFOS } from './views.js';

/** The op table: every op the library exposes, one entry each. */
export const OPS: readonly OpInfo[] = [...ELEMENTWISE_INFOS, ...COMPOSITE_INFOS, ...REDUCTION_INFOS, ...STRUCTURAL_INFOS, ...LOSS_INFOS, ...NN_INFOS, ...VIEW_INFOS];
