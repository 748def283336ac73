// Per-backend expectations: a JSON file listing case ids the backend is known to skip or fail, each
// with the reason. Exact ids only (no name matching): an entry that matches no case is reported as
// stale, and a listed xfail that passes is reported as xpass; both fail a --strict run.

/** 'skip': do not run the case; 'xfail': run it and expect it to fail. */
export type ExpectationStatus = 'skip' | 'xfail';

/** One known gap of a backend: a case id, what to expect of it, and why. */
export interface Expectation {
  /** The exact case id. */
  readonly id: string;
  /** skip or xfail. */
  readonly status: ExpectationStatus;
  /** Why (shown in the report). */
  readonly reason: string;
}

/** The JSON format of a backend's expectations file. */
export interface ExpectationsFile {
  /** The device type the file is for (informational; checked against the backend under test). */
  readonly backend?: string;
  /** The known gaps. */
  readonly expectations: readonly Expectation[];
}

/** Validate parsed JSON and index it by case id. */
export function parseExpectations(json: unknown, source = 'expectations'): Map<string, Expectation> {
  const file = json as ExpectationsFile;
  if (typeof file !== 'object' || file === null || !Array.isArray(file.expectations)) {
    throw new TypeError(`${source}: expected { "backend": "...", "expectations": [{ "id", "status", "reason" }] }`);
  }
  const byId = new Map<string, Expectation>();
  file.expectations.forEach((e, i) => {
    const where = `${source}: expectations[${i}]`;
    if (typeof e?.id !== 'string' || e.id === '') throw new TypeError(`${where}: "id" must be a case id`);
    if (e.status !== 'skip' && e.status !== 'xfail') throw new TypeError(`${where} (${e.id}): "status" must be "skip" or "xfail", got ${JSON.stringify(e.status)}`);
    if (typeof e.reason !== 'string' || e.reason.trim().length < 10) throw new TypeError(`${where} (${e.id}): every entry needs a written "reason"`);
    if (byId.has(e.id)) throw new TypeError(`${where}: duplicate id ${e.id}`);
    byId.set(e.id, { id: e.id, status: e.status, reason: e.reason });
  });
  return byId;
}
