#!/usr/bin/env bash
# Software Vulkan for the WebGPU backend's tests in Node (Dawn through the `webgpu` package):
# lavapipe from Mesa 25 (Debian bookworm-backports), which has shader-f16. Idempotent: does
# nothing when the lavapipe ICD from backports is already installed. Needs root (CI runs as root).
# Prints the ICD path on its last line, so a caller may do:
#   export VK_ICD_FILENAMES="$(scripts/install-webgpu-deps.sh | tail -n1)"
# With --check it installs nothing: exit 0 when lavapipe from backports is there, else 1.
set -euo pipefail

find_icd() {
  ls /usr/share/vulkan/icd.d/lvp_icd*.json 2>/dev/null | head -n1
}

mesa_is_backport() {
  local v
  v="$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)"
  [[ "$v" == *bpo* ]] || [[ "${v%%.*}" -ge 25 ]] 2>/dev/null
}

if [[ -n "$(find_icd)" ]] && mesa_is_backport; then
  echo "install-webgpu-deps: lavapipe already installed ($(dpkg-query -W -f='${Version}' mesa-vulkan-drivers))" >&2
  find_icd
  exit 0
fi
if [[ "${1:-}" == --check ]]; then exit 1; fi

SUDO=""
if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi

# Add bookworm-backports from the mirror the machine already uses (deb822 or one-line sources).
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  mirror=""
  if [[ -f /etc/apt/sources.list.d/debian.sources ]]; then
    mirror="$(awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)"
  fi
  if [[ -z "$mirror" && -f /etc/apt/sources.list ]]; then
    mirror="$(awk '/^deb / && $0 !~ /security/ { print $2; exit }' /etc/apt/sources.list)"
  fi
  mirror="${mirror:-http://deb.debian.org/debian}"
  printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$mirror" \
    | $SUDO tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
fi

$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers libvulkan1 >/dev/null

icd="$(find_icd)"
if [[ -z "$icd" ]]; then
  echo "install-webgpu-deps: lavapipe's ICD json is missing after the install" >&2
  exit 1
fi
echo "install-webgpu-deps: installed mesa-vulkan-drivers $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers)" >&2
echo "$icd"
