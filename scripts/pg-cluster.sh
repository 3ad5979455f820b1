#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for leasehold's store tests and store benchmark.
#
#   scripts/pg-cluster.sh start   # initdb (first time) + pg_ctl start; prints the export line
#   scripts/pg-cluster.sh env     # prints the export line of a running cluster
#   scripts/pg-cluster.sh stop    # pg_ctl stop and remove the cluster folder
#   scripts/pg-cluster.sh halt    # pg_ctl stop -m fast, keeping the folder: a database outage
#                                 # that `start` ends (the queue chaos test's fault)
#
# Usage in a shell or CI:  eval "$(scripts/pg-cluster.sh start)"
# which exports LEASEHOLD_TEST_PG_URL; the PostgreSQL tests skip (one line saying so)
# when it is absent. Progress goes to stderr, the export line alone to stdout.
#
# The cluster listens on a private Unix socket folder only (no TCP), on its own port
# number, so it never meets a system PostgreSQL. initdb and pg_ctl refuse to run as
# root, so as root they run as the `postgres` user on a folder that user owns.
#
# Environment: PG_BIN (default /usr/lib/postgresql/15/bin), LEASEHOLD_PG_DIR
# (default /tmp/leasehold-pg), LEASEHOLD_PG_PORT (default 54329).
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_DIR=${LEASEHOLD_PG_DIR:-/tmp/leasehold-pg}
PG_PORT=${LEASEHOLD_PG_PORT:-54329}
DATA="$PG_DIR/data"
SOCK="$PG_DIR/sock"
DB=leasehold

say() { echo "pg-cluster: $*" >&2; }

# Runs a server binary as the cluster's owner: `postgres` when we are root.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

print_env() {
  echo "export LEASEHOLD_TEST_PG_URL='postgres://postgres@localhost/$DB?host=$SOCK&port=$PG_PORT'"
}

running() {
  [ -f "$DATA/PG_VERSION" ] && as_owner "$PG_BIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

start() {
  if [ ! -x "$PG_BIN/initdb" ] || [ ! -x "$PG_BIN/pg_ctl" ]; then
    say "no PostgreSQL server binaries at $PG_BIN; PostgreSQL tests will be skipped"
    return 0
  fi
  if running; then
    say "already running in $PG_DIR on port $PG_PORT"
    print_env
    return 0
  fi
  mkdir -p "$PG_DIR" "$SOCK"
  if [ "$(id -u)" = 0 ]; then chown -R postgres: "$PG_DIR"; fi
  if [ ! -f "$DATA/PG_VERSION" ]; then
    say "initdb in $DATA"
    as_owner "$PG_BIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 \
      --no-instructions >"$PG_DIR/initdb.log" 2>&1 || {
      cat "$PG_DIR/initdb.log" >&2
      exit 1
    }
    # Socket only, private folder, own port. Durability settings stay at their
    # defaults so pgbench and the store benchmark measure the same server.
    cat >>"$DATA/postgresql.conf" <<EOF
listen_addresses = ''
unix_socket_directories = '$SOCK'
port = $PG_PORT
max_connections = 200
EOF
  fi
  say "starting on port $PG_PORT (socket folder $SOCK)"
  as_owner "$PG_BIN/pg_ctl" -D "$DATA" -l "$PG_DIR/server.log" -w -t 60 start >/dev/null || {
    tail -20 "$PG_DIR/server.log" >&2
    exit 1
  }
  if ! as_owner "$PG_BIN/psql" -h "$SOCK" -p "$PG_PORT" -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_database WHERE datname = '$DB'" | grep -q 1; then
    as_owner "$PG_BIN/createdb" -h "$SOCK" -p "$PG_PORT" -U postgres "$DB"
  fi
  print_env
}

stop() {
  if running; then
    say "stopping"
    as_owner "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
  fi
  rm -rf "$PG_DIR"
}

# The server goes away as in a crash of its host or a restart (-m fast: sessions are cut
# off, nothing waits for them); the cluster stays for `start` to bring back.
halt() {
  if ! running; then
    say "not running in $PG_DIR"
    exit 1
  fi
  as_owner "$PG_BIN/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  halt) halt ;;
  env)
    if running; then print_env; else say "not running (run: $0 start)"; exit 1; fi
    ;;
  *)
    echo "usage: $0 start|stop|halt|env" >&2
    exit 2
    ;;
esac
