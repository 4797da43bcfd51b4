#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is installed, for the test that opens iotbench's HTML
# report (internal/overview). Installs Debian's chromium (root, or via sudo) when missing.
# Idempotent: an installed chromium is left alone.
set -euo pipefail

log() { printf 'ensure-chromium: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
log "no chromium installed: installing Debian's chromium"
as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  chromium fonts-liberation >&2
command -v chromium >/dev/null
