#!/usr/bin/env bash
# Makes sure the root image that every target's Dockerfile starts FROM exists locally. It is pulled
# when a registry answers; otherwise it is built with debootstrap (Debian's default mirror) and
# imported, under the same tag, so the Dockerfiles are the same on both kinds of machine.
set -euo pipefail

image=${ROOT_IMAGE:-debian:trixie}
suite=${ROOT_SUITE:-trixie}
log() { printf 'root-image: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if docker image inspect "$image" >/dev/null 2>&1; then
  exit 0
fi
if timeout 60 docker pull -q "$image" >/dev/null 2>&1; then
  log "pulled $image"
  exit 0
fi

log "$image cannot be pulled: building it with debootstrap ($suite, minbase)"
command -v debootstrap >/dev/null 2>&1 || \
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
# bookworm's debootstrap knows trixie only through the symlinked script; make sure it exists.
[ -e "/usr/share/debootstrap/scripts/$suite" ] || as_root ln -s sid "/usr/share/debootstrap/scripts/$suite"

rootfs=$(mktemp -d /tmp/iotbench-rootfs.XXXXXX)
trap 'as_root rm -rf "$rootfs"' EXIT
log "debootstrap into $rootfs (a few minutes; log: $rootfs.log)"
if ! as_root debootstrap --variant=minbase "$suite" "$rootfs" >"$rootfs.log" 2>&1; then
  tail -n 30 "$rootfs.log" >&2
  log "debootstrap failed; full log: $rootfs.log"
  exit 1
fi
# Keep the image small, like the official one: no apt lists or caches.
as_root rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/archives/*.deb
as_root tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["bash"]' - "$image" >/dev/null
log "imported $image"
