// The resampling layers: nn.Upsample (F.interpolate with fixed settings, and its two fixed-mode
// forms) and nn.PixelShuffle / nn.PixelUnshuffle, each in PyTorch's constructor order.
import type { Tensor } from '@core/tensor';
import { Module } from '../module.js';
import { interpolate, pixelShuffle, pixelUnshuffle, type InterpolateMode, type InterpolateOptions } from '../functional/resample.js';
import { bindArgs, type Args } from '../internal/args.js';

/** nn.Upsample's settings: F.interpolate's, without antialias. */
export type UpsampleOptions = Omit<InterpolateOptions, 'antialias'>;

/** What the output size is given by, as extraRepr writes it. */
function valueText(value: number | readonly number[]): string {
  return typeof value === 'number' ? `${value}` : `[${value.join(', ')}]`;
}

/**
 * Resize the spatial dims of [N, C, W], [N, C, H, W] or [N, C, D, H, W] input, PyTorch's
 * `nn.Upsample(size, scaleFactor, mode, alignCorners, recomputeScaleFactor)` (`F.interpolate`).
 */
export class Upsample extends Module {
  /** The output's spatial size, or null when scaleFactor gives it. */
  readonly size: number | readonly number[] | null;
  /** The spatial sizes' multiplier, or null when size is given. */
  readonly scaleFactor: number | readonly number[] | null;
  /** The interpolation mode (default 'nearest'). */
  readonly mode: InterpolateMode;
  /** Linear and bicubic modes: interpolate between the corner pixels' centres; null is false. */
  readonly alignCorners: boolean | null;
  /** Sample with the scale of the rounded output size rather than scaleFactor. */
  readonly recomputeScaleFactor: boolean | null;

  /** PyTorch's order: `new nn.Upsample(null, 2, 'bilinear')` or `new nn.Upsample({ scaleFactor: 2, mode: 'bilinear' })`. */
  constructor(...args: Args<[
    size: number | readonly number[] | null, scaleFactor: number | readonly number[] | null, mode: InterpolateMode,
    alignCorners: boolean | null, recomputeScaleFactor: boolean | null,
  ], UpsampleOptions>) {
    super();
    const o = bindArgs<UpsampleOptions>('Upsample', ['size', 'scaleFactor', 'mode', 'alignCorners', 'recomputeScaleFactor'], args);
    this.size = o.size ?? null;
    this.scaleFactor = o.scaleFactor ?? null;
    this.mode = o.mode ?? 'nearest';
    this.alignCorners = o.alignCorners ?? null;
    this.recomputeScaleFactor = o.recomputeScaleFactor ?? null;
  }

  forward(input: Tensor): Tensor {
    return interpolate(input, this.size, this.scaleFactor, this.mode, this.alignCorners, this.recomputeScaleFactor);
  }

  override extraRepr(): string {
    const by = this.scaleFactor !== null ? `scaleFactor=${valueText(this.scaleFactor)}` : `size=${this.size === null ? 'null' : valueText(this.size)}`;
    return `${by}, mode=${this.mode}`;
  }
}

/** Settings of the fixed-mode upsampling layers. */
export interface UpsamplingOptions {
  /** The output's spatial size. Give this or scaleFactor. */
  readonly size?: number | readonly number[] | null;
  /** The spatial sizes' multiplier. Give this or size. */
  readonly scaleFactor?: number | readonly number[] | null;
}

/** PyTorch's `nn.UpsamplingNearest2d(size, scaleFactor)`: `nn.Upsample` in 'nearest' mode. */
export class UpsamplingNearest2d extends Upsample {
  /** `new nn.UpsamplingNearest2d(null, 2)` or `new nn.UpsamplingNearest2d({ scaleFactor: 2 })`. */
  constructor(...args: Args<[size: number | readonly number[] | null, scaleFactor: number | readonly number[] | null], UpsamplingOptions>) {
    const { size, scaleFactor } = bindArgs<UpsamplingOptions>('UpsamplingNearest2d', ['size', 'scaleFactor'], args);
    super({ size, scaleFactor, mode: 'nearest' });
  }
}

/** PyTorch's `nn.UpsamplingBilinear2d(size, scaleFactor)`: `nn.Upsample` in 'bilinear' mode with alignCorners. */
export class UpsamplingBilinear2d extends Upsample {
  /** `new nn.UpsamplingBilinear2d(null, 2)` or `new nn.UpsamplingBilinear2d({ scaleFactor: 2 })`. */
  constructor(...args: Args<[size: number | readonly number[] | null, scaleFactor: number | readonly number[] | null], UpsamplingOptions>) {
    const { size, scaleFactor } = bindArgs<UpsamplingOptions>('UpsamplingBilinear2d', ['size', 'scaleFactor'], args);
    super({ size, scaleFactor, mode: 'bilinear', alignCorners: true });
  }
}

/** [*, C·r², H, W] → [*, C, H·r, W·r], PyTorch's `nn.PixelShuffle(upscaleFactor)` (`F.pixelShuffle`). */
export class PixelShuffle extends Module {
  /** `new nn.PixelShuffle(upscaleFactor)`. */
  constructor(
    /** The factor r each spatial dim grows by. */
    readonly upscaleFactor: number,
  ) {
    super();
  }

  forward(input: Tensor): Tensor {
    return pixelShuffle(input, this.upscaleFactor);
  }

  override extraRepr(): string {
    return `upscaleFactor=${this.upscaleFactor}`;
  }
}

/** [*, C, H·r, W·r] → [*, C·r², H, W], PyTorch's `nn.PixelUnshuffle(downscaleFactor)` (`F.pixelUnshuffle`). */
export class PixelUnshuffle extends Module {
  /** `new nn.PixelUnshuffle(downscaleFactor)`. */
  constructor(
    /** The factor r each spatial dim shrinks by. */
    readonly downscaleFactor: number,
  ) {
    super();
  }

  forward(input: Tensor): Tensor {
    return pixelUnshuffle(input, this.downscaleFactor);
  }

  override extraRepr(): string {
    return `downscaleFactor=${this.downscaleFactor}`;
  }
}
