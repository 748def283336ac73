// Grad mode and inference mode as state: what noGrad / enableGrad / inferenceMode set, what they
// restore (also when fn throws), whether ops record (isRecording), and which storages are marked
// as inference storages. No backend needed.
import { describe, expect, it } from 'vitest';
import {
  enableGrad, inferenceMode, isGradEnabled, isInferenceModeEnabled, isInferenceStorage, isRecording, noGrad, noteAllocation, setGradEnabled,
} from '../../src/autograd/grad-mode.js';
import type { Storage } from '../../src/tensor/storage.js';

const modes = () => ({ grad: isGradEnabled(), inference: isInferenceModeEnabled(), recording: isRecording() });

describe('grad mode and inference mode', () => {
  it('default: grad on, inference off, recording', () => {
    expect(modes()).toEqual({ grad: true, inference: false, recording: true });
  });

  it('inferenceMode: grad off and inference on; enableGrad inside turns grad on but still records nothing', () => {
    inferenceMode(() => {
      expect(modes()).toEqual({ grad: false, inference: true, recording: false });
      enableGrad(() => expect(modes()).toEqual({ grad: true, inference: true, recording: false }));
      noGrad(() => expect(modes()).toEqual({ grad: false, inference: true, recording: false }));
    });
    expect(modes()).toEqual({ grad: true, inference: false, recording: true });
  });

  it('restores both modes when fn throws', () => {
    expect(() => inferenceMode(() => { throw new Error('boom'); })).toThrow('boom');
    expect(modes()).toEqual({ grad: true, inference: false, recording: true });
    noGrad(() => {
      expect(() => enableGrad(() => { throw new Error('boom'); })).toThrow('boom');
      expect(modes()).toEqual({ grad: false, inference: false, recording: false });
    });
  });

  it('setGradEnabled changes grad mode only', () => {
    const before = setGradEnabled(false);
    try {
      expect(before).toBe(true);
      expect(modes()).toEqual({ grad: false, inference: false, recording: false });
    } finally {
      setGradEnabled(before);
    }
  });

  it('only storages allocated inside inferenceMode are inference storages', () => {
    const outside = {} as Storage;
    const inside = {} as Storage;
    noteAllocation(outside);
    inferenceMode(() => noteAllocation(inside));
    expect(isInferenceStorage(outside)).toBe(false);
    expect(isInferenceStorage(inside)).toBe(true);
  });
});
