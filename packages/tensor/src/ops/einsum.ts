// einsum: the equation parsed into one label per dim, each operand's repeated labels reduced to
// their diagonal, labels that nothing later needs summed away as early as possible, and the
// operands contracted in pairs, left to right, by one batched matrix product each (permute,
// expand, reshape, bmm). Size-1 dims broadcast against their label's size. Written with Tensor
// methods, so autograd and every backend follow; in a CUDA (and webgpu) autocast region it runs in
// lower precision (AC-8).
import { ShapeError } from '../errors/errors.js';
import { Tensor } from '../tensor/tensor.js';
import { autocastIdle, autocastOp } from '../amp/autocast.js';

/** An operand on its way through the contraction: a tensor and the label of each of its dims. */
interface Term {
  readonly t: Tensor;
  readonly labels: readonly string[];
}

const ELLIPSIS = '...';

function fail(message: string): never {
  throw new ShapeError(`einsum(): ${message}`, 'einsum');
}

/** How a label reads in messages: the dims an ellipsis covers are labelled '.0', '.1', … inside. */
function shown(label: string): string {
  return label.startsWith('.') ? ELLIPSIS : label;
}

/** The subscripts of one side of the equation (letters, at most one '...'); `offset` is where it starts in the equation. */
function subscripts(side: string, offset: number, what: string): string[] {
  const labels: string[] = [];
  for (let i = 0; i < side.length; i++) {
    const c = side[i]!;
    if (c === ' ') continue;
    if (c === '.') {
      if (side.slice(i, i + 3) !== ELLIPSIS) fail(`found '.' for ${what} that is not part of any ellipsis`);
      if (labels.includes(ELLIPSIS)) fail(`found '...' for ${what} for which an ellipsis was already found`);
      labels.push(ELLIPSIS);
      i += 2;
    } else if (/^[a-zA-Z]$/.test(c)) {
      labels.push(c);
    } else {
      fail(`invalid subscript given at index ${offset + i} in the equation string, subscripts must be in [a-zA-Z]`);
    }
  }
  return labels;
}

/** Each operand's label per dim (ellipses expanded, right-aligned across operands) and the output's labels. */
function parse(equation: string, operands: readonly Tensor[]): { inputs: string[][]; output: string[] } {
  const arrow = equation.indexOf('->');
  const lhs = arrow < 0 ? equation : equation.slice(0, arrow);
  let offset = 0;
  const terms = lhs.split(',').map((side, k) => {
    const labels = subscripts(side, offset, `operand ${k}`);
    offset += side.length + 1;
    return labels;
  });
  if (terms.length < operands.length) fail('more operands were provided than specified in the equation');
  if (terms.length > operands.length) fail('fewer operands were provided than specified in the equation');
  const covered = terms.map((labels, k) => {
    const letters = labels.filter((l) => l !== ELLIPSIS).length;
    const rank = operands[k]!.ndim;
    if (!labels.includes(ELLIPSIS) && letters !== rank) {
      fail(`the number of subscripts in the equation (${letters}) does not match the number of dimensions (${rank}) for operand ${k} and no ellipsis was given`);
    }
    if (letters > rank) fail(`the number of subscripts in the equation (${letters}) is more than the number of dimensions (${rank}) for operand ${k}`);
    return labels.includes(ELLIPSIS) ? rank - letters : 0;
  });
  const ellipsis = Array.from({ length: Math.max(0, ...covered) }, (_, k) => `.${k}`);
  const inputs = terms.map((labels, k) => labels.flatMap((l) => (l === ELLIPSIS ? ellipsis.slice(ellipsis.length - covered[k]!) : [l])));
  if (arrow < 0) {
    // Implicit output: the ellipsis dims, then the subscripts that appear once, in alphabetical order (upper case first).
    const once = [...new Set(inputs.flat())].filter((l) => !l.startsWith('.') && inputs.flat().filter((m) => m === l).length === 1);
    return { inputs, output: [...ellipsis, ...once.sort()] };
  }
  const rhs = subscripts(equation.slice(arrow + 2), arrow + 2, 'output');
  rhs.forEach((l, i) => {
    if (l === ELLIPSIS) return;
    if (rhs.indexOf(l) !== i) fail(`output subscript ${l} appears more than once in the output`);
    if (!inputs.some((labels) => labels.includes(l))) fail(`output subscript ${l} does not appear in the equation for any input operand`);
  });
  return { inputs, output: rhs.flatMap((l) => (l === ELLIPSIS ? ellipsis : [l])) };
}

/** A label's size in a term (undefined when the term lacks it). */
function sizeIn(term: Term, label: string): number | undefined {
  const i = term.labels.indexOf(label);
  return i < 0 ? undefined : term.t.shape[i];
}

/** An operand with each repeated label reduced to its diagonal (`ii` → `i`). */
function diagonals(t: Tensor, labels: readonly string[], k: number): Term {
  let term: Term = { t, labels };
  for (;;) {
    const ls = term.labels;
    const second = ls.findIndex((l, i) => ls.indexOf(l) !== i);
    if (second < 0) return term;
    const first = ls.indexOf(ls[second]!);
    const [n, m] = [term.t.shape[first]!, term.t.shape[second]!];
    if (n !== m) fail(`subscript ${shown(ls[first]!)} is repeated for operand ${k} but the sizes don't match, ${n} != ${m}`);
    term = { t: term.t.diagonal(0, first, second), labels: [...ls.filter((_, i) => i !== first && i !== second), ls[first]!] };
  }
}

/** The term with the dims whose labels are not `needed` summed away. */
function sumOut(term: Term, needed: ReadonlySet<string>): Term {
  const dims = term.labels.flatMap((l, i) => (needed.has(l) ? [] : [i]));
  if (dims.length === 0) return term;
  return { t: term.t.sum(dims), labels: term.labels.filter((l) => needed.has(l)) };
}

/** Two terms contracted by one batched product: shared labels in `keep` are batch dims, other shared labels are summed. */
function contract(a: Term, b: Term, keep: ReadonlySet<string>): Term {
  const shared = a.labels.filter((l) => b.labels.includes(l));
  const batch = shared.filter((l) => keep.has(l));
  const summed = shared.filter((l) => !keep.has(l));
  const aOnly = a.labels.filter((l) => !b.labels.includes(l));
  const bOnly = b.labels.filter((l) => !a.labels.includes(l));
  // A size-1 dim broadcasts against the other operand's size for the same label.
  const size = (l: string) => {
    const [sa, sb] = [sizeIn(a, l), sizeIn(b, l)];
    return sa === undefined ? sb! : sb === undefined || sa !== 1 ? sa : sb;
  };
  const product = (ls: readonly string[]) => ls.reduce((n, l) => n * size(l), 1);
  const arranged = (term: Term, order: readonly string[], rows: readonly string[], cols: readonly string[]) =>
    term.t.permute(order.map((l) => term.labels.indexOf(l))).expand(order.map(size)).reshape([product(batch), product(rows), product(cols)]);
  const left = arranged(a, [...batch, ...aOnly, ...summed], aOnly, summed);
  const right = arranged(b, [...batch, ...summed, ...bOnly], summed, bOnly);
  const labels = [...batch, ...aOnly, ...bOnly];
  return { t: left.bmm(right).reshape(labels.map(size)), labels };
}

function einsumOf(equation: string, operands: readonly Tensor[]): Tensor {
  const { inputs, output } = parse(equation, operands);
  const terms = operands.map((t, k) => diagonals(t, inputs[k]!, k));
  // Labels of one name must have one size, or be 1 (which broadcasts).
  const sizes = new Map<string, number>();
  terms.forEach((term, k) => term.labels.forEach((l, i) => {
    const [seen, s] = [sizes.get(l), term.t.shape[i]!];
    if (seen === undefined || seen === 1) sizes.set(l, s);
    else if (s !== 1 && s !== seen) fail(`operands do not broadcast: subscript ${shown(l)} has size ${seen} in an earlier operand but ${s} in operand ${k}`);
  }));
  const needed = (from: number, ...more: Term[]) => new Set([...output, ...[...terms.slice(from), ...more].flatMap((t) => t.labels)]);
  let acc = sumOut(terms[0]!, needed(1));
  for (let k = 1; k < terms.length; k++) {
    const keep = needed(k + 1);
    const next = sumOut(terms[k]!, needed(k + 1, acc));
    acc = contract(sumOut(acc, needed(k)), next, keep);
  }
  acc = sumOut(acc, new Set(output));
  return acc.t.permute(output.map((l) => acc.labels.indexOf(l)));
}

/**
 * Einstein summation (`torch.einsum`): `equation` names each operand's dims with letters (`...`
 * for any number of broadcast dims), and the output's after `->` (without it: the letters that
 * appear once, in alphabetical order, after the ellipsis dims). A letter repeated in one operand
 * takes its diagonal; letters missing from the output are summed. The operands come as arguments
 * or as one array. Computed as batched matrix products, so the gradient flows to every operand.
 */
export function einsum(equation: string, ...operands: Tensor[] | [readonly Tensor[]]): Tensor {
  if (typeof equation !== 'string') throw new TypeError(`einsum(): argument 'equation' must be a string, not ${typeof equation}`);
  const list: readonly unknown[] = operands.length === 1 && Array.isArray(operands[0]) ? operands[0] : operands;
  list.forEach((t, k) => {
    if (!(t instanceof Tensor)) throw new TypeError(`einsum(): operand ${k} must be a Tensor, not ${Array.isArray(t) ? 'an array' : typeof t}`);
  });
  const tensors = list as readonly Tensor[];
  if (tensors.length === 0) fail('must provide at least one operand');
  if (autocastIdle()) return einsumOf(equation, tensors);
  return autocastOp('einsum', tensors, (...ts) => einsumOf(equation, ts));
}
