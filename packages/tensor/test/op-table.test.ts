// The op table drives the contract's primitive lists, the autocast policies and the Tensor
// methods. The method declarations are generated from it into src/generated/tensor-methods.ts; this
// test renders them again and fails when the file is stale. Regenerate with
//   UPDATE_GENERATED=1 npx -y pnpm@12.4.2 --filter @core/tensor exec vitest run test/op-table.test.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OP_TABLE, type OpEntry } from '../src/ops/table.js';
import { METHODS } from '../src/ops/methods.js';
import { ARG_REDUCE_OPS, autocastPolicy, BINARY_OPS, COMPARE_OPS, REDUCE_OPS, Tensor, UNARY_OPS } from '../src/index.js';

const GENERATED = fileURLToPath(new URL('../src/generated/tensor-methods.ts', import.meta.url));

/** The method signature(s) of an entry, or none for a function-only op. */
function signatures(entry: OpEntry): readonly string[] {
  switch (entry.kind) {
    case 'unary': return ['(): Tensor'];
    case 'compare': return ['(other: TensorOrScalar): Tensor'];
    case 'binary': return [entry.signature ?? '(other: TensorOrScalar): Tensor'];
    case 'composite': return typeof entry.signature === 'string' ? [entry.signature] : entry.signature;
    case 'implemented': return entry.signature === undefined ? [] : typeof entry.signature === 'string' ? [entry.signature] : entry.signature;
  }
}

/** Splits `a: X, b?: { c: Y, d: Z }` at its top-level commas. */
function topLevelParams(list: string): string[] {
  const params: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    if ('([{<'.includes(c)) depth++;
    else if (')]}>'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      params.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (list.slice(start).trim() !== '') params.push(list.slice(start).trim());
  return params;
}

function render(): string {
  const lines = [
    '// Generated from the op table (src/ops/table.ts) by test/op-table.test.ts: do not edit. Regenerate with',
    '//   UPDATE_GENERATED=1 npx -y pnpm@12.4.2 --filter @core/tensor exec vitest run test/op-table.test.ts',
    "import type { DType } from '../dtype/dtype.js';",
    "import type { IndexSpec } from '../ops/advanced-indexing.js';",
    "import type { FactoryOptions, TensorData } from '../ops/creation.js';",
    "import type { UniqueOptions, UniqueResult } from '../ops/data-dependent.js';",
    "import type { ValuesIndices } from '../ops/reduce.js';",
    "import type { Generator } from '../random/generator.js';",
    "import type { Tensor, TensorOrScalar } from '../tensor/tensor.js';",
    '',
    '/** The op methods of `Tensor`, one per op of the table that has a method. */',
    'export interface TensorOps {',
  ];
  const functions: string[] = [];
  for (const [name, entry] of Object.entries(OP_TABLE) as [string, OpEntry][]) {
    const sigs = signatures(entry);
    if (sigs.length === 0) continue;
    for (const sig of sigs) lines.push(`  /** ${entry.doc} */`, `  ${name}${sig};`);
    if ((entry.kind === 'composite' || entry.kind === 'implemented') && entry.fn) functions.push('', ...functionForm(name, entry.doc, sigs));
  }
  lines.push('}', ...functions, '');
  return lines.join('\n');
}

/** `torch.X(input, …)`: one function, or overloads that pass their arguments on as they came. */
function functionForm(name: string, doc: string, sigs: readonly string[]): string[] {
  const comment = `/** ${doc} The function form of \`Tensor.${name}\`. */`;
  const withInput = (sig: string) => {
    const close = sig0Close(sig);
    const params = topLevelParams(sig.slice(1, close));
    return { params, head: `export function ${name}(input: Tensor${params.map((p) => `, ${p}`).join('')})${sig.slice(close + 1)}` };
  };
  if (sigs.length === 1) {
    const { params, head } = withInput(sigs[0]!);
    return [comment, `${head} {`, `  return input.${name}(${params.map((p) => p.split(/[?:]/)[0]!.trim()).join(', ')});`, '}'];
  }
  return [
    ...sigs.flatMap((sig) => [comment, `${withInput(sig).head};`]),
    `export function ${name}(input: Tensor, ...args: unknown[]): unknown {`,
    `  return (input.${name} as (...args: unknown[]) => unknown)(...args);`,
    '}',
  ];
}

/** The index of the `)` that closes a signature's parameter list. */
function sig0Close(sig: string): number {
  let depth = 0;
  for (let i = 0; i < sig.length; i++) {
    if (sig[i] === '(') depth++;
    else if (sig[i] === ')' && --depth === 0) return i;
  }
  throw new Error(`unbalanced signature ${sig}`);
}

describe('the op table', () => {
  it('generated the Tensor method declarations (src/generated/tensor-methods.ts)', () => {
    const fresh = render();
    if (process.env.UPDATE_GENERATED) writeFileSync(GENERATED, fresh);
    expect(readFileSync(GENERATED, 'utf8'), 'stale: regenerate with UPDATE_GENERATED=1 (see the header of this test)').toBe(fresh);
  });

  it('gives every op with a signature a method on the prototype, and no method without an entry', () => {
    for (const [name, entry] of Object.entries(OP_TABLE) as [string, OpEntry][]) {
      expect(typeof (Tensor.prototype as unknown as Record<string, unknown>)[name], name).toBe(signatures(entry).length > 0 ? 'function' : 'undefined');
    }
    const fromTable = Object.keys(METHODS).filter((name) => name in OP_TABLE);
    expect(fromTable.sort()).toEqual(Object.entries(OP_TABLE).filter(([, e]) => signatures(e as OpEntry).length > 0).map(([n]) => n).sort());
  });

  it("derives the contract's primitive lists, in table order", () => {
    const kinds = (kind: string) => Object.entries(OP_TABLE).filter(([, e]) => e.kind === kind).map(([n]) => n);
    expect(UNARY_OPS).toEqual(kinds('unary'));
    expect(BINARY_OPS).toEqual(kinds('binary'));
    expect(COMPARE_OPS).toEqual(kinds('compare'));
    const kernels = (kernel: string) => Object.entries(OP_TABLE).filter(([, e]) => 'kernel' in e && e.kernel === kernel).map(([n]) => n);
    expect(REDUCE_OPS).toEqual(kernels('reduce'));
    expect(REDUCE_OPS).toEqual(['sum', 'prod', 'max', 'min']); // the order backends' op codes follow
    expect(ARG_REDUCE_OPS).toEqual(['argmax', 'argmin']);
    expect(Object.isFrozen(UNARY_OPS)).toBe(true);
  });

  it('derives the autocast policies from its autocast column (AC-8..AC-13)', () => {
    const cuda = autocastPolicy('cuda')!;
    expect(cuda.lowerPrecision).toContain('matmul');
    expect(cuda.fp32).toContain('logsumexp');
    expect(cuda.fp32FirstArg).toContain('softmax');
    expect(cuda.promote).toContain('atan2');
    expect(cuda.banned.binaryCrossEntropy).toMatch(/unsafe to autocast/);
    expect(autocastPolicy('cpu')!.fp32).toContain('prod');
    expect(autocastPolicy('webgpu')!.fp32).toEqual(cuda.fp32);
  });
});
