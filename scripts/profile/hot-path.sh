#!/bin/bash
# CPU profile of the gateway's hot path, per stage (docs/performance.md, "Where a call's CPU goes").
#
#   bash scripts/profile/hot-path.sh [bare|plain|stream|fallback|all] [SECONDS]
#
# For each scenario: the bench mock (../shared/bench/src/mock.ts, canned OpenAI answers) and a gateway on a fresh
# SQLite database started with `bun --cpu-prof`, `wrk -c32` for SECONDS (default 8) with the scenario's request,
# then SIGINT (Bun writes the profile) and scripts/profile/stages.ts prints the CPU by stage and the top functions.
#   bare      the bench's bare proxy (../shared/bench/src/bare-proxy.ts) in the gateway's place: the floor
#   plain     x-gateway-provider openai + a custom host, a non-streamed chat call (the bench's scenario A)
#   stream    the same, streamed (20 chunks)
#   fallback  a fallback config whose first target answers 500 and the second 200: two upstream calls a request
# Pinned like the bench when taskset is there (wrk and the mock on CPU 0, the gateway on CPU 1); PIN=0: unpinned.
# EXTRA_ENV="NAME=value …" adds settings to the gateway (e.g. GATEWAY_DISABLED_PLUGINS=… to price a plugin).
# Profiles and outputs go to $OUT (default /tmp/gateway-profile). Needs wrk.
set -u
OUT=${OUT:-/tmp/gateway-profile}
SECONDS_EACH=${2:-8}
WHICH=${1:-all}
MOCK_PORT=${MOCK_PORT:-18951}
GW_PORT=${GW_PORT:-18952}
# shellcheck source=scripts/profile/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

start_mock
trap 'kill $MOCK_PID 2>/dev/null' EXIT

# The mock answers any path ending in /chat/completions; a closed port stands for a failing first target.
FALLBACK="{\"strategy\":{\"mode\":\"fallback\"},\"targets\":[{\"provider\":\"openai\",\"api_key\":\"x\",\"custom_host\":\"http://127.0.0.1:1/v1\"},{\"provider\":\"openai\",\"api_key\":\"x\",\"custom_host\":\"$HOST\"}]}"

run() { # $1 name, $2 lua file
  local name=$1 dir="$OUT/$1"
  rm -rf "$dir" && mkdir -p "$dir"
  if [ "$name" = bare ]; then
    "${CPU1[@]}" env PORT=$GW_PORT UPSTREAM="http://127.0.0.1:$MOCK_PORT" "$BUN" --cpu-prof --cpu-prof-dir="$dir" \
      --preload "$ROOT/scripts/profile/exit-on-sigint.ts" "$ROOT/../shared/bench/src/bare-proxy.ts" >"$dir/gateway.log" 2>&1 &
    GW_PID=$!
    wait_health
  else
    start_gateway "$dir" --cpu-prof --cpu-prof-dir="$dir"
  fi
  local gw=$GW_PID
  load "$dir" "$2" "$SECONDS_EACH"
  kill -INT $gw; wait $gw
  local prof
  prof=$(ls "$dir"/*.cpuprofile 2>/dev/null | head -1)
  echo "== $name: $(grep -E 'Requests/sec' "$dir/wrk.txt")"
  # CPU per thread during the measured run: the profile sees the main thread only, not the log writer's.
  echo "CPU by thread during the run (µs per request, $(awk '/requests in/ {print $1}' "$dir/wrk.txt") requests):"
  cpu_by_thread "$dir" | tee "$dir/threads.txt"
  if [ -n "$prof" ]; then "$BUN" "$ROOT/scripts/profile/stages.ts" "$prof" | tee "$dir/stages.txt"; else echo "no profile written"; fi
}

case $WHICH in bare | all) lua "$BODY" "wrk.headers[\"authorization\"] = \"Bearer x\"" >"$OUT/bare.lua"; run bare "$OUT/bare.lua" ;; esac
case $WHICH in plain | all) lua "$BODY" "$PLAIN_HEADERS" >"$OUT/plain.lua"; run plain "$OUT/plain.lua" ;; esac
case $WHICH in stream | all) lua "$STREAM_BODY" "$PLAIN_HEADERS" >"$OUT/stream.lua"; run stream "$OUT/stream.lua" ;; esac
case $WHICH in fallback | all) lua "$BODY" "wrk.headers[\"x-gateway-config\"] = '$FALLBACK'" >"$OUT/fallback.lua"; run fallback "$OUT/fallback.lua" ;; esac
