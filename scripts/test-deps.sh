#!/usr/bin/env bash
# The system packages the test suite needs, checked before every `pnpm test`:
#   chromium             the browser tests (WebGPU in headless Chromium, through playwright-core)
#   clang-19, wasm-ld-19 the check that the shipped wasm kernels are what wasm/kernels.c compiles to
#   lavapipe (Mesa 25)   WebGPU in Node on a software Vulkan driver (scripts/install-webgpu-deps.sh)
#   cmake, make, g++     the cpu backend's native addon (built with the package; the tests run the
#                        native path on and off), and the CUDA addon where nvcc is installed
#   g++-aarch64-linux-gnu, qemu-user   (x86-64 hosts)
#                        the cpu addon's linux-arm64 build, cross-compiled with the package (the
#                        cross compiler brings the arm64 glibc and libstdc++ in /usr/aarch64-linux-gnu),
#                        and the test that runs it under qemu-aarch64 with an arm64 Node
#   libnvrtc11.2         (x86-64 hosts with nvcc) a real NVRTC, from Debian's non-free component: the
#                        cuda backend's test compiles compile()'s fused kernels with it (no GPU needed)
# All present: prints nothing and exits 0. Missing and run as root: installs them with apt-get.
# Missing otherwise: prints the one command that installs them and exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
packages=()
need() { # need <what> <apt packages...>: record a missing requirement
  missing+=("$1")
  shift
  packages+=("$@")
}

command -v chromium >/dev/null 2>&1 || need chromium chromium
{ command -v clang-19 >/dev/null 2>&1 && command -v wasm-ld-19 >/dev/null 2>&1; } || need 'clang-19 and wasm-ld-19' clang-19 lld-19
{ command -v cmake >/dev/null 2>&1 && command -v make >/dev/null 2>&1 && command -v g++ >/dev/null 2>&1; } || need "cmake, make and g++ (they build the cpu backend's native addon)" cmake make g++
if [[ ${HOSTTYPE:-} == x86_64 ]]; then # the arm64 addon is cross-built and emulated on x86-64 hosts only
  command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || need "aarch64-linux-gnu-g++ (it cross-compiles the cpu backend's linux-arm64 addon)" g++-aarch64-linux-gnu
  command -v qemu-aarch64 >/dev/null 2>&1 || need "qemu-aarch64 (the cpu backend's test runs its linux-arm64 addon there)" qemu-user
fi
nvrtc=1 # Debian ships NVRTC in non-free, which the default sources leave out: it gets a sources file of its own
if [[ ${HOSTTYPE:-} == x86_64 ]] && { command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; }; then
  # The linker cache read whole, not piped into grep -q: with pipefail, grep quitting early fails the pipe.
  linked=$( (command -v ldconfig >/dev/null 2>&1 && ldconfig -p || /sbin/ldconfig -p) 2>/dev/null || true)
  [[ $linked == *libnvrtc.so.* ]] || { nvrtc=0; missing+=("a real NVRTC (libnvrtc11.2 from Debian's non-free component; the cuda backend's fusion test compiles with it)"); }
fi
lavapipe=1
bash scripts/install-webgpu-deps.sh --check >/dev/null 2>&1 || { lavapipe=0; missing+=('lavapipe from Mesa 25 (bookworm-backports)'); }

if [[ ${#missing[@]} -eq 0 ]]; then exit 0; fi

if [[ "$(id -u)" != 0 ]]; then
  {
    echo "The tests need system packages that are missing here:"
    printf '  - %s\n' "${missing[@]}"
    echo "Install them (Debian 12) with this one command, then run the tests again:"
    echo "  sudo bash scripts/test-deps.sh"
  } >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "test-deps: missing ${missing[*]}, and there is no apt-get to install them with (the suite's system packages are Debian 12's)" >&2
  exit 1
fi
echo "test-deps: installing ${missing[*]}" >&2
if [[ $nvrtc -eq 0 ]]; then
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: non-free\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$codename" \
    >/etc/apt/sources.list.d/core-test-deps-non-free.sources
  packages+=(libnvrtc11.2 libnvrtc-builtins11.8)
fi
if [[ ${#packages[@]} -gt 0 ]]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
fi
if [[ $lavapipe -eq 0 ]]; then bash scripts/install-webgpu-deps.sh >/dev/null; fi
