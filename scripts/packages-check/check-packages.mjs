#!/usr/bin/env node
// Packaging checks for every publishable package (packages/* that are not private), on what
// `pnpm pack` would publish:
//   1. pack      pnpm pack each package; workspace:^ ranges must come out as real versions, and a
//                native addon (`files` entry ending in .node) that the build produced must be packed,
//                one under build/linux-<arch>/ as an ELF binary for that arch (the cpu backend's
//                linux-x64 and linux-arm64 addons)
//   2. publint   package.json fields, exports and files against the tarball's contents (strict)
//   3. attw      @arethetypeswrong: types and JavaScript resolve for node16 (from CJS and from ESM)
//                and bundler resolution, for every entry point
//   4. install   npm installs all tarballs together into a scratch project outside the workspace;
//                tsc type-checks the consumer program and every entry point's packed .d.ts/.d.cts
//                (no skipLibCheck) as three kinds of consumer: a browser app (DOM lib, no Node
//                types installed), a Node program (no DOM lib, @types/node) and one with both;
//                a control declaration naming WebAssembly must fail the Node one;
//                node runs the program through `import` (program.mjs) and through `require` (program.cjs);
//                node runs fixtures/native.mjs with only `node` on PATH (no compiler, cmake or python):
//                the cpu backend's addon must load from the installed tarball and its float32 matmuls
//                must match a CORE_CPU_NATIVE=0 run (skipped when the build produced no addon);
//                an arm64 node under qemu-aarch64 must load the linux-arm64 addon from it (skipped
//                without that build or qemu)
//   5. browser   esbuild bundles the program for the browser (platform browser: the "browser"
//                condition, no Node built-ins) and node runs the bundle
//   6. release   a changesets dry run on a scratch copy of the workspace's manifests:
//                `changeset status` (config and changesets valid) then `changeset version`
// Run through `npx -y pnpm@12.4.2 check:packages` (turbo builds the packages first) or as part of
// `npx -y pnpm@12.4.2 test`. `node check-packages.mjs --keep` keeps the scratch directory;
// `--only=@core/nn,@core/tensor` checks only those packages (and skips the scratch project).
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const bin = (name) => join(here, 'node_modules', '.bin', name);
const keep = process.argv.includes('--keep');

// Entry points that are ESM on purpose, checked by attw with the esm-only profile instead.
const ESM_ONLY_ENTRIES = {
  // The vitest adapter imports vitest, which ships only ESM (and runs test files as ESM).
  '@core/conformance': ['./vitest'],
};

const results = [];
let failed = false;

function log(line = '') {
  process.stdout.write(`${line}\n`);
}

/** Run a command; resolves with its output, rejects with it (and the exit code) on failure. */
function run(command, args, options = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? root, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolvePromise(out);
      else reject(Object.assign(new Error(`${[command, ...args].join(' ')} exited with ${code}\n${out}`), { output: out }));
    });
  });
}

/** One named check: times it, records pass/fail, keeps going after a failure. */
async function check(name, fn) {
  const start = performance.now();
  try {
    const detail = await fn();
    const s = ((performance.now() - start) / 1000).toFixed(1);
    results.push({ name, ok: true });
    log(`  ok    ${name} (${s}s)${detail ? `: ${detail}` : ''}`);
    return true;
  } catch (error) {
    failed = true;
    results.push({ name, ok: false });
    log(`  FAIL  ${name}\n${indent(error instanceof Error ? error.message : String(error))}`);
    return false;
  }
}

function indent(text) {
  return text.trimEnd().split('\n').map((l) => `        ${l}`).join('\n');
}

async function inPool(items, size, fn) {
  const queue = [...items];
  await Promise.all(Array.from({ length: Math.min(size, queue.length) }, async () => {
    while (queue.length > 0) await fn(queue.shift());
  }));
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** The native addons (`files` entries ending in .node) that the workspace build of package `p` produced. */
function builtAddons(p) {
  return (p.manifest.files ?? []).filter((f) => f.endsWith('.node') && existsSync(join(root, p.dir, f)));
}

/** ELF e_machine of the architectures a `build/linux-<arch>/` path names. */
const ELF_MACHINES = { x64: 0x3e, arm64: 0xb7 };

/** The addons among `addons` (paths inside the tarball `file`) under build/linux-<arch>/ that are not ELF binaries for <arch>, each with what it is. */
async function addonsOfAnotherArch(file, addons) {
  const named = addons.filter((f) => /(^|\/)linux-(x64|arm64)\//.test(f));
  if (named.length === 0) return [];
  const dir = mkdtempSync(join(tmpdir(), 'packed-addons-'));
  try {
    await run('tar', ['-xzf', file, '-C', dir, ...named.map((f) => `package/${f}`)]);
    return named.flatMap((f) => {
      const arch = f.match(/(?:^|\/)linux-(x64|arm64)\//)[1];
      const head = readFileSync(join(dir, 'package', f)).subarray(0, 20);
      const machine = head.length === 20 && head.readUInt32BE(0) === 0x7f454c46 ? head.readUInt16LE(18) : null;
      return machine === ELF_MACHINES[arch] ? [] : [`${f} (${machine === null ? 'not an ELF file' : `ELF e_machine 0x${machine.toString(16)}`})`];
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The cpu backend's linux-arm64 addon from the installed tarball: an arm64 Node (the one
 * packages/backend-cpu/test/arm64/arm64-node.mjs fetches) under qemu-aarch64 imports the package in
 * the scratch project, and its native path must run that one addon, loaded from node_modules.
 * Skipped, saying why, without the arm64 build, qemu-aarch64 or the arm64 runtime libraries.
 */
async function checkArm64Addon(consumer, env) {
  const name = 'an arm64 node under qemu-aarch64 loads the linux-arm64 cpu addon from the installed tarball';
  const cpu = publishable.find((p) => p.manifest.name === '@core/backend-cpu');
  const sysroot = '/usr/aarch64-linux-gnu';
  const qemu = await run('qemu-aarch64', ['--version']).then(() => true, () => false);
  const why = !builtAddons(cpu).some((f) => f.includes('linux-arm64/')) ? 'the build produced no linux-arm64 addon'
    : !qemu ? 'no qemu-aarch64 on PATH (scripts/test-deps.sh installs qemu-user)'
      : !existsSync(join(sysroot, 'lib', 'ld-linux-aarch64.so.1')) ? `no arm64 runtime libraries under ${sysroot}` : null;
  if (why) {
    log(`  skip  ${name}: skipped: ${why}`);
    return;
  }
  await check(name, async () => {
    const node = (await run(process.execPath, [join(root, cpu.dir, 'test', 'arm64', 'arm64-node.mjs')])).trim().split('\n').at(-1);
    const program = [
      "import '@core/backend-cpu';",
      "import { getBackend, tensor } from '@core/tensor';",
      "import { createRequire } from 'node:module';",
      'const a = tensor(Array.from({ length: 64 * 64 }, (_, i) => (i % 7) - 3)).reshape([64, 64]);',
      'const sum = await a.matmul(a).sum().item();',
      'const addons = Object.keys(createRequire(import.meta.url).cache).filter((p) => p.endsWith(".node"));',
      'console.log(JSON.stringify({ arch: process.arch, native: getBackend("cpu").native, addons, sum }));',
    ].join('\n');
    const cleanEnv = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('CORE_CPU_')));
    const out = await run('qemu-aarch64', ['-L', sysroot, node, '--input-type=module', '-e', program], { cwd: consumer, env: cleanEnv });
    const got = JSON.parse(out.trim().split('\n').at(-1));
    const expected = realpathSync(join(consumer, 'node_modules', '@core', 'backend-cpu', 'build', 'linux-arm64', 'Release', 'core_cpu.node'));
    if (got.arch !== 'arm64' || !got.native.loaded) throw new Error(`the native path did not run on arm64: ${JSON.stringify(got)}`);
    if (got.addons.length !== 1 || realpathSync(got.addons[0]) !== expected) throw new Error(`expected the one addon ${expected}, got: ${got.addons.join(', ') || 'none'}`);
    // Σ_ij (a·a)_ij for a_ij = (64·i + j) mod 7 − 3, computed exactly in float64 here.
    const a = (i, j) => ((64 * i + j) % 7) - 3;
    let want = 0;
    for (let i = 0; i < 64; i++) for (let j = 0; j < 64; j++) for (let k = 0; k < 64; k++) want += a(i, k) * a(k, j);
    if (got.sum !== want) throw new Error(`a 64×64 integer matmul summed to ${got.sum}, not ${want}`);
    return `native ${got.native.gemm} GEMM loaded from ${relative(consumer, got.addons[0])}; features ${got.native.features.join(' ')}`;
  });
}

/** pnpm itself: on PATH when run through pnpm (npx puts it there), else fetched by npx. */
function pnpmCommand() {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'pnpm'))) return { command: join(dir, 'pnpm'), args: [] };
  }
  const version = readJson(join(root, 'package.json')).packageManager.replace(/^pnpm@/, '');
  return { command: 'npx', args: ['-y', `pnpm@${version}`] };
}

/** The environment for tools run in the scratch project: none of pnpm's npm_* variables (they point npm at the workspace). */
function cleanEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(npm_|pnpm_|INIT_CWD$)/i.test(k)) env[k] = v;
  }
  return { ...env, FORCE_COLOR: '0', NO_COLOR: '1' };
}

/** The workspace's package directories, from pnpm-workspace.yaml's `packages:` globs (dir or dir/*). */
function workspaceDirs() {
  const yaml = readFileSync(join(root, 'pnpm-workspace.yaml'), 'utf8');
  const globs = [];
  let inPackages = false;
  for (const line of yaml.split('\n')) {
    if (/^packages:/.test(line)) inPackages = true;
    else if (/^\S/.test(line)) inPackages = false;
    else if (inPackages) {
      const m = /^\s*-\s*['"]?([^'"#]+?)['"]?\s*$/.exec(line);
      if (m) globs.push(m[1]);
    }
  }
  const dirs = [];
  for (const glob of globs) {
    if (glob.endsWith('/*')) {
      const parent = join(root, glob.slice(0, -2));
      if (!existsSync(parent)) continue;
      for (const name of readdirSync(parent).sort()) {
        if (existsSync(join(parent, name, 'package.json'))) dirs.push(relative(root, join(parent, name)));
      }
    } else if (existsSync(join(root, glob, 'package.json'))) {
      dirs.push(glob);
    }
  }
  return dirs;
}

// `--only=@core/nn,@core/tensor` checks just those (while working on one package).
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',');
const publishable = workspaceDirs()
  .filter((dir) => dir.startsWith('packages/'))
  .map((dir) => ({ dir, manifest: readJson(join(root, dir, 'package.json')) }))
  .filter((p) => p.manifest.private !== true && (!only || only.includes(p.manifest.name)));

// turbo builds only what this package depends on before running it: every publishable package must be listed.
const listed = Object.keys(readJson(join(here, 'package.json')).devDependencies ?? {});
const unlisted = publishable.map((p) => p.manifest.name).filter((n) => !listed.includes(n));
if (unlisted.length > 0) {
  console.error(`packages-check: add ${unlisted.map((n) => `"${n}": "workspace:^"`).join(', ')} to the devDependencies of ${relative(root, join(here, 'package.json'))}, so that turbo builds them before this check`);
  process.exit(1);
}

const scratch = mkdtempSync(join(tmpdir(), 'core-packages-check-'));
if (!relative(root, scratch).startsWith('..')) throw new Error(`the scratch directory ${scratch} is inside the workspace`);
const tarballDir = join(scratch, 'tarballs');
const consumer = join(scratch, 'consumer');
mkdirSync(tarballDir);
mkdirSync(consumer);
const started = performance.now();
log(`packages-check: ${publishable.map((p) => p.manifest.name).join(', ')}`);
log(`scratch directory: ${scratch}`);

try {
  // 1. pack --------------------------------------------------------------------------------------
  log('\n1. pnpm pack');
  const pnpm = pnpmCommand();
  const tarballs = new Map();
  await inPool(publishable, 2, (p) => check(`pack ${p.manifest.name}`, async () => {
    const out = await run(pnpm.command, [...pnpm.args, 'pack', '--pack-destination', tarballDir], { cwd: join(root, p.dir) });
    const file = out.trim().split('\n').map((l) => l.trim()).reverse().find((l) => l.endsWith('.tgz'));
    if (!file || !existsSync(file)) throw new Error(`pnpm pack printed no tarball path:\n${out}`);
    tarballs.set(p.manifest.name, file);
    const packed = JSON.parse(await run('tar', ['-xzOf', file, 'package/package.json']));
    const workspaceRanges = ['dependencies', 'peerDependencies', 'optionalDependencies']
      .flatMap((field) => Object.entries(packed[field] ?? {}).map(([name, range]) => [field, name, range]))
      .filter(([, , range]) => String(range).startsWith('workspace:'));
    if (workspaceRanges.length > 0) throw new Error(`workspace: ranges left in the packed package.json: ${JSON.stringify(workspaceRanges)}`);
    const internal = Object.entries(packed.dependencies ?? {}).filter(([name]) => name.startsWith('@core/'));
    // A native addon named in `files` that this build produced must be in the tarball.
    const addons = builtAddons(p);
    const listing = addons.length ? (await run('tar', ['-tzf', file])).split('\n').map((l) => l.trim()) : [];
    const unpacked = addons.filter((f) => !listing.includes(`package/${f}`));
    if (unpacked.length > 0) throw new Error(`built native addons missing from the tarball: ${unpacked.join(', ')}`);
    const wrongArch = await addonsOfAnotherArch(file, addons);
    if (wrongArch.length > 0) throw new Error(`packed native addons built for another architecture than their path names: ${wrongArch.join(', ')}`);
    const extras = [...internal.map(([n, r]) => `${n}@${r}`), ...addons];
    return `${(statSync(file).size / 1024).toFixed(0)} KiB${extras.length ? `, ${extras.join(' ')}` : ''}`;
  }));
  const packedNames = publishable.map((p) => p.manifest.name).filter((n) => tarballs.has(n));

  // 2. publint -----------------------------------------------------------------------------------
  log('\n2. publint (strict: warnings are errors; suggestions fail too)');
  for (const name of packedNames) {
    await check(`publint ${name}`, async () => {
      const bytes = readFileSync(tarballs.get(name));
      const { messages, pkg } = await publint({
        pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) },
        level: 'suggestion',
        strict: true,
      });
      if (messages.length > 0) {
        throw new Error(messages.map((m) => `${m.type}: ${formatMessage(m, pkg, { color: false }) ?? m.code}`).join('\n'));
      }
      return 'no messages';
    });
  }

  // 3. attw --------------------------------------------------------------------------------------
  log('\n3. arethetypeswrong (node16 from CJS and from ESM, bundler)');
  const attwRuns = packedNames.flatMap((name) => {
    const esmOnly = ESM_ONLY_ENTRIES[name] ?? [];
    const runs = [{ name, label: name, args: ['--profile', 'node16', ...(esmOnly.length ? ['--exclude-entrypoints', ...esmOnly] : [])] }];
    if (esmOnly.length) runs.push({ name, label: `${name} ${esmOnly.join(' ')} (ESM-only)`, args: ['--profile', 'esm-only', '--entrypoints', ...esmOnly] });
    return runs;
  });
  await inPool(attwRuns, 2, (r) => check(`attw ${r.label}`, async () => {
    // attw exits non-zero on a problem the profile does not ignore, but with 0 on a package without types.
    const out = await run(bin('attw'), [tarballs.get(r.name), ...r.args, '--format', 'ascii', '--no-emoji', '--no-color'], { env: cleanEnv() });
    if (/does not contain types/.test(out) || !/node16 \(from ESM\)/.test(out)) throw new Error(out);
    const ignored = /\(ignoring resolutions: ([^)]*)\)/.exec(out)?.[1];
    return /No problems found/.test(out) ? 'no problems' : `no problems (ignoring ${ignored})`;
  }));

  // 4. install into a scratch project ------------------------------------------------------------
  log('\n4. scratch project: npm install of the tarballs, tsc as a browser app, a Node program and both, node (import and require)');
  const env = cleanEnv();
  writeFileSync(join(consumer, 'package.json'), `${JSON.stringify({ name: 'core-packages-consumer', private: true, version: '0.0.0' }, null, 2)}\n`);
  for (const f of ['program.mjs', 'program.cjs', 'native.mjs', 'webgpu-types.mts']) cpSync(join(here, 'fixtures', f), join(consumer, f));
  cpSync(join(here, 'fixtures', 'types-control', 'control.mts'), join(consumer, 'control.mts'));
  // The program imports every package: with --only, a partial set cannot run it.
  const installed = only ? (log('  skipped (--only)'), false) : await check('npm install (all tarballs together)', async () => {
    const files = packedNames.map((n) => tarballs.get(n));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel', 'error', ...files], { cwd: consumer, env });
    const present = packedNames.filter((n) => existsSync(join(consumer, 'node_modules', n, 'package.json')));
    if (present.length !== packedNames.length) throw new Error(`installed ${present.join(', ')} of ${packedNames.join(', ')}`);
    const nested = packedNames.filter((n) => existsSync(join(consumer, 'node_modules', ...n.split('/'), 'node_modules')));
    if (nested.length > 0) throw new Error(`npm installed second copies under ${nested.join(', ')}: a tarball's @core/* range does not match the packed versions`);
    return `${present.length} packages in node_modules, one copy each`;
  });
  if (installed) {
    // Every entry point's declarations, through import (.d.ts) and, but for ESM-only entries, require (.d.cts).
    const entries = packedNames.flatMap((name) => {
      const exports = readJson(join(consumer, 'node_modules', name, 'package.json')).exports ?? {};
      return Object.keys(exports)
        .filter((k) => k === '.' || (!k.includes('*') && !k.endsWith('.json')))
        .map((k) => ({ specifier: k === '.' ? name : `${name}/${k.slice(2)}`, esmOnly: (ESM_ONLY_ENTRIES[name] ?? []).includes(k) }));
    });
    writeFileSync(join(consumer, 'entries.mts'), entries.map((e, i) => `export * as e${i} from '${e.specifier}';\n`).join(''));
    writeFileSync(join(consumer, 'entries.cts'), entries.filter((e) => !e.esmOnly).map((e, i) => `export * as e${i} from '${e.specifier}';\n`).join(''));
    const tsc = (label, compilerOptions, files) => {
      const file = `tsconfig.${label.replace(/\W+/g, '-')}.json`;
      writeFileSync(join(consumer, file), `${JSON.stringify({
        compilerOptions: {
          allowJs: true, checkJs: true, noEmit: true, strict: true, target: 'es2022', skipLibCheck: false,
          module: 'node16', moduleResolution: 'node16', ...compilerOptions,
        },
        files,
      }, null, 2)}\n`);
      return run(process.execPath, [join(here, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', file], { cwd: consumer, env });
    };
    // esnext.disposable: Tensor implements Disposable (`using t = …`), so its types need TypeScript >= 5.2 with that lib.
    const ES = ['es2022', 'esnext.disposable'];
    const node16Files = ['program.mjs', 'program.cjs', 'entries.mts', 'entries.cts'];
    // A browser app, bundled: the "browser" export conditions, the DOM lib, and no Node types anywhere
    // (a declaration that needs them would fail here, as in a project without @types/node).
    await check('tsc as a browser app (DOM lib, bundler resolution with the browser condition, no @types/node)', async () => {
      if (existsSync(join(consumer, 'node_modules', '@types', 'node'))) throw new Error('a package depends on @types/node: a browser app installing it would get Node\'s globals');
      await tsc('browser', { lib: [...ES, 'dom'], types: [], module: 'esnext', moduleResolution: 'bundler', customConditions: ['browser'] }, ['program.mjs', 'entries.mts', 'webgpu-types.mts']);
    });
    const nodeTypes = readJson(join(root, 'package.json')).devDependencies['@types/node'];
    const withNodeTypes = await check(`npm install @types/node@${nodeTypes}`, async () => {
      await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel', 'error', '--no-save', `@types/node@${nodeTypes}`], { cwd: consumer, env });
    });
    if (withNodeTypes) {
      await check('tsc as a Node program (no DOM lib, @types/node; node16: .d.ts for import, .d.cts for require)', () => tsc('node', { lib: ES, types: ['node'] }, node16Files));
      await check('tsc as a program with both the DOM lib and @types/node', () => tsc('node and dom', { lib: [...ES, 'dom'], types: ['node'] }, node16Files));
      await check('tsc control: a declaration naming WebAssembly fails the Node configuration (TS2503), passes with the DOM lib', async () => {
        const control = join(consumer, 'node_modules', 'types-control');
        mkdirSync(control);
        cpSync(join(here, 'fixtures', 'types-control', 'index.d.ts'), join(control, 'index.d.ts'));
        writeFileSync(join(control, 'package.json'), '{ "name": "types-control", "version": "0.0.0", "types": "./index.d.ts" }\n');
        await tsc('control with dom', { lib: [...ES, 'dom'], types: ['node'] }, ['control.mts']);
        const failure = await tsc('control', { lib: ES, types: ['node'] }, ['control.mts']).then(() => null, (e) => e.output ?? String(e));
        if (failure === null) throw new Error('the Node configuration accepted WebAssembly.Memory: it has the DOM lib, or skips library checks');
        if (!/error TS2503: Cannot find namespace 'WebAssembly'/.test(failure)) throw new Error(`the Node configuration failed otherwise:\n${failure}`);
      });
    }
    await check('node program.mjs (import)', async () => (await run(process.execPath, ['program.mjs'], { cwd: consumer, env })).trim());
    await check('node program.cjs (require)', async () => (await run(process.execPath, ['program.cjs'], { cwd: consumer, env })).trim());
    const nativeCheck = 'node native.mjs (the cpu addon from the installed tarball, only node on PATH, against CORE_CPU_NATIVE=0)';
    if (builtAddons(publishable.find((p) => p.manifest.name === '@core/backend-cpu')).length === 0) {
      log(`  skip  ${nativeCheck}: skipped: the build produced no native addon`);
    } else {
      await check(nativeCheck, async () => {
        // PATH is one directory holding a `node` symlink; CORE_CPU_* settings of this shell are dropped.
        const bare = join(scratch, 'node-only-path');
        mkdirSync(bare);
        symlinkSync(process.execPath, join(bare, 'node'));
        const nativeEnv = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('CORE_CPU_')));
        return (await run(join(bare, 'node'), ['native.mjs'], { cwd: consumer, env: { ...nativeEnv, PATH: bare } })).trim();
      });
    }
    await checkArm64Addon(consumer, env);

    // 5. browser ---------------------------------------------------------------------------------
    log('\n5. browser: esbuild bundle with platform browser, then run it');
    await check('esbuild --platform=browser program.mjs, then node runs the bundle', async () => {
      const outfile = join(consumer, 'browser-bundle.mjs');
      const result = await build({
        absWorkingDir: consumer,
        entryPoints: [join(consumer, 'program.mjs')],
        bundle: true, platform: 'browser', format: 'esm', target: 'es2022', outfile, metafile: true, logLevel: 'silent',
      });
      const fromPackages = Object.keys(result.metafile.inputs).filter((f) => f.includes('node_modules/@core/'));
      const cjs = fromPackages.filter((f) => f.endsWith('.cjs'));
      if (cjs.length > 0) throw new Error(`the browser bundle took CommonJS builds: ${cjs.join(', ')}`);
      return (await run(process.execPath, [outfile], { cwd: consumer, env })).trim().replace('(import)', '(browser bundle)');
    });
    const browserEntries = entries.filter((e) => !e.esmOnly).map((e) => e.specifier);
    await check(`esbuild --platform=browser resolves every entry point (${browserEntries.length})`, async () => {
      const entry = browserEntries.map((e, i) => `export * as e${i} from '${e}';`).join('\n');
      await build({
        absWorkingDir: consumer, stdin: { contents: entry, resolveDir: consumer, loader: 'js' },
        bundle: true, platform: 'browser', format: 'esm', target: 'es2022', write: false, logLevel: 'silent',
      });
      return browserEntries.join(', ');
    });
  }

  // 6. changesets dry run ------------------------------------------------------------------------
  log('\n6. changesets release dry run (on a scratch copy of the manifests)');
  const release = join(scratch, 'release');
  await check('changeset status, then changeset version', async () => {
    mkdirSync(release);
    // Real copies even of symlinks: `changeset version` deletes the changesets it consumes and
    // rewrites manifests, which must never reach the workspace.
    for (const f of ['package.json', 'pnpm-workspace.yaml']) cpSync(join(root, f), join(release, f), { dereference: true });
    cpSync(join(root, '.changeset'), join(release, '.changeset'), { recursive: true, dereference: true });
    const dirs = workspaceDirs();
    for (const dir of dirs) {
      mkdirSync(join(release, dir), { recursive: true });
      for (const f of ['package.json', 'CHANGELOG.md']) {
        if (existsSync(join(root, dir, f))) cpSync(join(root, dir, f), join(release, dir, f), { dereference: true });
      }
    }
    // The changelog generator named in .changeset/config.json is resolved from here.
    symlinkSync(join(root, 'node_modules'), join(release, 'node_modules'), 'dir');
    const git = (...args) => run('git', ['-c', 'user.name=packages-check', '-c', 'user.email=packages-check@localhost', '-c', 'commit.gpgsign=false', ...args], { cwd: release, env });
    await git('init', '-q', '-b', 'main');
    await git('add', '-A');
    await git('commit', '-q', '-m', 'snapshot');
    const changeset = (...args) => run(process.execPath, [join(here, 'node_modules', '@changesets', 'cli', 'bin.js'), ...args], { cwd: release, env });
    await changeset('status', '--output=release-plan.json');
    const plan = readJson(join(release, 'release-plan.json'));
    if (plan.changesets.length === 0) throw new Error('no changesets: nothing to release');
    const manifests = new Map(dirs.map((dir) => [readJson(join(root, dir, 'package.json')).name, dir]));
    for (const r of plan.releases.filter((x) => x.type !== 'none')) {
      const dir = manifests.get(r.name);
      if (!dir) throw new Error(`the release plan names ${r.name}, which is no workspace package`);
      if (readJson(join(root, dir, 'package.json')).private === true) throw new Error(`the release plan would release the private package ${r.name}`);
    }
    await changeset('version');
    const problems = [];
    for (const r of plan.releases.filter((x) => x.type !== 'none')) {
      const dir = manifests.get(r.name);
      const version = readJson(join(release, dir, 'package.json')).version;
      if (version !== r.newVersion) problems.push(`${r.name}: version ${version}, planned ${r.newVersion}`);
      const changelog = existsSync(join(release, dir, 'CHANGELOG.md')) ? readFileSync(join(release, dir, 'CHANGELOG.md'), 'utf8') : '';
      if (!changelog.includes(`## ${r.newVersion}`)) problems.push(`${r.name}: CHANGELOG.md has no "## ${r.newVersion}" section`);
    }
    const left = readdirSync(join(release, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
    if (left.length > 0) problems.push(`changesets not consumed: ${left.join(', ')}`);
    for (const [name, dir] of manifests) {
      const before = readJson(join(root, dir, 'package.json'));
      if (before.private === true && readJson(join(release, dir, 'package.json')).version !== before.version) problems.push(`private package ${name} was versioned`);
    }
    if (problems.length > 0) throw new Error(problems.join('\n'));
    return `${plan.changesets.length} changesets → ${plan.releases.filter((r) => r.type !== 'none').map((r) => `${r.name} ${r.oldVersion} → ${r.newVersion}`).join(', ')}`;
  });
} finally {
  if (keep) log(`\nkept ${scratch}`);
  else rmSync(scratch, { recursive: true, force: true });
}

const passed = results.filter((r) => r.ok).length;
log(`\npackages-check: ${((performance.now() - started) / 1000).toFixed(1)}s`);
log(`${passed} passed, ${results.length - passed} failed`);
process.exitCode = failed ? 1 : 0;
