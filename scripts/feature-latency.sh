#!/bin/bash
# Latency at c=1 (p50/p99) of features the shared bench does not cover: a plain gateway call, three cheap input
# checks, a cache miss (a unique namespace per request), a cache hit, and direct calls without the gateway:
#   direct    the bench mock (a raw TCP server with canned bytes) from the load generator's own CPU, as ../shared/bench
#   direct1   the same mock on the gateway's CPU: a call that crosses CPUs, as every call to the gateway does
#   provider  the tests' local OpenAI server (tests/mocks/openai-server.ts: Bun.serve, OpenAI's wire format, request
#             checks) on the gateway's CPU, as the provider a cache hit stands in for
#   provider0 the same on the load generator's CPU
# Pinned like ../shared/bench (load generator and mock on CPU 0, gateway on CPU 1); PIN=0: nothing pinned, the
# kernel places every process. Needs wrk and taskset.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUN="$ROOT/node_modules/.bin/bun"
MOCK="$ROOT/../shared/bench/src/mock.ts"
if [ "${PIN:-1}" = 0 ]; then CPU0=""; CPU1=""; else CPU0="taskset -c 0"; CPU1="taskset -c 1"; fi
rm -rf "${TMPDIR:-/tmp}/featdb"; mkdir -p "${TMPDIR:-/tmp}/featdb"
MOCK_PORT=18960 $CPU0 $BUN "$MOCK" > /tmp/featmock.log 2>&1 & MP=$!
# The same mock placed like the gateway (CPU 1): a call crossing CPUs, as every call to the gateway does.
MOCK_PORT=18962 $CPU1 $BUN "$MOCK" > /tmp/featmock1.log 2>&1 & MP1=$!
MOCK_PORT=18963 $CPU1 $BUN "$ROOT/tests/mocks/openai-server-main.ts" > /tmp/featprov1.log 2>&1 & PP1=$!
MOCK_PORT=18964 $CPU0 $BUN "$ROOT/tests/mocks/openai-server-main.ts" > /tmp/featprov0.log 2>&1 & PP0=$!
sleep 0.5
(cd "$ROOT" && exec env PORT=18961 HOST=127.0.0.1 DATABASE_URL=sqlite:"${TMPDIR:-/tmp}/featdb"/gw.db GATEWAY_ADMIN_API_KEY=bench-admin-key-0123456789abcdef0123 LOG_LEVEL=warn GATEWAY_DISABLED_PLUGINS="${GATEWAY_DISABLED_PLUGINS:-}" BUN_CONFIG_MAX_HTTP_REQUESTS=65535 $CPU1 $BUN core/server/src/main.ts > /tmp/featgw.log 2>&1) & GW=$!
for i in $(seq 50); do curl -s localhost:18961/health >/dev/null && break; sleep 0.1; done
BODY='{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in five words, please."}]}'
mk() { # $1 name, $2 config json or empty, $3 extra lua
cat > /tmp/feat-$1.lua <<L
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["content-type"] = "application/json"
wrk.headers["x-gateway-api-key"] = "bench-admin-key-0123456789abcdef0123"
wrk.headers["authorization"] = "Bearer x"
L
if [ -n "$2" ]; then echo "wrk.headers[\"x-gateway-config\"] = '$2'" >> /tmp/feat-$1.lua; else printf 'wrk.headers["x-gateway-provider"] = "openai"\nwrk.headers["x-gateway-custom-host"] = "http://127.0.0.1:18960/v1"\n' >> /tmp/feat-$1.lua; fi
[ -n "$3" ] && echo "$3" >> /tmp/feat-$1.lua
}
T='"provider":"openai","api_key":"x","custom_host":"http://127.0.0.1:18960/v1"'
mk plain "{$T}"
mk checks "{$T,\"input_guardrails\":[{\"default.wordCount\":{\"minWords\":1},\"default.contains\":{\"words\":[\"forbidden\"],\"operator\":\"none\"},\"default.characterCount\":{\"maxCharacters\":10000},\"deny\":true}]}"
mk cachehit "{$T,\"cache\":{\"mode\":\"simple\"}}"
# A namespace never seen before on every request, across wrk runs too (a per-run prefix): every request misses.
mk cachemiss "{$T,\"cache\":{\"mode\":\"simple\"}}" 'counter = 0
math.randomseed(os.time())
prefix = os.time() .. "-" .. math.random(1e9)
request = function() counter = counter + 1; wrk.headers["x-gateway-cache-namespace"] = "ns-" .. prefix .. "-" .. counter; return wrk.format() end'
cat > /tmp/feat-direct.lua <<L
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["content-type"] = "application/json"
L
cp /tmp/feat-direct.lua /tmp/feat-direct1.lua
sed 's/^wrk.headers\["content-type"\].*/&\nwrk.headers["authorization"] = "Bearer x"/' /tmp/feat-direct.lua > /tmp/feat-provider.lua
cp /tmp/feat-provider.lua /tmp/feat-provider0.lua
run() { # $1 name $2 url
  $CPU0 wrk -t1 -c1 -d2s -s /tmp/feat-$1.lua "$2" > /dev/null
  R=$($CPU0 wrk -t1 -c1 -d6s --latency -s /tmp/feat-$1.lua "$2")
  printf '%-10s p50 %8s  p99 %8s  req/s %s  %s\n' "$1" "$(echo "$R" | awk '$1=="50%"{print $2}')" "$(echo "$R" | awk '$1=="99%"{print $2}')" "$(echo "$R" | awk '/Requests\/sec/{print $2}')" "$(echo "$R" | grep -i non-2xx)"
}
# ROUNDS (default 2) rounds of ONLY (default: every column), in this order within a round.
declare -A URL=(
  [direct]=http://127.0.0.1:18960 [direct1]=http://127.0.0.1:18962 [provider]=http://127.0.0.1:18963 [provider0]=http://127.0.0.1:18964
  [plain]=http://127.0.0.1:18961 [checks]=http://127.0.0.1:18961 [cachemiss]=http://127.0.0.1:18961 [cachehit]=http://127.0.0.1:18961
)
for round in $(seq "${ROUNDS:-2}"); do
  for name in ${ONLY:-direct direct1 provider provider0 plain checks cachemiss cachehit}; do
    run "$name" "${URL[$name]}/v1/chat/completions"
  done
done
kill $GW $MP $MP1 $PP1 $PP0
