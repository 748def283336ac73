// Autocast policy tables, one per device type, derived from the op table's autocast classes
// (PyTorch's lists, AC-8..AC-13, for the ops this library has). Ops not listed run in their
// inputs' dtypes.
import { bfloat16, float16, type DType } from '../dtype/dtype.js';
import { OP_TABLE, type AutocastRule, type OpName } from '../ops/table.js';

/**
 * A device type's autocast policy: the region dtypes and which ops cast their args how (see `registerAutocastPolicy`).
 */
export interface AutocastPolicyTable {
  /** The region dtype when none is given (AC-2). */
  readonly defaultDtype: DType;
  /** Low-precision dtypes a region may ask for (AC-3). */
  readonly allowedDtypes: readonly DType[];
  /** lower_precision_fp (AC-8): eligible args cast to the region dtype. */
  readonly lowerPrecision: readonly OpName[];
  /** fp32 (AC-9): eligible args cast to float32. */
  readonly fp32: readonly OpName[];
  /** fp32_set_opt_dtype (AC-10): the op runs in float32 when its first arg is eligible. */
  readonly fp32FirstArg: readonly OpName[];
  /** promote (AC-12): eligible args cast to the widest of them and the region dtype. */
  readonly promote: readonly OpName[];
  /** Ops that refuse to run in a region, with the reason (AC-13). */
  readonly banned: Readonly<Partial<Record<OpName, string>>>;
}

type Listed = 'lowerPrecision' | 'fp32' | 'fp32FirstArg' | 'promote';

/** The policy lists of one column of the op table. */
function listsOf(deviceType: keyof AutocastRule): Omit<AutocastPolicyTable, 'defaultDtype' | 'allowedDtypes'> {
  const lists: Record<Listed, OpName[]> = { lowerPrecision: [], fp32: [], fp32FirstArg: [], promote: [] };
  const banned: Partial<Record<OpName, string>> = {};
  for (const [name, entry] of Object.entries(OP_TABLE) as [OpName, { readonly autocast?: AutocastRule }][]) {
    const rule = entry.autocast?.[deviceType];
    if (rule === undefined) continue;
    if (typeof rule === 'object') banned[name] = rule.banned;
    else lists[rule].push(name);
  }
  return { ...lists, banned };
}

const CUDA_TABLE: AutocastPolicyTable = { defaultDtype: float16, allowedDtypes: [float16, bfloat16], ...listsOf('cuda') };

/** Built-in tables: cuda and cpu follow PyTorch; webgpu uses CUDA's lists with float16 (GPU-like numerics). */
export const BUILTIN_POLICIES: Readonly<Record<string, AutocastPolicyTable>> = {
  cuda: CUDA_TABLE,
  cpu: { defaultDtype: bfloat16, allowedDtypes: [bfloat16, float16], ...listsOf('cpu') },
  webgpu: { ...CUDA_TABLE, defaultDtype: float16 },
};
