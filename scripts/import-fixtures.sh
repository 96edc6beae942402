#!/usr/bin/env bash
# Regenerates the importers' fixtures (tests/fixtures/import/) by running the real
# servers Cairn imports from, through their own MCP tools: the TypeScript
# task-orchestrator port (on bun) and the official MCP memory server (on node).
# Both come from npm at pinned versions into target/import-tools; the MCP client is
# the Python SDK scripts/test.sh installs into target/py-mcp. The ids and timestamps
# are the servers' own, so every run writes different files: commit them together.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=target/import-tools
mkdir -p "$tools"
if [ ! -x "$tools/node_modules/.bin/bun" ] || [ ! -x "$tools/node_modules/.bin/mcp-server-memory" ]; then
  [ -f "$tools/package.json" ] || echo '{}' >"$tools/package.json"
  npm install --prefix "$tools" --no-audit --no-fund \
    bun@1.4.5 @allpepper/task-orchestrator@3.3.3 @modelcontextprotocol/server-memory@2026.8.31
fi
if ! target/py-mcp/bin/python -c 'import mcp' >/dev/null 2>&1; then
  echo "the Python MCP SDK is missing: run scripts/test.sh once (it installs target/py-mcp)" >&2
  exit 1
fi
target/py-mcp/bin/python scripts/import_fixtures.py "$PWD/$tools" "$PWD/tests/fixtures/import"
echo "written: $(ls tests/fixtures/import | tr '\n' ' ')"
