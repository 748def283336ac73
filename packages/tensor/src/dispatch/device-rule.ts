// PyTorch's same-device rule (SD-1..5). Nothing moves implicitly; a mismatch names the op, the
// argument, both devices and where the stray tensor was created.
import type { Device } from '../device/device.js';
import { DeviceMismatchError, TensorError } from '../errors/errors.js';
import type { Tensor } from '../tensor/tensor.js';
import { inheritSite } from '../tensor/site.js';

export interface NamedArg {
  readonly name: string;
  readonly tensor: Tensor;
  /** In-place targets and outputs never get the CPU-scalar exemption (SD-4). */
  readonly isOutput?: boolean;
}

function mismatch(op: string, arg: NamedArg, common: Device): DeviceMismatchError {
  return new DeviceMismatchError({
    op,
    argument: arg.name,
    expected: common.toString(),
    got: arg.tensor.device.toString(),
    createdAt: arg.tensor._site,
  });
}

/**
 * Elementwise ops, comparisons, where and reductions (SD-1..4): the common device is the first
 * non-CPU device (outputs first); one 0-dim CPU input may ride along as a scalar. Returns the
 * common device and the arguments that are such CPU scalars.
 */
export function iteratorDevice(op: string, args: readonly NamedArg[]): { device: Device; cpuScalars: Set<Tensor> } {
  inheritSite(args[0]?.tensor._site);
  const ordered = [...args.filter((a) => a.isOutput), ...args.filter((a) => !a.isOutput)];
  const common = ordered.find((a) => a.tensor.device.type !== 'cpu')?.tensor.device ?? ordered[0]!.tensor.device;
  const cpuScalars = new Set<Tensor>();
  for (const a of ordered) {
    a.tensor._assertUsable(op);
    const d = a.tensor.device;
    if (d.equals(common)) continue;
    if (d.type === 'cpu' && a.tensor.shape.length === 0 && !a.isOutput) {
      cpuScalars.add(a.tensor);
      if (cpuScalars.size > 1) throw new TensorError(`Trying to pass too many CPU scalars to non-CPU kernel! (in method ${op})`);
      continue;
    }
    throw mismatch(op, a, common);
  }
  return { device: common, cpuScalars };
}

/**
 * The schema-order check (SD-5) for libraries built on core (nn's layers…): absent optional
 * tensors (a missing bias) are skipped; the first present one decides.
 */
export function checkSameDevice(op: string, args: readonly { readonly name: string; readonly tensor: Tensor | null | undefined }[]): void {
  const present = args.filter((a): a is NamedArg => a.tensor != null);
  if (present.length > 0) schemaDevice(op, present);
}

/** mm, matmul, cat, gather, index_select… (SD-5): the first tensor argument decides; no exemption. */
export function schemaDevice(op: string, args: readonly NamedArg[]): Device {
  inheritSite(args[0]!.tensor._site);
  const common = args[0]!.tensor.device;
  for (const a of args) {
    a.tensor._assertUsable(op);
    if (!a.tensor.device.equals(common)) throw mismatch(op, a, common);
  }
  return common;
}
