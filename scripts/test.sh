#!/usr/bin/env bash
# The test command (README, .ci/run): installs what the tests need — a real C
# language server (clangd), zlib's header (the held-out retrieval fixture) and the
# embedding model (into target/test-model) — then runs the whole suite. Extra
# arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v clangd >/dev/null 2>&1; then
  echo "installing clangd for the code-toolset tests" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clangd >/dev/null
fi
if [ ! -f /usr/include/zlib.h ] && [ -z "${CAIRN_TEST_ZLIB_H:-}" ]; then
  # The held-out retrieval fixture is zlib's API reference, read at test time.
  echo "installing zlib1g-dev for the held-out retrieval test" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq zlib1g-dev >/dev/null
fi
scripts/fetch-model.sh "$PWD/target/test-model"
export CAIRN_TEST_MODEL_DIR="$PWD/target/test-model"
exec cargo test --locked "$@"
