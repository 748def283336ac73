// Every op of core's op table has conformance cases: an OpInfo named after it (or after one of
// its forms, e.g. `max(dim).values`). The suite reads only the table's names, never its formulas,
// so the oracle stays independent of what it checks.
import { describe, expect, it } from 'vitest';
import { OP_TABLE } from '@core/tensor';
import { OPS } from '../src/ops/index.js';

describe('conformance coverage of the op table', () => {
  it('has an OpInfo for every op in the table', () => {
    const covered = (op: string) => OPS.some((info) => info.name === op || info.name.startsWith(`${op}(`));
    const missing = Object.keys(OP_TABLE).filter((op) => !covered(op));
    expect(missing, 'ops of the table without conformance cases: add an OpInfo (packages/conformance/src/ops) for each').toEqual([]);
  });

  it("runs a composite fused and decomposed when the table names its fused kernel", () => {
    for (const [op, entry] of Object.entries(OP_TABLE)) {
      if (!('fused' in entry) || entry.fused === undefined) continue;
      const infos = OPS.filter((info) => info.name === op);
      if (infos.length === 0) continue; // reported by the test above
      expect(infos.some((info) => info.fused === entry.fused), `${op}'s OpInfo names fused: '${entry.fused}'`).toBe(true);
    }
  });
});
