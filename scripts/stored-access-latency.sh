#!/bin/bash
# What stored provider access costs on the hot path: the same chat call with the provider named in headers
# (provider + Authorization + custom host), through an `@slug` provider built on a stored integration, through a
# saved config's id, and with the same config sent as JSON in x-gateway-config. c=1 latency (p50/p99) and c=64
# throughput (ROUNDS, CONNECTIONS and WAYS choose what runs), pinned like ../shared/bench (load generator and mock on CPU 0, gateway on CPU 1). Needs wrk, taskset.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUN="$ROOT/node_modules/.bin/bun"
MOCK="$ROOT/../shared/bench/src/mock.ts"
DIR="${TMPDIR:-/tmp}/stored-access-bench"
rm -rf "$DIR"; mkdir -p "$DIR"
MOCK_PORT=18970 taskset -c 0 $BUN "$MOCK" > "$DIR/mock.log" 2>&1 & MP=$!
sleep 0.5
(cd "$ROOT" && exec env PORT=18971 HOST=127.0.0.1 DATABASE_URL=sqlite:"$DIR"/gw.db GATEWAY_ADMIN_API_KEY=bench-admin-key-0123456789abcdef0123 LOG_LEVEL=warn BUN_CONFIG_MAX_HTTP_REQUESTS=65535 taskset -c 1 $BUN core/server/src/main.ts > "$DIR/gw.log" 2>&1) & GW=$!
trap 'kill $GW $MP 2>/dev/null' EXIT
for i in $(seq 100); do curl -s localhost:18971/health >/dev/null && break; sleep 0.1; done
HOSTURL=http://127.0.0.1:18970/v1
admin() { curl -s -f "localhost:18971/v1/$1" -H 'x-gateway-api-key: bench-admin-key-0123456789abcdef0123' -H 'content-type: application/json' -d "$2"; }
admin integrations "{\"name\":\"bench\",\"slug\":\"bench\",\"ai_provider_id\":\"openai\",\"key\":\"x\",\"configurations\":{\"custom_host\":\"$HOSTURL\"},\"workspaces\":[{\"id\":\"default\"}]}" > "$DIR/integration.json" || { echo "could not create the integration"; cat "$DIR/integration.json"; exit 1; }
CONFIG="{\"provider\":\"openai\",\"api_key\":\"x\",\"custom_host\":\"$HOSTURL\"}"
CONFIG_ID=$(admin configs "{\"name\":\"bench\",\"config\":$CONFIG}" | sed -E 's/.*"id":"([^"]+)".*/\1/')
[ -n "$CONFIG_ID" ] || { echo "could not create the saved config"; exit 1; }
BODY='{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in five words, please."}]}'
mk() { # $1 name, then header lines
  local name=$1; shift
  { printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["content-type"] = "application/json"\nwrk.headers["x-gateway-api-key"] = "bench-admin-key-0123456789abcdef0123"\n' "'$BODY'"; for h in "$@"; do echo "$h"; done; } > "$DIR/$name.lua"
}
mk headers 'wrk.headers["x-gateway-provider"] = "openai"' 'wrk.headers["authorization"] = "Bearer x"' "wrk.headers[\"x-gateway-custom-host\"] = \"$HOSTURL\""
mk slug 'wrk.headers["x-gateway-provider"] = "@bench"'
mk saved "wrk.headers[\"x-gateway-config\"] = \"$CONFIG_ID\""
mk json "wrk.headers[\"x-gateway-config\"] = '$CONFIG'"
check() { # $1 name, then curl header arguments: each way must answer 200 before it is measured
  local name=$1; shift
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' localhost:18971/v1/chat/completions -H 'x-gateway-api-key: bench-admin-key-0123456789abcdef0123' -H 'content-type: application/json' "$@" -d "$BODY")
  [ "$code" = 200 ] || echo "warning: $name answered $code"
}
check headers -H 'x-gateway-provider: openai' -H 'authorization: Bearer x' -H "x-gateway-custom-host: $HOSTURL"
check slug -H 'x-gateway-provider: @bench'
check saved -H "x-gateway-config: $CONFIG_ID"
check json -H "x-gateway-config: $CONFIG"
run() { # $1 name $2 connections
  taskset -c 0 wrk -t1 -c"$2" -d2s -s "$DIR/$1.lua" http://127.0.0.1:18971/v1/chat/completions > /dev/null
  R=$(taskset -c 0 wrk -t1 -c"$2" -d6s --latency -s "$DIR/$1.lua" http://127.0.0.1:18971/v1/chat/completions)
  printf '%-8s c=%-3s p50 %8s  p99 %8s  req/s %9s %s\n' "$1" "$2" "$(echo "$R" | awk '$1=="50%"{print $2}')" "$(echo "$R" | awk '$1=="99%"{print $2}')" "$(echo "$R" | awk '/Requests\/sec/{print $2}')" "$(echo "$R" | grep -i non-2xx)"
}
ROUNDS=${ROUNDS:-2}
for round in $(seq "$ROUNDS"); do
  for c in ${CONNECTIONS:-1 64}; do for name in ${WAYS:-headers slug saved json}; do run $name $c; done; done
done
