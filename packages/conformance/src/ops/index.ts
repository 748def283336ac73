// The op table: every op the library exposes, one entry each.
import type { OpInfo } from '../opinfo.js';
import { ADVANCED_INDEXING_INFOS } from './advanced-indexing.js';
import { ATTENTION_INFOS } from './attention.js';
import { ACTIVATION_INFOS } from './activations.js';
import { COMPOSITE_INFOS } from './composites.js';
import { CONV_INFOS } from './conv.js';
import { CTC_LOSS } from './ctc.js';
import { DECOMPOSITION_INFOS } from './decompositions.js';
import { ELEMENTWISE_INFOS } from './elementwise.js';
import { LOSS_INFOS } from './losses.js';
import { NN_INFOS } from './nn.js';
import { NORMALIZATION_INFOS } from './normalization.js';
import { POOLING_INFOS } from './pooling.js';
import { RECURRENT_INFOS } from './recurrent.js';
import { REDUCTION_INFOS } from './reductions.js';
import { RESAMPLE_INFOS } from './resample.js';
import { SAMPLING_INFOS } from './sampling.js';
import { SORTING_INFOS } from './sorting.js';
import { STRUCTURAL_INFOS } from './structural.js';
import { VIEW_INFOS } from './views.js';

/** The op table: every op the library exposes, one entry each. */
export const OPS: readonly OpInfo[] = [...ELEMENTWISE_INFOS, ...COMPOSITE_INFOS, ...REDUCTION_INFOS, ...STRUCTURAL_INFOS, ...LOSS_INFOS, ...NN_INFOS, ...CONV_INFOS, ...ACTIVATION_INFOS, ...NORMALIZATION_INFOS, ...VIEW_INFOS, ...SORTING_INFOS, ...DECOMPOSITION_INFOS, ...ATTENTION_INFOS, ...POOLING_INFOS, ...ADVANCED_INDEXING_INFOS, ...SAMPLING_INFOS, ...RESAMPLE_INFOS, ...RECURRENT_INFOS, CTC_LOSS];
