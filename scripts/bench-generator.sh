#!/usr/bin/env bash
# make bench-generator: iotbench's load generator against wrk, both against nginx on loopback
# (docs/generator.md), over TLS too, and against h2load in HTTP/2. Installs Debian's nginx, wrk
# and nghttp2-client (h2load) when missing (as root), builds
# tools/benchgen and runs it; arguments go to it (-step 10s for longer steps, -soak 10m for the
# memory check, -h for the rest).
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v wrk >/dev/null || missing+=(wrk)
command -v h2load >/dev/null || missing+=(nghttp2-client)
command -v taskset >/dev/null || missing+=(util-linux)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bench-generator: needs ${missing[*]} (Debian packages); run as root, or first: sudo apt-get install ${missing[*]}" >&2
    exit 2
  fi
  # Installing nginx starts the distribution's own server on port 80 unless the policy forbids
  # services to start: forbid it for the install, when nothing else does.
  policy=/usr/sbin/policy-rc.d
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod +x "$policy"
    trap 'rm -f "$policy"' EXIT
  fi
  echo "bench-generator: installing ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

mkdir -p bin
# LDFLAGS from the Makefile stamp the commit into the saved capacity figure.
${GO:-go} build -ldflags "${LDFLAGS:-}" -o bin/benchgen ./tools/benchgen
exec bin/benchgen "$@"
