#!/bin/sh
# The test command: installs what the tests need (a real C language server), then
# runs the whole suite. Extra arguments go to `cargo test`.
set -e
if ! command -v clangd >/dev/null 2>&1; then
  echo "installing clangd for the code-toolset tests" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clangd >/dev/null
fi
exec cargo test --locked "$@"
