#!/usr/bin/env bash
# Builds the Dockerfile's image and checks it as a user would run it: the server runs
# as a non-root user, the baked-in model is the embedder, a write made by one container
# is read by the next on the same volume, and a stdio MCP session lists the tools.
# Without a container engine (`docker info` fails) it says so and exits 0: the
# Dockerfile is then untested on this machine (README, "Docker").
set -euo pipefail
cd "$(dirname "$0")/.."
if ! docker info >/dev/null 2>&1; then
  echo "docker-test: no container engine answers here; the image is not built" >&2
  exit 0
fi
IMAGE=${CAIRN_IMAGE:-cairn-test}
VOLUME=cairn-test-$$
trap 'docker volume rm -f "$VOLUME" >/dev/null 2>&1 || true' EXIT
docker build -t "$IMAGE" .
fail() { echo "docker-test: $*" >&2; exit 1; }

uid=$(docker run --rm --entrypoint id "$IMAGE" -u)
[[ "$uid" != 0 ]] || fail "the server runs as root"

docker run --rm "$IMAGE" embed "a cat sat on the mat" "a kitten rested on the rug" \
  | grep -qi "minilm" || fail "the baked-in model is not the embedder"

docker run --rm -v "$VOLUME:/data" "$IMAGE" call manage_container \
  '{"operation":"create","containerType":"project","name":"Docker check"}' >/dev/null
docker run --rm -v "$VOLUME:/data" "$IMAGE" call query_container \
  '{"operation":"overview","containerType":"project"}' | grep -q "Docker check" \
  || fail "a project written to the volume was not read back by the next container"

reply=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"docker-test","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  | docker run -i --rm -v "$VOLUME:/data" "$IMAGE")
grep -q '"manage_container"' <<<"$reply" || fail "tools/list over stdio did not answer: $reply"
echo "docker-test: the image builds, runs as uid $uid, embeds with its model, keeps /data, serves MCP" >&2
