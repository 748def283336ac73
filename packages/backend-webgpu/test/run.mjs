#!/usr/bin/env node
// The package's tests, once per software-Vulkan configuration (the ICD is chosen before Dawn
// loads, so each configuration is its own vitest run):
//   lavapipe     Mesa's CPU Vulkan driver: has shader-f16, so float16 is stored as array<f16>
//   swiftshader  Chromium's CPU Vulkan driver: no shader-f16, so float16 is packed two per u32
//   chromium     headless Chromium, WebGPU through navigator.gpu (test/browser.test.ts only)
// A missing driver is a failure with the install hint, never a skip.
// Usage: node test/run.mjs [lavapipe|swiftshader ...] [-- vitest args]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const vitestBin = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');

function lavapipeIcd() {
  const dir = '/usr/share/vulkan/icd.d';
  const found = existsSync(dir) ? readdirSync(dir).filter((f) => /^lvp_icd.*\.json$/.test(f)) : [];
  return found.length > 0 ? join(dir, found[0]) : null;
}

const CONFIGS = {
  lavapipe: {
    files: [],
    exclude: ['test/browser.test.ts'],
    icd: lavapipeIcd,
    hint: 'install lavapipe from Debian bookworm-backports: `scripts/install-webgpu-deps.sh` (as root) in the repository root',
  },
  swiftshader: {
    files: [],
    exclude: ['test/browser.test.ts'],
    icd: () => (existsSync('/usr/lib/chromium/vk_swiftshader_icd.json') ? '/usr/lib/chromium/vk_swiftshader_icd.json' : null),
    hint: "install Debian's chromium package (`apt-get install -y chromium`), which ships SwiftShader's Vulkan ICD",
  },
  chromium: {
    files: ['test/browser.test.ts'],
    exclude: [],
    icd: () => (existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium') ? '' : null),
    hint: "install Debian's chromium package (`apt-get install -y chromium`)",
  },
};

const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const names = (dash >= 0 ? argv.slice(0, dash) : argv).filter((a) => a in CONFIGS);
const vitestArgs = dash >= 0 ? argv.slice(dash + 1) : [];
const selected = names.length > 0 ? names : Object.keys(CONFIGS);

let failed = 0;
for (const name of selected) {
  const { icd, hint, files, exclude } = CONFIGS[name];
  const path = icd();
  if (path === null) {
    console.error(`\n[backend-webgpu] ${name}: not installed here, so this configuration has no WebGPU adapter: ${hint}`);
    failed++;
    continue;
  }
  console.log(`\n[backend-webgpu] ${name}${path ? `: VK_ICD_FILENAMES=${path}` : ''}`);
  const started = Date.now();
  const env = { ...process.env, WEBGPU_TEST_CONFIG: name, NODEVICE_SELECT: '1' };
  if (path) env.VK_ICD_FILENAMES = path;
  // One vitest process per test file. vitest 3's forks pool (tinypool 1.1.1) recycles its child
  // after every file: it asks the child to tear down and waits for its exit with nothing holding
  // the main process's event loop. On a busy machine a lavapipe child can take seconds to go (one
  // was traced alive 6 s after SIGTERM), and the main process then ran out of work and exited
  // with status 0 after 1–2 files, no summary; kept alive, it waited forever instead. With one file
  // per process, that teardown comes after the file's report is written, where it is harmless.
  const allFiles = readdirSync(join(root, 'test')).filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
  const runs = vitestArgs.length > 0 ? [vitestArgs] : (files.length > 0 ? files : allFiles.filter((f) => !exclude.includes(f))).map((f) => [f]);
  let ok = true;
  for (const args of runs) ok = runVitest(name, args, env) && ok;
  console.log(`[backend-webgpu] ${name}: ${ok ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (!ok) failed++;
}

/**
 * One vitest process over `args`. Success is vitest's own JSON report saying the run succeeded
 * (only a finished run writes it), not its exit status alone. A run that ends with status 0
 * unfinished is said loudly and run again, up to three runs; failing tests are never retried, and
 * a run still going after 20 minutes is stopped and failed.
 */
function runVitest(name, args, env) {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const report = join(mkdtempSync(join(tmpdir(), 'webgpu-vitest-')), 'report.json');
    const r = spawnSync(process.execPath, [vitestBin, 'run', ...args, '--reporter=default', '--reporter=json', `--outputFile.json=${report}`], {
      cwd: root,
      stdio: 'inherit',
      env,
      timeout: 20 * 60_000,
      killSignal: 'SIGKILL',
    });
    const finished = existsSync(report) ? JSON.parse(readFileSync(report, 'utf8')) : null;
    if (r.status === 0 && finished?.success === true && (finished.testResults?.length ?? 0) >= 1) return true;
    if (r.status !== 0) {
      if (r.error) console.error(`[backend-webgpu] ${name}: ${args.join(' ')}: ${r.error.message}`);
      return false;
    }
    console.error(`[backend-webgpu] ${name}: ${args.join(' ')}: vitest exited with status 0 without finishing the run (no report)${attempt < 3 ? ': running it again' : ''}`);
  }
  return false;
}
process.exit(failed === 0 ? 0 : 1);
