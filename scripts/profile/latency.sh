#!/bin/bash
# Latency at concurrency 1, the shared bench's scenario A latency (docs/performance.md, "The writer's priority"):
# one connection, one request after another, wrk's percentiles, for the bare proxy and the gateway with and without
# its request log. Each round starts a fresh process, warms it with 3 s at c=64 and lets the log drain for 2 s.
#
#   bash scripts/profile/latency.sh [SCENARIO ...]     # default: bare plain log-off; ROUNDS=3 SECONDS_EACH=10
#
# Scenarios as in sustained.sh. EXTRA_ENV="NAME=value …" adds settings to every gateway scenario. Pinned like the
# bench (wrk and the mock on CPU 0, the system on CPU 1). The tail (p99) moves a lot between rounds on a shared
# machine: compare scenarios within one run, over several rounds.
set -u
OUT=${OUT:-/tmp/gateway-latency}
MOCK_PORT=${MOCK_PORT:-18961}
GW_PORT=${GW_PORT:-18962}
ROUNDS=${ROUNDS:-3}
SECONDS_EACH=${SECONDS_EACH:-10}
# shellcheck source=scripts/profile/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ $# -gt 0 ] || set -- bare plain log-off

start_mock
trap 'kill $MOCK_PID 2>/dev/null' EXIT
lua "$BODY" "$PLAIN_HEADERS" >"$OUT/plain.lua"

echo "scenario  round  p50  p90  p99  req/s   (wrk -c1 --latency, ${SECONDS_EACH} s)"
for r in $(seq "$ROUNDS"); do
  for name in "$@"; do
    dir="$OUT/$name-$r"
    rm -rf "$dir" && mkdir -p "$dir"
    start_system "$name" "$dir"
    "${CPU0[@]}" wrk -t1 -c64 -d3s -s "$OUT/plain.lua" "http://127.0.0.1:$GW_PORT/v1/chat/completions" >/dev/null
    sleep 2
    "${CPU0[@]}" wrk -t1 -c1 -d"${SECONDS_EACH}s" --latency -s "$OUT/plain.lua" "http://127.0.0.1:$GW_PORT/v1/chat/completions" >"$dir/wrk.txt"
    kill "$GW_PID" 2>/dev/null
    wait "$GW_PID" 2>/dev/null
    if grep -q 'Non-2xx' "$dir/wrk.txt"; then echo "WARNING: $name round $r: $(grep 'Non-2xx' "$dir/wrk.txt" | xargs)" >&2; fi
    printf '%-9s %5s  %s %s\n' "$name" "$r" "$(awk '$1 == "50%" || $1 == "90%" || $1 == "99%" {printf "%s ", $2}' "$dir/wrk.txt")" \
      "$(awk '/Requests\/sec/ {print $2}' "$dir/wrk.txt")"
  done
done
