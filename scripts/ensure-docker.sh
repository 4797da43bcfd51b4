#!/usr/bin/env bash
# Makes sure a Docker engine answers on this machine. When none does, installs Debian's docker.io
# (root, or via sudo) and starts dockerd in the background. Idempotent: a running engine is left alone.
set -euo pipefail

log() { printf 'ensure-docker: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if timeout 10 docker info >/dev/null 2>&1; then
  exit 0
fi

if ! command -v dockerd >/dev/null 2>&1; then
  log "no Docker engine installed: installing Debian's docker.io"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    docker.io iptables ca-certificates >&2
fi

# docker.io may have started the service itself (systemd hosts).
for _ in 1 2 3; do timeout 10 docker info >/dev/null 2>&1 && exit 0; sleep 1; done

log_file=${DOCKERD_LOG:-/var/log/iotbench-dockerd.log}
log "starting dockerd (log: $log_file)"
as_root sh -c "nohup dockerd >'$log_file' 2>&1 &"
for _ in $(seq 1 60); do
  if timeout 5 docker info >/dev/null 2>&1; then
    log "Docker engine answers"
    exit 0
  fi
  sleep 1
done
log "dockerd did not answer within 60 s; last lines of $log_file:"
as_root tail -n 30 "$log_file" >&2 || true
exit 1
