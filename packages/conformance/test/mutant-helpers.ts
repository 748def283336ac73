export type { Backend, TensorRef } from '@core/tensor';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
export function float32BitsFromNumber(x: number): number {
  f32[0] = x;
  return u32[0]!;
}
