#!/bin/sh
# A fresh PostgreSQL cluster in /tmp (the container's tmpfs), then the server in the foreground on
# $BIND_ADDRESS:$PGPORT (127.0.0.1 unless the harness names a remote engine's host, as for targets).
# Database iot, owned by user iot whose password is $POSTGRES_PASSWORD (the harness draws one per
# start); TCP logins need it (SCRAM), the socket in /tmp is reachable only inside the
# container and trusts its own user (psql for the harness's row counts).
set -eu
: "${PGPORT:?set PGPORT, the port to listen on}"
: "${BIND_ADDRESS:=127.0.0.1}"
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD, the password of user iot}"
data=/tmp/pgdata
umask 077
printf '%s\n' "$POSTGRES_PASSWORD" >/tmp/pwfile
initdb --pgdata="$data" --username=iot --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 \
  --encoding=UTF8 --no-locale --no-sync --no-instructions >/dev/null
rm -f /tmp/pwfile
if [ "$BIND_ADDRESS" != 127.0.0.1 ]; then
  # On a remote engine's host (docs/scale.md) the targets connect from that host's address and the
  # harness's readiness check from its own: logins to database iot as user iot from any address, with
  # the password (initdb's pg_hba.conf admits loopback only).
  printf 'host iot iot 0.0.0.0/0 scram-sha-256\nhost iot iot ::/0 scram-sha-256\n' >>"$data/pg_hba.conf"
fi
echo 'CREATE DATABASE iot OWNER iot' | postgres --single -D "$data" -c unix_socket_directories=/tmp postgres >/dev/null
# max_connections: room for a pool-size sweep (every target's pool, node-cluster's workers together).
exec postgres -D "$data" -c listen_addresses="$BIND_ADDRESS" -c port="$PGPORT" -c unix_socket_directories=/tmp \
  -c max_connections="${PG_MAX_CONNECTIONS:-200}"
