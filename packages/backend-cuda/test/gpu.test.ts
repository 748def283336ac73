// On a machine with an NVIDIA GPU and driver (skipped elsewhere, with the reason; or run it on the
// fake driver: LD_LIBRARY_PATH=build/fake-driver npx vitest run test/gpu.test.ts): results of the
// cuda backend against the cpu backend, both GEMM paths (cuBLASLt and our tiled / tensor-core
// kernels), the fused addcmul kernel against its decomposition (bit for bit: nvcc must not contract it
// into an FMA), pinned non-blocking copies, memory accounting, and the whole conformance suite with
// our own GEMM kernels (the integration tests run it again with cuBLASLt, the default).
import { describe, expect, it } from 'vitest';
import '@core/backend-cpu';
import { describeConformance } from '@core/conformance/vitest';
import { availableDevices, bfloat16, float16, float32, getBackend, manualSeed, randn, setFusedKernelsEnabled, tensor, type DType, type Tensor } from '@core/tensor';
import { createCudaBackend, probeCuda, type CudaBackend, type GemmMode } from '../src/index.js';

const probe = probeCuda();
const suite = probe.available ? describe : describe.skip;
if (!probe.available) console.log(`[cuda] GPU tests skipped: ${probe.reason}`);

async function cuda(): Promise<CudaBackend> {
  await availableDevices();
  return getBackend('cuda') as CudaBackend;
}

function maxRelError(got: Float32Array, want: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!) / (1 + Math.abs(want[i]!)));
  return worst;
}

suite('cuda on a GPU', () => {
  it('reports its devices', async () => {
    const b = await cuda();
    expect(b.deviceCount).toBeGreaterThan(0);
    expect(b.devices[0]!.computeCapability).toMatch(/^\d+\.\d+$/);
  });

  const cases: [DType, number][] = [[float32, 1e-5], [float16, 2e-2], [bfloat16, 8e-2]];
  for (const mode of ['own', 'auto'] as GemmMode[]) {
    for (const [dtype, tol] of cases) {
      it(`matmul ${dtype.name} with gemm '${mode}' matches the cpu backend (odd sizes, transposed, batched)`, async () => {
        const b = await cuda();
        b.setGemmMode(0, mode);
        manualSeed(7);
        for (const [bt, m, k, n] of [[1, 1, 1, 1], [3, 65, 33, 17], [2, 128, 256, 96], [1, 257, 129, 255]] as const) {
          const x = randn([bt, k, m]).transpose(1, 2).to(dtype); // a read through strides
          const w = randn([1, k, n]).expand([bt, k, n]).to(dtype);  // b broadcast over the batch
          const want = (await x.to(float32).matmul(w.to(float32)).toArray()) as unknown;
          const got = (await x.to('cuda').matmul(w.to('cuda')).to(float32).toArray()) as unknown;
          const flat = (v: unknown) => new Float32Array((v as number[]).flat(3) as number[]);
          expect(maxRelError(flat(got), flat(want))).toBeLessThan(tol * Math.sqrt(k));
        }
        const s = b.stats(0);
        if (mode === 'own') expect(s.cublasLtCalls).toBe(0);
        b.setGemmMode(0, 'auto');
      });
    }
  }

  it('p.add(g, alpha) is one launch of the fused addcmul kernel with the decomposition\'s bits (the product rounded before the sum: no FMA)', async () => {
    const b = await cuda();
    manualSeed(9);
    const p = randn([4097]).to('cuda');
    const g = randn([4097]).to('cuda');
    // −1 + (1 + 2^-23)(1 − 2^-23): +0 with the product rounded to float first, −2^-46 with an FMA.
    const x = tensor([-1]).to('cuda');
    const t = tensor([1 + 2 ** -23]).to('cuda');
    const bits = async (y: Tensor) => Array.from(new Uint32Array(Float32Array.from(await y.data(), Number).buffer));
    const run = async (fused: boolean) => {
      setFusedKernelsEnabled(fused);
      try {
        p.add(g, -0.01); // its scalar reaches the device once
        const before = b.stats(0).launches;
        const y = p.add(g, -0.01);
        const launches = b.stats(0).launches - before;
        return { launches, y: await bits(y), cancelled: await bits(x.add(t, 1 - 2 ** -23)) };
      } finally {
        setFusedKernelsEnabled(true);
      }
    };
    const fused = await run(true);
    const decomposed = await run(false);
    expect([fused.launches, decomposed.launches]).toEqual([1, 2]);
    expect(fused.cancelled).toEqual([0]);
    expect(fused.y).toEqual(decomposed.y);
    expect(fused.cancelled).toEqual(decomposed.cancelled);
  });

  it('a pinned tensor copies with nonBlocking and arrives intact', async () => {
    await cuda();
    manualSeed(1);
    const host = randn([1024, 257]).pinMemory();
    expect(host.isPinned()).toBe(true);
    const dev = host.to('cuda', { nonBlocking: true });
    const back = await dev.mul(2).toAsync('cpu');
    const a = (await host.mul(2).toArray()) as number[][];
    expect(await back.toArray()).toEqual(a);
  });

  it('device memory is accounted and reported to V8 as external memory', async () => {
    const b = await cuda();
    const external0 = process.memoryUsage().external;
    const t = randn([1024, 1024]).to('cuda');
    const during = b.memoryStats(0);
    expect(during.allocatedBytes).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    expect(during.reservedBytes).toBeGreaterThanOrEqual(during.allocatedBytes);
    expect(process.memoryUsage().external - external0).toBeGreaterThanOrEqual(0);
    // Measured around the dispose alone: before it, core may free tensors earlier tests dropped
    // (it reclaims collected tensors at every allocation), which would move a before/after pair.
    t.dispose();
    expect(during.allocatedBytes - b.memoryStats(0).allocatedBytes).toBe(4 * 1024 * 1024);
  });
});

// On the fake driver test/fake-driver.test.ts already runs the suite; on a real GPU it runs here.
if (probe.available && !probe.devices[0]!.name.startsWith('Fake CUDA device')) {
  describeConformance(async () => {
    const backend = await createCudaBackend({ gemm: 'own' });
    return backend;
  }, { name: 'cuda (own GEMM kernels)', strict: false });
}
