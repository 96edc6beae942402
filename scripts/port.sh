#!/usr/bin/env bash
# The TypeScript task-orchestrator port that `cargo bench --bench bench` measures beside
# Cairn: installs bun and the port from npm at pinned versions into target/port-tools
# when they are missing, then prints the two paths the bench starts it with (bun, then
# the port's server.ts), one a line. Run on its own to install ahead of a bench. When
# npm cannot install them it says why on stderr and exits 1; the bench then prints
# Cairn's figures alone.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/port-tools
bun="$PWD/$tools/node_modules/.bin/bun"
server="$PWD/$tools/node_modules/@allpepper/task-orchestrator/src/server.ts"
if [ ! -x "$bun" ] || [ ! -f "$server" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "npm is not installed: the port (bun, @allpepper/task-orchestrator) cannot be installed" >&2
    exit 1
  fi
  mkdir -p "$tools"
  [ -f "$tools/package.json" ] || echo '{}' >"$tools/package.json"
  echo "installing bun@1.4.5 and @allpepper/task-orchestrator@3.3.3 (npm) into $tools for the port's column" >&2
  if ! timeout 600 npm install --prefix "$tools" --no-audit --no-fund --loglevel=error \
      bun@1.4.5 @allpepper/task-orchestrator@3.3.3 >&2; then
    echo "npm could not install bun and the port (is the registry reachable?)" >&2
    exit 1
  fi
fi
# bun's npm package leaves its binary in place without its install script, but check.
if ! "$bun" --version >/dev/null 2>&1; then
  echo "$bun does not run" >&2
  exit 1
fi
echo "$bun"
echo "$server"
