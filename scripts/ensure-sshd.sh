#!/usr/bin/env bash
# Makes sure sshd is installed, for the end-to-end test that reaches a Docker engine over ssh://
# (e2e/remote_test.go starts its own sshd inside its network namespace). Installs Debian's
# openssh-server (root, or via sudo) without starting the host's ssh service. Idempotent.
set -euo pipefail

log() { printf 'ensure-sshd: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if [ -x /usr/sbin/sshd ]; then
  exit 0
fi

log "no sshd: installing Debian's openssh-server (its service is not started)"
# policy-rc.d keeps the package's scripts from starting a service; put one only for this install.
policy=/usr/sbin/policy-rc.d
placed=
if [ ! -e "$policy" ]; then
  as_root sh -c "printf '#!/bin/sh\nexit 101\n' >$policy && chmod 755 $policy"
  placed=1
fi
cleanup() { if [ -n "$placed" ]; then as_root rm -f "$policy"; fi; }
trap cleanup EXIT
as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openssh-server >&2 ||
  { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 &&
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openssh-server >&2; }
