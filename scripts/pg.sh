#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the tests and benches, under target/pg, listening
# on a Unix socket only. Installs Debian's PostgreSQL when it is missing.
#
#   scripts/pg.sh start   creates (first time) and starts the cluster; prints the URL
#   scripts/pg.sh stop    stops it
#   scripts/pg.sh clean   stops it and removes its files
#   scripts/pg.sh url     prints the URL of the running cluster
#
# The server runs as the `postgres` user (or `nobody` when there is none): PostgreSQL
# refuses to run as root, and the tests run as root in CI. That user must reach the
# cluster's files: when the checkout is in a directory it cannot enter (under /root,
# say), target/pg is a link to a directory under /tmp. The socket is under /tmp in any
# case, since a Unix socket's path may not be longer than 107 bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
base="$PWD/target/pg"
sock="/tmp/cairn-pg-$(printf %s "$PWD" | md5sum | cut -c1-12)"
url="postgres://cairn@localhost/cairn?host=$sock"

bin_dir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$d/initdb" ] && { echo "$d"; return; }
  done
  return 1
}

install_pg() {
  if ! bin_dir >/dev/null; then
    echo "installing PostgreSQL for the PostgreSQL backend's tests" >&2
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    # The package may start a default cluster of its own; the tests do not use it.
    for conf in /etc/postgresql/*/main; do
      [ -d "$conf" ] || continue
      pg_ctlcluster "$(basename "$(dirname "$conf")")" main stop >/dev/null 2>&1 || true
    done
  fi
}

run_as() {
  local user="$1"; shift
  if [ "$(id -u)" = 0 ]; then
    # From /, which that user can enter (the checkout may not be).
    (cd / && setpriv --reuid="$user" --regid="$(id -g "$user")" --init-groups -- "$@")
  else
    "$@"
  fi
}

owner() {
  if [ "$(id -u)" != 0 ]; then id -un; elif id postgres >/dev/null 2>&1; then echo postgres; else echo nobody; fi
}

# Where the cluster's files are (target/pg, or where it links to).
home() {
  if [ -L "$base" ]; then readlink -f "$base"; else echo "$base"; fi
}

case "${1:-}" in
  start)
    install_pg
    bin="$(bin_dir)"
    user="$(owner)"
    mkdir -p "$PWD/target"
    if [ ! -e "$base" ] && ! run_as "$user" test -x "$PWD/target"; then
      ln -s "$(mktemp -d /tmp/cairn-pg-data.XXXXXX)" "$base"
    fi
    mkdir -p "$(home)" "$sock"
    data="$(home)/data"
    if [ ! -f "$data/PG_VERSION" ]; then
      rm -rf "$data"
      mkdir -p "$data"
      chown -R "$user" "$(home)"
      run_as "$user" "$bin/initdb" -D "$data" -U cairn --auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >/dev/null
    fi
    chown -R "$user" "$(home)" "$sock"
    if ! run_as "$user" "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
      opts="-k $sock -c listen_addresses='' -c max_connections=200"
      # PG_FAST=1 (the test script): no fsync, since a test cluster holds nothing worth
      # a crash-safe write and what is tested is Cairn's server being killed, not
      # PostgreSQL's. Its WAL is kept small too: each test's CREATE DATABASE logs a
      # copy of the template, and a small CI disk must hold the whole run. Benches run
      # with PostgreSQL's durable defaults.
      if [ "${PG_FAST:-}" = 1 ]; then opts="$opts -c fsync=off -c max_wal_size=256MB -c min_wal_size=64MB"; fi
      run_as "$user" "$bin/pg_ctl" -D "$data" -l "$(home)/server.log" -w -t 60 start -o "$opts" >/dev/null
    fi
    run_as "$user" "$bin/psql" -h "$sock" -U cairn -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = 'cairn'" | grep -q 1 ||
      run_as "$user" "$bin/createdb" -h "$sock" -U cairn cairn
    echo "$url"
    ;;
  stop|clean)
    if bin="$(bin_dir)" && [ -f "$(home)/data/PG_VERSION" ]; then
      run_as "$(owner)" "$bin/pg_ctl" -D "$(home)/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    if [ "$1" = clean ]; then
      rm -rf "$(home)" "$base" "$sock"
    fi
    ;;
  url)
    echo "$url"
    ;;
  *)
    echo "usage: scripts/pg.sh start|stop|clean|url" >&2
    exit 2
    ;;
esac
