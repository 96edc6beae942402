#!/usr/bin/env bash
# The whole `manage_ontology import` of a generated OFN document through the binary
# (`cairn call`, a fresh SQLite database and git repository per size), niced, then
# the sync of the merged pages: wall-clock and CPU seconds of each whole process. Usage:
# scripts/import-bench.sh BINARY [SIZES...] (default 10000 100000). The document is
# generated here: a tree of classes (ten children each) with a second parent for
# every third class, an existential for every fifth, and a label on every class.
# With $CAIRN_ELK_CP (scripts/elk-bench.sh fetches ELK and builds its driver) ELK 0.6
# loads and classifies the same file, its whole process timed the same way, so the
# import is read beside ELK's whole run. $NICE (default 19) is every process's nice.
set -euo pipefail
bin="$(realpath "$1")"; shift
sizes=("${@:-10000 100000}")
nice_=${NICE:-19}
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
for n in ${sizes[@]}; do
  d="$work/$n"; mkdir -p "$d/repo/pages"
  python3 - "$n" > "$d/repo/onto.ofn" <<'PY'
import sys
n = int(sys.argv[1])
out = ["Prefix(g:=<http://example.org/generated#>)", "Ontology(<http://example.org/generated>"]
for p in range(4):
    out.append(f"Declaration(ObjectProperty(g:p{p}))")
for i in range(n):
    out.append(f"Declaration(Class(g:C{i}))")
    out.append(f'AnnotationAssertion(rdfs:label g:C{i} "Class {i}")')
    if i:
        out.append(f"SubClassOf(g:C{i} g:C{(i - 1) // 10})")
    if i > 20 and i % 3 == 0:
        out.append(f"SubClassOf(g:C{i} g:C{(i - 1) // 10 - 7})")
    if i > 10 and i % 5 == 0:
        out.append(f"SubClassOf(g:C{i} ObjectSomeValuesFrom(g:p{i % 4} g:C{i // 7}))")
out.append(")")
print("\n".join(out))
PY
  git -C "$d/repo" init -q -b main
  git -C "$d/repo" add onto.ofn && touch "$d/repo/pages/.keep" && git -C "$d/repo" add pages/.keep
  git -C "$d/repo" -c user.name=b -c user.email=b@b commit -qm doc
  export CAIRN_DB="$d/cairn.db" CAIRN_CONFIG="$d/config.toml"
  printf '[ontology]\nmax_document_mib = 64\n' > "$CAIRN_CONFIG"
  call() { nice -n "$nice_" "$bin" call "$@" >"$d/last.json" || { cat "$d/last.json"; exit 1; }; }
  timed() { /usr/bin/time -f "%e s wall, %U s user + %S s sys" -o "$d/$1.time" \
    nice -n "$nice_" "$bin" call manage_ontology "$2" >"$d/last.json" || { cat "$d/last.json"; exit 1; }; }
  call manage_container '{"operation":"create","containerType":"project","name":"Bench"}'
  pid=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["data"]["project"]["id"])' "$d/last.json")
  call manage_ontology "{\"projectId\":\"$pid\",\"operation\":\"attach\",\"repoPath\":\"$d/repo\"}"
  call manage_ontology "{\"projectId\":\"$pid\",\"operation\":\"sync\"}"
  timed import "{\"projectId\":\"$pid\",\"operation\":\"import\",\"path\":\"onto.ofn\"}"
  branch=$(python3 -c 'import json,sys;print(json.load(open(sys.argv[1]))["data"]["branch"])' "$d/last.json")
  git -C "$d/repo" merge -q --ff-only "$branch" 2>/dev/null
  timed sync "{\"projectId\":\"$pid\",\"operation\":\"sync\"}"
  files=$(git -C "$d/repo" ls-tree -r --name-only HEAD | wc -l)
  echo "$n classes ($files files): import $(cat "$d/import.time"); sync $(cat "$d/sync.time")"
  if [ -n "${CAIRN_ELK_CP:-}" ]; then
    /usr/bin/time -f "%e s wall, %U s user + %S s sys" -o "$d/elk.time" \
      nice -n "$nice_" java -cp "$CAIRN_ELK_CP" ElkBench "$d/repo/onto.ofn" "$d/elk.tsv" >/dev/null 2>&1
    echo "$n classes: ELK 0.6 load and classify, whole process $(cat "$d/elk.time")"
  fi
done
