// Autocast (AC-1..AC-16): inside a region, listed ops cast their floating inputs per the device
// type's policy table. The state is per device type; regions nest; casts of float32 leaf weights
// are cached until the outermost region exits.
import { isAvailable, getBackend, listBackends } from '../backend/registry.js';
import { float32, float64, type DType } from '../dtype/dtype.js';
import { DTypeError, TensorError, ValueError } from '../errors/errors.js';
import { Tensor } from '../tensor/tensor.js';
import { BUILTIN_POLICIES, type AutocastPolicyTable } from './policies.js';
import { OP_TABLE, type AutocastClass, type OpName } from '../ops/table.js';

/** How `autocast` opens a region (PyTorch's `torch.autocast` arguments). */
export interface AutocastOptions {
  /** The device type whose ops are autocast: 'cuda', 'cpu', 'webgpu', or a registered third party's. */
  readonly deviceType: string;
  /** The low-precision dtype (default: the table's, float16 on cuda/webgpu, bfloat16 on cpu). */
  readonly dtype?: DType;
  /** false runs `fn` without autocast, so one code path serves both (default true). */
  readonly enabled?: boolean;
  /** Cache casts of float32 leaf weights for the region (default: isAutocastCacheEnabled()). */
  readonly cacheEnabled?: boolean;
}

interface DeviceState {
  enabled: boolean;
  dtype: DType;
}

const policies = new Map<string, AutocastPolicyTable>(Object.entries(BUILTIN_POLICIES));
/** Per device type, each listed op's class: looked up once per op call instead of searching the lists. */
const classes = new Map<string, ReadonlyMap<OpName, AutocastClass>>();

function classesOf(deviceType: string, table: AutocastPolicyTable): ReadonlyMap<OpName, AutocastClass> {
  let map = classes.get(deviceType);
  if (map === undefined) {
    const entries = new Map<OpName, AutocastClass>();
    for (const kind of ['promote', 'fp32FirstArg', 'fp32', 'lowerPrecision'] as const) for (const op of table[kind]) entries.set(op, kind);
    for (const [op, banned] of Object.entries(table.banned) as [OpName, string][]) entries.set(op, { banned });
    classes.set(deviceType, (map = entries));
  }
  return map;
}
const states = new Map<string, DeviceState>();
let cacheEnabled = true;
let nesting = 0;
/** >0 while a listed op (or an unlisted one with its own kernel in PyTorch) runs: ops it calls internally are not autocast again. */
let insideListedOp = 0;
const castCache = new Map<Tensor, Tensor>();

/** Declare (or replace) a device type's autocast policy table: how a third-party backend opts in. */
export function registerAutocastPolicy(deviceType: string, table: AutocastPolicyTable): void {
  if (typeof deviceType !== 'string' || deviceType.length === 0) throw new ValueError('registerAutocastPolicy: deviceType must be a non-empty string');
  if (!table.allowedDtypes.includes(table.defaultDtype)) {
    throw new ValueError(`registerAutocastPolicy(${deviceType}): the default dtype ${table.defaultDtype.name} must be one of its allowed dtypes`);
  }
  policies.set(deviceType, table);
  classes.delete(deviceType);
  // A state read before the table existed would keep float32 as its default dtype (AC-2).
  if (!states.get(deviceType)?.enabled) states.delete(deviceType);
}

/** The policy table in force for a device type (built-in or registered), or undefined when it has none. */
export function autocastPolicy(deviceType: string): AutocastPolicyTable | undefined {
  return policies.get(deviceType);
}

function stateOf(deviceType: string): DeviceState {
  let s = states.get(deviceType);
  if (!s) {
    s = { enabled: false, dtype: policies.get(deviceType)?.defaultDtype ?? float32 };
    states.set(deviceType, s);
  }
  return s;
}

/** Whether autocast is on for a device type (PyTorch's `torch.is_autocast_enabled(device_type)`). */
export function isAutocastEnabled(deviceType = 'cuda'): boolean {
  return states.get(deviceType)?.enabled ?? false;
}

/** The region dtype for a device type (AC-2: float16 on cuda, bfloat16 on cpu by default). */
export function getAutocastDtype(deviceType: string): DType {
  return stateOf(deviceType).dtype;
}

/** Whether regions cache the casts of float32 leaf weights by default (PyTorch's `torch.is_autocast_cache_enabled`). */
export function isAutocastCacheEnabled(): boolean {
  return cacheEnabled;
}

/** Turn the default weight-cast cache of autocast regions on or off. */
export function setAutocastCacheEnabled(on: boolean): void {
  cacheEnabled = on;
}

/** Drop every cached weight cast (done automatically when the outermost region exits). */
export function clearAutocastCache(): void {
  castCache.clear();
}

/** AC-3: the dtype a region will really use, or null when the region must be disabled (with a warning). */
function checkRegion(deviceType: string, table: AutocastPolicyTable, dtype: DType): DType | null {
  if (deviceType === 'cpu' && !table.allowedDtypes.includes(dtype)) {
    console.warn(
      'In CPU autocast, but the target dtype is not supported. Disabling autocast.\n' +
        `CPU Autocast only supports dtype of ${table.allowedDtypes.map((d) => `torch.${d.name}`).join(', ')} currently.`,
    );
    return null;
  }
  if (deviceType !== 'cpu' && !isAvailable(deviceType)) {
    // PyTorch's wording (AC-3) comes first, exactly; the reason follows it.
    const known = listBackends().includes(deviceType);
    console.warn(
      `User provided device_type of '${deviceType}', but ${deviceType === 'cuda' ? 'CUDA' : deviceType} is not available. Disabling` +
        (known ? '' : ` (no '${deviceType}' backend is registered)`),
    );
    return null;
  }
  if (!table.allowedDtypes.includes(dtype)) {
    throw new DTypeError(
      `In ${deviceType} autocast, but the target dtype ${dtype.name} is not supported: use one of ${table.allowedDtypes.map((d) => d.name).join(', ')}`,
      'autocast',
      dtype.name,
    );
  }
  if (isAvailable(deviceType) && !getBackend(deviceType).capabilities.dtypes[dtype.name]?.compute) {
    const other = table.allowedDtypes.find((d) => d !== dtype && getBackend(deviceType).capabilities.dtypes[d.name]?.compute);
    throw new DTypeError(
      `Current ${deviceType === 'cuda' ? 'CUDA Device' : `${deviceType} device`} does not support ${dtype.name}.${other ? ` Please switch dtype to ${other.name}.` : ''}`,
      'autocast',
      dtype.name,
    );
  }
  return dtype;
}

/** An entered region: leaving it restores the state it found (AC-4). */
export class AutocastRegion implements Disposable {
  private exited = false;

  constructor(
    private readonly deviceType: string,
    private readonly saved: DeviceState,
    private readonly savedCache: boolean,
  ) {}

  /** Leave the region, restoring the autocast state it found; a second call does nothing. */
  exit(): void {
    if (this.exited) return;
    this.exited = true;
    nesting--;
    if (nesting === 0) castCache.clear();
    states.set(this.deviceType, this.saved);
    cacheEnabled = this.savedCache;
  }

  /** `using _ = autocast({ … })` calls this at the end of the block: the same as `exit()`. */
  [Symbol.dispose](): void {
    this.exit();
  }
}

function enter(options: AutocastOptions): AutocastRegion {
  if (typeof options?.deviceType !== 'string') {
    throw new ValueError(`Expected \`device_type\` of type \`str\`, got: \`${typeof options?.deviceType}\``);
  }
  const { deviceType } = options;
  const table = policies.get(deviceType);
  if (!table) throw new ValueError(`User specified an unsupported autocast device_type '${deviceType}'`);
  let enabled = options.enabled ?? true;
  let dtype = options.dtype ?? table.defaultDtype;
  if (enabled) {
    const checked = checkRegion(deviceType, table, dtype);
    if (checked === null) enabled = false;
    else dtype = checked;
  }
  const saved = { ...stateOf(deviceType) };
  const region = new AutocastRegion(deviceType, saved, cacheEnabled);
  states.set(deviceType, { enabled, dtype });
  if (options.cacheEnabled !== undefined) cacheEnabled = options.cacheEnabled;
  nesting++;
  return region;
}

/**
 * Run `fn` with autocast on for `deviceType` (AC-1), or, without `fn`, enter a region for the
 * `using` form: `using _ = autocast({ deviceType: 'cuda' })`. `fn` must be synchronous.
 */
export function autocast<T>(options: AutocastOptions, fn: () => T): T;
export function autocast(options: AutocastOptions): AutocastRegion;
export function autocast<T>(options: AutocastOptions, fn?: () => T): T | AutocastRegion {
  const region = enter(options);
  if (!fn) return region;
  let result: T;
  try {
    result = fn();
  } finally {
    region.exit();
  }
  if (result instanceof Promise) {
    throw new TypeError('autocast(options, fn): fn must be synchronous; an async fn would leave the region before its awaits run. Use `using _ = autocast(options)` inside the async function instead.');
  }
  return result;
}

/** Run `fn` with every autocast region switched off (backward runs in the forward dtypes, AC-14). */
export function withoutAutocast<T>(fn: () => T): T {
  if (nesting === 0) return fn();
  insideListedOp++;
  try {
    return fn();
  } finally {
    insideListedOp--;
  }
}

function isTensor(x: unknown): x is Tensor {
  return x instanceof Tensor;
}

/** AC-6: a defined, floating, non-float64 tensor on the region's device type. */
function eligible(x: unknown, deviceType: string): x is Tensor {
  return isTensor(x) && x.dtype.isFloatingPoint && x.dtype !== float64 && x.device.type === deviceType;
}

/** A cast (`to(dtype)`: a method, so autocast imports no op), served from the region cache for float32 leaf weights (AC-15). */
function castCached(t: Tensor, dtype: DType, regionDtype: DType): Tensor {
  if (t.dtype === dtype) return t;
  const cacheable = cacheEnabled && dtype === regionDtype && t.dtype === float32 && t.isLeaf && t.requiresGrad;
  if (!cacheable) return t.to(dtype);
  let hit = castCache.get(t);
  if (!hit) {
    hit = t.to(dtype);
    castCache.set(t, hit);
  }
  return hit;
}

/** Flatten tensors inside arrays (cat/stack take lists). */
function eachTensor(args: readonly unknown[], visit: (t: Tensor) => void): void {
  for (const a of args) {
    if (Array.isArray(a)) eachTensor(a, visit);
    else if (isTensor(a)) visit(a);
  }
}

function mapTensors(args: readonly unknown[], map: (t: Tensor) => Tensor): unknown[] {
  return args.map((a) => (Array.isArray(a) ? mapTensors(a, map) : isTensor(a) ? map(a) : a));
}

/** AC-12: float32 if any eligible arg is float32, else the region dtype; other floats are an error. */
function widest(args: readonly unknown[], deviceType: string, regionDtype: DType): DType {
  let result = regionDtype;
  eachTensor(args, (t) => {
    if (!eligible(t, deviceType)) return;
    if (t.dtype === float32 || result === float32) result = float32;
    else if (t.dtype !== regionDtype) throw new TensorError('Unexpected floating ScalarType in at::autocast::prioritize');
  });
  return result;
}

function activeDeviceType(args: readonly unknown[]): string | undefined {
  const types: string[] = [];
  eachTensor(args, (t) => {
    if (!types.includes(t.device.type)) types.push(t.device.type);
  });
  types.sort((a, b) => Number(a === 'cpu') - Number(b === 'cpu'));
  return types.find((type) => states.get(type)?.enabled && policies.has(type));
}

function firstTensor(args: readonly unknown[]): Tensor | undefined {
  for (const a of args) {
    if (isTensor(a)) return a;
    if (Array.isArray(a)) {
      const t = firstTensor(a);
      if (t) return t;
    }
  }
  return undefined;
}

/** True when no autocast region applies to the next op: callers may skip autocastOp (and its argument array). */
export function autocastIdle(): boolean {
  return nesting === 0 || insideListedOp > 0;
}

/**
 * The autocast step of dispatch for op `op` (PyTorch's name in camelCase): in an active region of
 * the args' device type, cast eligible args by the op's policy and run it with autocast off for
 * the ops it calls. Unlisted ops, and ops called inside a listed op, run unchanged.
 */
export function autocastOp<A extends readonly unknown[], R>(op: OpName, args: A, run: (...args: A) => R): R {
  if (nesting === 0 || insideListedOp > 0) return run(...args);
  const first = firstTensor(args);
  if (!first) return run(...args);
  // Like PyTorch's dispatch keys: of the device types among the tensors with an enabled region,
  // accelerators come first and cpu last (a CPU scalar next to a GPU tensor does not decide).
  const deviceType = activeDeviceType(args);
  if (deviceType === undefined) return run(...args);
  const state = states.get(deviceType)!;
  const table = policies.get(deviceType)!;
  const cls = classesOf(deviceType, table).get(op);
  if (cls === undefined) return (OP_TABLE[op] as { ownKernel?: true }).ownKernel ? withoutAutocast(() => run(...args)) : run(...args);
  if (typeof cls === 'object') throw new TensorError(cls.banned);
  let target: DType;
  let onlyFirst = false;
  if (cls === 'lowerPrecision') target = state.dtype;
  else if (cls === 'fp32') target = float32;
  else if (cls === 'fp32FirstArg') {
    if (!eligible(first, deviceType)) return run(...args); // AC-10: an ineligible first arg leaves the call unchanged
    target = float32;
    onlyFirst = true;
  } else target = widest(args, deviceType, state.dtype);
  const to = target;
  const casted = onlyFirst
    ? args.map((a) => (a === first ? castCached(first, to, state.dtype) : a))
    : mapTensors(args, (t) => (eligible(t, deviceType) ? castCached(t, to, state.dtype) : t));
  // Ops the implementation calls are not autocast again, as below PyTorch's autocast key.
  return withoutAutocast(() => run(...(casted as unknown as A)));
}
