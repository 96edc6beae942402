#!/usr/bin/env bash
# The test command: installs what the tests need (the embedding model, into
# target/test-model), then runs the whole suite. Arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/fetch-model.sh "$PWD/target/test-model"
export CAIRN_TEST_MODEL_DIR="$PWD/target/test-model"
exec cargo test --locked "$@"
