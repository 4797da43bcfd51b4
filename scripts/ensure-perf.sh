#!/usr/bin/env bash
# Makes sure Linux perf is installed, for `iotbench run --profile` and its end-to-end test: the
# host samples a target's processes (internal/profile). Installs Debian's linux-perf (root, or via
# sudo) when missing. Idempotent: an installed perf is left alone.
set -euo pipefail

log() { printf 'ensure-perf: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if command -v perf >/dev/null 2>&1 && perf --version >/dev/null 2>&1; then
  exit 0
fi
log "no perf installed: installing Debian's linux-perf"
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends linux-perf >&2 ||
  { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends linux-perf >&2; }
perf --version >/dev/null
