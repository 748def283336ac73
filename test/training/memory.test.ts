// Memory stays flat without dispose() in the loops PyTorch users write, including loops that never
// yield to the event loop (docs/guides/memory.md). Each loop runs in its own Node process
// (fixtures/memory-loop.mjs), so what it leaves behind is measured alone and a heap limit can be set.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('./fixtures/memory-loop.mjs', import.meta.url));
const MiB = 2 ** 20;

interface Run {
  readonly samples: number[];
  readonly heapUsed: number;
  readonly stderr: string;
}

async function runLoop(args: string[], options: { env?: Record<string, string>; nodeArgs?: string[] } = {}): Promise<Run> {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [...(options.nodeArgs ?? []), FIXTURE, ...args], {
    env: { ...process.env, ...options.env },
    maxBuffer: 64 * MiB,
  });
  const last = stdout.trim().split('\n').pop()!;
  return { ...(JSON.parse(last) as { samples: number[]; heapUsed: number }), stderr };
}

const max = (xs: readonly number[]) => xs.reduce((a, b) => Math.max(a, b), 0);

describe('memory without dispose() or yielding', () => {
  it('a loop that never yields frees the tensors it drops: 4,000 × (256×256 add) peak far below the 1 GiB they add up to', async () => {
    const { samples, stderr } = await runLoop(['sync-add', '4000']);
    expect(samples).toHaveLength(4000);
    // Reclaim runs once the bytes not yet freed pass what was live after the last one plus 64 MiB (or twice the JS heap).
    expect(max(samples)).toBeLessThan(160 * MiB);
    expect(stderr).not.toContain('waiting to be freed');
  });

  it("an op's temporary copies stay alive until its kernel has run, though a reclaim may run between them: 1,500 attention-score matmuls", async () => {
    // Each matmul copies both operands, and a kernel used to get the first copy's memory after
    // the second copy's allocation had reclaimed it: 'used after free()' within ~1,000 iterations.
    const { samples } = await runLoop(['copied-operands', '1500']);
    expect(samples).toHaveLength(15);
    expect(max(samples)).toBeLessThan(160 * MiB);
  });

  it('next to 192 MiB of live tensors, garbage is reclaimed past 64 MiB more, not past twice the live bytes: 3,000 × (256×256 add)', async () => {
    const { samples } = await runLoop(['large-live', '3000']);
    const live = samples[0]!; // the three kept tensors and the operand
    expect(live).toBeGreaterThan(192 * MiB);
    // The watermark is the live bytes plus 64 MiB (the JS heap here is far smaller): with twice the
    // live bytes, ~190 MiB of dropped results piled up before each reclaim.
    expect(max(samples) - live).toBeLessThan(72 * MiB);
  });

  it('dropping 24 MiB tensors, the headroom is four times that (96 MiB), not 64 MiB: large tensors that come and go do not force a collection as often', async () => {
    const { samples } = await runLoop(['large-tensors', '40']);
    // Past the operand (24 MiB; samples[0] still holds randn's dropped draws): the newest result and
    // those dropped before the reclaim that frees them. 64 MiB of headroom leaves 2 results in all
    // (48 MiB), 96 MiB leaves 4.
    const results = max(samples.slice(1)) - 24 * MiB;
    expect(results).toBeGreaterThan(88 * MiB);
    expect(results).toBeLessThan(97 * MiB);
  });

  it('200k-iteration style: randn([16]).mul(2).add(1) in a synchronous loop runs in a 128 MiB heap', async () => {
    // Without synchronous reclaim the finalization records alone pass 128 MiB by ~17k iterations and the process aborts.
    const { heapUsed } = await runLoop(['randn', '30000'], { nodeArgs: ['--max-old-space-size=128'] });
    expect(heapUsed).toBeLessThan(128 * MiB);
  });

  it('a training loop whose only await is loss.item() stays flat: 1,000 steps, no collection forced, within the reclaim bound', async () => {
    const { samples } = await runLoop(['item-loop', '1000']);
    expect(samples).toHaveLength(1000);
    // Unfreed, each step's ~250 KiB of dropped tensors would add up to ~250 MiB (measured without the reclaim).
    expect(max(samples)).toBeLessThan(samples[10]! + 72 * MiB);
  });

  it('awaiting loss.item() alone frees what each step dropped (the read resolves after a turn of the event loop, where finalizers run), also without synchronous reclaim', async () => {
    for (const env of [{}, { CORE_SYNC_RECLAIM: '0' }] as Record<string, string>[]) {
      const { samples } = await runLoop(['item-loop', '400'], { env, nodeArgs: ['--expose-gc'] });
      // After a collection and the read, only the model, its state, the data and the loss are live.
      expect(max(samples.slice(-100))).toBeLessThanOrEqual(samples[10]! + MiB);
    }
  });

  it('a compile()d training step called 3,000 times without yielding stays flat: each replay allocates only the loss it returns', async () => {
    const run = (await runLoop(['compiled-steps', '3000'])) as Run & { allocations: number[]; replays: number };
    const { samples, allocations, replays } = run;
    expect(samples).toHaveLength(3000);
    expect(replays).toBe(2997); // call 1 creates SGD's momentum buffers, calls 2 and 3 are compared
    // Eager calls allocate dozens of storages; each replay exactly one: the 0-dim float32 loss it returns.
    expect(allocations.slice(0, 3).every((a) => a > 20)).toBe(true);
    expect(new Set(allocations.slice(3))).toEqual(new Set([1]));
    // The program's storages are reused by every replay: past step 10 the bytes can grow only by the
    // dropped 4-byte losses the collector has not reached yet (12 KiB at most in all).
    expect(max(samples.slice(10))).toBeLessThanOrEqual(samples[9]! + (3000 - 10) * 4);
    // The memory plan: intermediates whose lifetimes do not overlap share one storage, and the
    // capture's other storages are freed once the program is built (the capture held every one).
    expect(samples[9]!).toBeLessThan(samples[2]!);
  });

  it("optimizer state made while a call is recorded does not keep the recording's intermediates alive: compile()d calls 1 and 2 hold what an eager step holds", async () => {
    const { samples } = await runLoop(['traced-state'], { nodeArgs: ['--expose-gc'] });
    const [afterEager, afterCall1, afterCall2] = samples as [number, number, number];
    // Past the eager step: the second model and its Adam state (~1.6 MiB each of weights, two
    // moments and a gradient: ~6.5 MiB). The step's intermediates (4 MiB activations, their
    // gradients) were kept as long as the state lived before storages stopped reaching the recording.
    expect(afterCall1 - afterEager).toBeLessThan(8 * MiB);
    expect(afterCall2 - afterEager).toBeLessThan(8 * MiB);
  });

  it("a compiled function that is dropped gives its program's storages back: 40 rounds of compile, 4 calls, drop stay flat", async () => {
    const { samples } = await runLoop(['dropped-compiled', '40'], { nodeArgs: ['--expose-gc'] });
    expect(samples).toHaveLength(40);
    // Each program holds ~100 KiB of captured storages (the step's intermediates and gradients);
    // kept, 40 of them would add up to 4 MiB. Released, only the rounds not yet collected remain.
    expect(max(samples.slice(-10))).toBeLessThan(samples[4]! + 512 * 1024);
  });

  it('where the engine cannot reclaim synchronously, a loop that never yields gets one warning that says what to do', async () => {
    const { stderr } = await runLoop(['sync-add', '1000'], { env: { CORE_SYNC_RECLAIM: '0' } });
    const warnings = stderr.split('\n').filter((l) => l.includes('waiting to be freed'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('has not yielded');
    expect(warnings[0]).toContain('await loss.item()');
    expect(warnings[0]).toContain('dispose()');
  });
});
