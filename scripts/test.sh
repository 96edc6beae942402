#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need — real language
# servers (clangd, Debian's pylsp, typescript-language-server from npm), zlib's header (the held-out retrieval fixture), Debian's
# CPython 3.11 and its pip (the retrieval benchmark's sets), a headless
# browser and its WebDriver (Debian's chromium and chromium-driver, for the page's
# tests), curl (the ontology toolset's GitHub calls), PostgreSQL (scripts/pg.sh), the
# embedding model (into target/test-model), the Python MCP SDK (into target/py-mcp,
# when pip can reach its index) and the TypeScript MCP SDK (into target/ts-mcp, when npm
# can reach its registry) — then runs the whole suite on SQLite,
# and the integration suite again on a throwaway PostgreSQL cluster under target/pg,
# stopped at the end whatever the outcome, and last the Dockerfile's image where a container
# engine answers (scripts/docker-test.sh); before the tests, `cargo fmt --check` and
# clippy with warnings denied. Extra arguments go to both `cargo test`s.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
command -v clangd >/dev/null 2>&1 || missing+=(clangd)
# A Python language server (Debian's pylsp) when neither it nor pyright is installed.
command -v pylsp >/dev/null 2>&1 || command -v pyright-langserver >/dev/null 2>&1 || missing+=(python3-pylsp)
# The held-out retrieval fixture is zlib's API reference, read at test time.
[ -f /usr/include/zlib.h ] || [ -n "${CAIRN_TEST_ZLIB_H:-}" ] || missing+=(zlib1g-dev)
# The retrieval benchmark's sets (tests/it/retrieval.rs): the standard library's
# docstrings read by Debian's CPython 3.11, and a PyPI package fetched with its pip
# (into target/retrieval/, by the test itself).
[ -x /usr/bin/python3.11 ] || [ -n "${CAIRN_RETRIEVAL_PYTHON:-}" ] || missing+=(python3.11)
[ -n "${CAIRN_RETRIEVAL_PYTHON:-}" ] || /usr/bin/python3.11 -m pip --version >/dev/null 2>&1 || missing+=(python3-pip)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} for the tests (clangd, python3-pylsp: the code toolset; zlib1g-dev, python3.11, python3-pip: retrieval sets; chromium: the page; curl: GitHub calls)" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# TypeScript's language server from npm; TypeScript 5, since 7 ships no tsserver.
if ! command -v typescript-language-server >/dev/null 2>&1 \
    || ! [ -f "$(npm root -g 2>/dev/null)/typescript/lib/tsserver.js" ]; then
  echo "installing typescript-language-server and typescript@5 (npm) for the code toolset's tests" >&2
  npm install -g -s typescript-language-server typescript@5 >/dev/null
fi
scripts/fetch-model.sh "$PWD/target/test-model"
# The official Python MCP SDK, for the HTTP test that another client library ends its
# session cleanly: a virtualenv under target/, made once. Offline (or without python3)
# it is left out and that test says it was skipped.
if ! target/py-mcp/bin/python -c 'import mcp' >/dev/null 2>&1; then
  rm -rf target/py-mcp
  if ! { command -v python3 >/dev/null 2>&1 \
      && python3 -m venv target/py-mcp >/dev/null 2>&1 \
      && target/py-mcp/bin/pip install -q --disable-pip-version-check 'mcp==2.3.0' >/dev/null 2>&1; }; then
    echo "the Python MCP SDK could not be installed (offline?); its HTTP test is skipped" >&2
    rm -rf target/py-mcp
  fi
fi
# The official TypeScript MCP SDK, pinned, for the test that its client accepts every
# tool's answer against the tool's outputSchema (tests/it/sdk_output.rs); offline it is
# left out and that test says it was skipped.
TS_MCP=1.32.2
if ! grep -qs "\"version\": \"$TS_MCP\"" target/ts-mcp/node_modules/@modelcontextprotocol/sdk/package.json; then
  rm -rf target/ts-mcp
  mkdir -p target/ts-mcp
  if ! npm install -s --no-audit --no-fund --prefix target/ts-mcp "@modelcontextprotocol/sdk@$TS_MCP" >/dev/null 2>&1; then
    echo "the TypeScript MCP SDK could not be installed (offline?); its test is skipped" >&2
    rm -rf target/ts-mcp
  fi
fi
export CAIRN_TEST_MODEL_DIR="$PWD/target/test-model"
# Formatting and clippy's lints over every crate and target, warnings refused. CI
# starts from a fresh checkout, so rustup's components are added when missing.
cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt
cargo clippy --version >/dev/null 2>&1 || rustup component add clippy
cargo fmt --all --check
cargo clippy --locked --workspace --all-targets -- -D warnings
# Every crate of the workspace: the binary's unit and integration tests, and the
# cores' unit tests (crates/).
env -u CAIRN_TEST_PG cargo test --locked --workspace "$@"
# The same integration suite on PostgreSQL: a fresh cluster each run (every test
# makes a database of its own), fsync off (what is tested is Cairn, not the disk).
trap 'scripts/pg.sh stop' EXIT
scripts/pg.sh clean
CAIRN_TEST_PG="$(PG_FAST=1 scripts/pg.sh start)"
export CAIRN_TEST_PG
cargo test --locked --test it "$@"
# The Dockerfile's image, where a container engine answers (it says so and passes
# where none does, as on the machine Cairn is developed on).
scripts/docker-test.sh
