#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and benches, under target/pg, listening
# on a Unix socket only. Installs Debian's PostgreSQL when it is missing.
#
#   scripts/pg.sh start   creates (first time) and starts the cluster; prints the URL
#   scripts/pg.sh stop    stops it
#   scripts/pg.sh url     prints the URL of the running cluster
#
# The server runs as the `postgres` user (or `nobody` when there is none): PostgreSQL
# refuses to run as root, and the tests run as root in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
base="$PWD/target/pg"
data="$base/data"
sock="$base/sock"
url="postgres://cairn@localhost/cairn?host=$sock"

bin_dir() {
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return; }
  done
  return 1
}

install_pg() {
  if ! bin_dir >/dev/null; then
    echo "installing PostgreSQL for the PostgreSQL backend's tests" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
}

run_as() {
  local user="$1"; shift
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups -- "$@"
  else
    "$@"
  fi
}

owner() {
  if [ "$(id -u)" != 0 ]; then id -un; elif id postgres >/dev/null 2>&1; then echo postgres; else echo nobody; fi
}

case "${1:-}" in
  start)
    install_pg
    bin="$(bin_dir)"
    user="$(owner)"
    mkdir -p "$base" "$sock"
    if [ ! -f "$data/PG_VERSION" ]; then
      rm -rf "$data"
      mkdir -p "$data"
      chown -R "$user" "$base"
      run_as "$user" "$bin/initdb" -D "$data" -U cairn --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    chown -R "$user" "$base"
    if ! run_as "$user" "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      opts="-k $sock -c listen_addresses='' -c max_connections=200"
      # PG_FAST=1 (the test script): no fsync, since a test cluster holds nothing worth
      # a crash-safe write and what is tested is Cairn's server being killed, not
      # PostgreSQL's. Benches run with PostgreSQL's durable defaults.
      if [ "${PG_FAST:-}" = 1 ]; then opts="$opts -c fsync=off"; fi
      run_as "$user" "$bin/pg_ctl" -D "$data" -l "$base/server.log" -w -t 60 start -o "$opts" >/dev/null
    fi
    run_as "$user" "$bin/psql" -h "$sock" -U cairn -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = 'cairn'" | grep -q 1 ||
      run_as "$user" "$bin/createdb" -h "$sock" -U cairn cairn
    echo "$url"
    ;;
  stop)
    bin="$(bin_dir)" || exit 0
    user="$(owner)"
    if [ -f "$data/PG_VERSION" ]; then
      run_as "$user" "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    ;;
  url)
    echo "$url"
    ;;
  *)
    echo "usage: scripts/pg.sh start|stop|url" >&2
    exit 2
    ;;
esac
