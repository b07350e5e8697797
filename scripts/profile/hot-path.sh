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
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUN="$ROOT/node_modules/.bin/bun"
MOCK="$ROOT/../shared/bench/src/mock.ts"
OUT=${OUT:-/tmp/gateway-profile}
SECONDS_EACH=${2:-8}
WHICH=${1:-all}
MOCK_PORT=18971
GW_PORT=18972
KEY=profile-admin-key-0123456789abcdef0123
if [ "${PIN:-1}" = 0 ] || ! command -v taskset >/dev/null; then CPU0=(); CPU1=(); else CPU0=(taskset -c 0); CPU1=(taskset -c 1); fi
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 2; }
mkdir -p "$OUT"

"${CPU0[@]}" env MOCK_PORT=$MOCK_PORT "$BUN" "$MOCK" >"$OUT/mock.log" 2>&1 &
MOCK_PID=$!
trap 'kill $MOCK_PID 2>/dev/null' EXIT

BODY='{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in five words, please."}]}'
STREAM_BODY='{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in five words, please."}]}'
HOST="http://127.0.0.1:$MOCK_PORT/v1"
# The mock answers any path ending in /chat/completions; a closed port stands for a failing first target.
FALLBACK="{\"strategy\":{\"mode\":\"fallback\"},\"targets\":[{\"provider\":\"openai\",\"api_key\":\"x\",\"custom_host\":\"http://127.0.0.1:1/v1\"},{\"provider\":\"openai\",\"api_key\":\"x\",\"custom_host\":\"$HOST\"}]}"

lua() { # $1 body, $2 extra header lines
  cat <<L
wrk.method = "POST"
wrk.body = '$1'
wrk.headers["content-type"] = "application/json"
wrk.headers["x-gateway-api-key"] = "$KEY"
$2
L
}

threads() { # "<thread name>#<tid> <utime+stime>" for each thread of process $1 (the gateway, under env/taskset)
  local pid
  pid=$(pgrep -P "$1" -f core/server/src/main.ts | head -1)
  [ -n "$pid" ] || pid=$1
  for t in /proc/"$pid"/task/*; do
    printf '%s#%s %s\n' "$(tr ' ' _ <"$t/comm")" "${t##*/}" "$(awk '{print $14+$15}' "$t/stat")"
  done
}

run() { # $1 name, $2 lua file
  local name=$1 dir="$OUT/$1"
  rm -rf "$dir" && mkdir -p "$dir"
  if [ "$name" = bare ]; then
    "${CPU1[@]}" env PORT=$GW_PORT UPSTREAM="http://127.0.0.1:$MOCK_PORT" "$BUN" --cpu-prof --cpu-prof-dir="$dir" \
      --preload "$ROOT/scripts/profile/exit-on-sigint.ts" "$ROOT/../shared/bench/src/bare-proxy.ts" >"$dir/gateway.log" 2>&1 &
  else
    (cd "$ROOT" && exec "${CPU1[@]}" env PORT=$GW_PORT HOST=127.0.0.1 DATABASE_URL="sqlite:$dir/gateway.db" \
      GATEWAY_ADMIN_API_KEY=$KEY TRUSTED_CUSTOM_HOSTS=127.0.0.1 LOG_LEVEL=warn BUN_CONFIG_MAX_HTTP_REQUESTS=65535 \
      ${EXTRA_ENV:-} "$BUN" --cpu-prof --cpu-prof-dir="$dir" core/server/src/main.ts) >"$dir/gateway.log" 2>&1 &
  fi
  local gw=$!
  for _ in $(seq 100); do curl -sf "127.0.0.1:$GW_PORT/health" >/dev/null && break; sleep 0.1; done
  "${CPU0[@]}" wrk -t1 -c32 -d2s -s "$2" "http://127.0.0.1:$GW_PORT/v1/chat/completions" >/dev/null # warm-up
  threads "$gw" >"$dir/threads-before.txt"
  "${CPU0[@]}" wrk -t1 -c32 -d"${SECONDS_EACH}s" -s "$2" "http://127.0.0.1:$GW_PORT/v1/chat/completions" >"$dir/wrk.txt"
  threads "$gw" >"$dir/threads-after.txt"
  kill -INT $gw; wait $gw
  local prof
  prof=$(ls "$dir"/*.cpuprofile 2>/dev/null | head -1)
  echo "== $name: $(grep -E 'Requests/sec' "$dir/wrk.txt")"
  # CPU per thread during the measured run: the profile sees the main thread only, not the log writer's.
  local requests tck
  requests=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
  tck=$(getconf CLK_TCK)
  echo "CPU by thread during the run (µs per request, $requests requests):"
  join -j1 <(sort "$dir/threads-before.txt") <(sort "$dir/threads-after.txt") |
    awk -v n="$requests" -v tck="$tck" '{d=$3-$2; if (d>0) printf "  %-24s %8.1f\n", $1, d*1e6/tck/n}' | sort -k2 -nr | tee "$dir/threads.txt"
  if [ -n "$prof" ]; then "$BUN" "$ROOT/scripts/profile/stages.ts" "$prof" | tee "$dir/stages.txt"; else echo "no profile written"; fi
}

case $WHICH in bare | all) lua "$BODY" "wrk.headers[\"authorization\"] = \"Bearer x\"" >"$OUT/bare.lua"; run bare "$OUT/bare.lua" ;; esac
case $WHICH in plain | all) lua "$BODY" "wrk.headers[\"x-gateway-provider\"] = \"openai\"
wrk.headers[\"authorization\"] = \"Bearer x\"
wrk.headers[\"x-gateway-custom-host\"] = \"$HOST\"" >"$OUT/plain.lua"; run plain "$OUT/plain.lua" ;; esac
case $WHICH in stream | all) lua "$STREAM_BODY" "wrk.headers[\"x-gateway-provider\"] = \"openai\"
wrk.headers[\"authorization\"] = \"Bearer x\"
wrk.headers[\"x-gateway-custom-host\"] = \"$HOST\"" >"$OUT/stream.lua"; run stream "$OUT/stream.lua" ;; esac
case $WHICH in fallback | all) lua "$BODY" "wrk.headers[\"x-gateway-config\"] = '$FALLBACK'" >"$OUT/fallback.lua"; run fallback "$OUT/fallback.lua" ;; esac
