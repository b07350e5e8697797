#!/bin/bash
# What each feature adds to a gateway call's CPU (docs/performance.md, "Feature costs").
#
#   bash scripts/profile/features.sh [SCENARIO …]        (default: every scenario below)
#
# For each scenario, ROUNDS times (default 3, scenarios interleaved within a round): the bench mock and a gateway on a
# fresh SQLite database (common.sh, shared with hot-path.sh), the scenario's objects created through the admin API,
# one checked call (status, cache status, the policy enforced), `wrk -c32` for WARMUP s of warm-up (default 4) and
# SECONDS_EACH (default 8) measured, and the CPU each gateway thread spent during the measured run divided by its
# requests, read from /proc: the main thread, the request log's writer thread ("Worker"), and all threads together.
# The table gives the medians over the rounds, and what each scenario adds over the one it is built on and over plain.
#   plain             x-gateway-provider openai + Authorization + a custom host (the bench's scenario A): the baseline
#   config            the same target as a config in x-gateway-config (JSON)
#   saved             the same config saved through POST /v1/configs, named by its id
#   fallback          a fallback config whose first target fails (a closed port) and the second answers
#   guardrail         config + an input guardrail entry with default.regexMatch (docs/guardrails.md)
#   cache-miss        config + cache {mode: simple}, a new x-gateway-cache-namespace on every request (memory)
#   cache-hit         config + cache {mode: simple}, the same request every time (memory)
#   ratelimit         plain + an organisation-wide rate-limit policy (POST /v1/policies/rate-limits), in memory
#   virtual-key       a virtual key (POST /v1/virtual-keys, its custom host in configurations), x-gateway-virtual-key
#   stream            plain, streamed (the mock sends 20 chunks)
#   log-off           plain with the request log and log export unloaded (GATEWAY_DISABLED_PLUGINS), for reference
#   redis             plain with REDIS_URL set: what shared state costs by itself (the base of ratelimit-redis)
#   cache-miss-redis  cache-miss with the cache in Redis (GATEWAY_CACHE_REDIS_URL, a key prefix of this run's own)
#   cache-hit-redis   cache-hit with the cache in Redis
#   ratelimit-redis   ratelimit with REDIS_URL: the counters in Redis
# FEATURES_REDIS_URL (default redis://127.0.0.1:6379) is the Redis; CPU_PROF=1 also writes a CPU profile per run
# (the profiler costs CPU itself: leave it off for the figures). PIN=0: unpinned. Outputs go to $OUT (default
# /tmp/gateway-features): one directory per scenario and round, results.tsv, table.md. Needs wrk and the external
# benchmark harness's mock (../shared/bench).
set -u
OUT=${OUT:-/tmp/gateway-features}
MOCK_PORT=18975
GW_PORT=18976
# shellcheck source=scripts/profile/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ROUNDS=${ROUNDS:-3}
SECONDS_EACH=${SECONDS_EACH:-8}
WARMUP=${WARMUP:-4} # the JIT is still busy after 2 s
REDIS=${FEATURES_REDIS_URL:-redis://127.0.0.1:6379}
CACHE_PREFIX="gw-profile-features-$$:"
# The memory scenarios must not find a Redis in the caller's environment.
unset REDIS_URL GATEWAY_CACHE_REDIS_URL GATEWAY_CACHE_BACKEND GATEWAY_DISABLED_PLUGINS

ALL=(plain config saved fallback guardrail cache-miss cache-hit ratelimit virtual-key stream log-off redis
  cache-miss-redis cache-hit-redis ratelimit-redis)
# The scenario each one is built on: its added cost is measured against that one.
declare -A BASE=([plain]=plain [config]=plain [saved]=plain [fallback]=config [guardrail]=config [cache-miss]=config
  [cache-hit]=config [ratelimit]=plain [virtual-key]=plain [stream]=plain [log-off]=plain [redis]=plain
  [cache-miss-redis]=config [cache-hit-redis]=config [ratelimit-redis]=redis)
declare -A SETTINGS=(
  [log-off]="GATEWAY_DISABLED_PLUGINS=@gateway/plugin-request-log,@gateway/plugin-log-export"
  [redis]="REDIS_URL=$REDIS GATEWAY_CACHE_KEY_PREFIX=$CACHE_PREFIX"
  [ratelimit-redis]="REDIS_URL=$REDIS GATEWAY_CACHE_KEY_PREFIX=$CACHE_PREFIX"
  [cache-miss-redis]="GATEWAY_CACHE_REDIS_URL=$REDIS GATEWAY_CACHE_KEY_PREFIX=$CACHE_PREFIX"
  [cache-hit-redis]="GATEWAY_CACHE_REDIS_URL=$REDIS GATEWAY_CACHE_KEY_PREFIX=$CACHE_PREFIX"
)
if [ $# -gt 0 ]; then WANTED=("$@"); else WANTED=("${ALL[@]}"); fi
for name in "${WANTED[@]}"; do [ -n "${BASE[$name]:-}" ] || { echo "unknown scenario: $name (one of: ${ALL[*]})"; exit 2; }; done
case " ${WANTED[*]} " in *-redis* | *" redis "*) redis-cli -u "$REDIS" ping >/dev/null 2>&1 || {
  echo "Redis does not answer at $REDIS (FEATURES_REDIS_URL)"
  exit 2
} ;; esac

TARGET="\"provider\":\"openai\",\"api_key\":\"x\",\"custom_host\":\"$HOST\""
CONFIG="{$TARGET}"
CACHED="{$TARGET,\"cache\":{\"mode\":\"simple\",\"max_age\":600}}"
# Passes for the bench's prompt: the entry denies only prompts that match.
GUARDED="{$TARGET,\"input_guardrails\":[{\"default.regexMatch\":{\"rule\":\"(?i)ignore (all )?previous instructions\",\"not\":true},\"deny\":true}]}"
FALLBACK="{\"strategy\":{\"mode\":\"fallback\"},\"targets\":[{\"provider\":\"openai\",\"api_key\":\"x\",\"custom_host\":\"http://127.0.0.1:1/v1\"},{$TARGET}]}"
PLAIN=("x-gateway-provider: openai" "authorization: Bearer x" "x-gateway-custom-host: $HOST")
# A namespace never seen before on every request, across runs too (a per-run prefix): every request misses.
MISS_LUA='counter = 0
math.randomseed(os.time())
prefix = os.time() .. "-" .. math.random(1e9)
request = function() counter = counter + 1; wrk.headers["x-gateway-cache-namespace"] = "ns-" .. prefix .. "-" .. counter; return wrk.format() end'

MOCK_PID=
GW_PID=
cleanup() {
  [ -n "$GW_PID" ] && kill "$GW_PID" 2>/dev/null
  [ -n "$MOCK_PID" ] && kill "$MOCK_PID" 2>/dev/null
  redis-cli -u "$REDIS" --scan --pattern "$CACHE_PREFIX*" 2>/dev/null | xargs -r redis-cli -u "$REDIS" del >/dev/null 2>&1
}
trap cleanup EXIT
start_mock

admin() { # $1 path under /v1, $2 JSON body: the created object's id
  curl -sf "127.0.0.1:$GW_PORT/v1/$1" -H "x-gateway-api-key: $KEY" -H 'content-type: application/json' -d "$2" |
    "$BUN" -e 'console.log(JSON.parse(await Bun.stdin.text()).id ?? "")' 2>/dev/null
}

call() { # $1 body, then headers: one call, its status and response headers on stdout
  local body=$1
  shift
  local args=() h
  for h in "$@"; do args+=(-H "$h"); done
  curl -s -o /dev/null -D - "127.0.0.1:$GW_PORT/v1/chat/completions" -H "x-gateway-api-key: $KEY" \
    -H 'content-type: application/json' "${args[@]}" -d "$body" | tr -d '\r'
}

status() { head -1 | awk '{print $2}'; }

# Writes the wrk script of scenario $1 to $2 for the running gateway, after creating what it needs through the admin
# API and checking one call. Non-zero (with the reason on stdout) when the scenario does not behave as it should.
prepare() {
  local name=$1 id got
  REQ_BODY=$BODY
  REQ_HEADERS=("${PLAIN[@]}")
  case $name in
    config) REQ_HEADERS=("x-gateway-config: $CONFIG") ;;
    saved)
      id=$(admin configs "{\"name\":\"profile\",\"config\":$CONFIG}")
      [ -n "$id" ] || { echo "could not save the config"; return 1; }
      REQ_HEADERS=("x-gateway-config: $id")
      ;;
    fallback) REQ_HEADERS=("x-gateway-config: $FALLBACK") ;;
    guardrail) REQ_HEADERS=("x-gateway-config: $GUARDED") ;;
    cache-miss | cache-miss-redis)
      REQ_HEADERS=("x-gateway-config: $CACHED")
      got=$(call "$REQ_BODY" "${REQ_HEADERS[@]}" "x-gateway-cache-namespace: check-$$-$RANDOM")
      grep -qi '^x-gateway-cache-status: MISS' <<<"$got" || { echo "a new namespace was not a MISS"; return 1; }
      ;;
    cache-hit | cache-hit-redis)
      REQ_HEADERS=("x-gateway-config: $CACHED")
      # The answer is stored after it has been sent: on a loaded machine a few calls may still miss.
      for _ in $(seq 20); do
        got=$(call "$REQ_BODY" "${REQ_HEADERS[@]}")
        grep -qi '^x-gateway-cache-status: HIT' <<<"$got" && break
        sleep 0.2
      done
      grep -qi '^x-gateway-cache-status: HIT' <<<"$got" || { echo "no call was a HIT"; return 1; }
      ;;
    ratelimit | ratelimit-redis)
      id=$(admin policies/rate-limits '{"name":"profile","type":"requests","unit":"rpm","value":1}')
      [ -n "$id" ] || { echo "could not create the rate-limit policy"; return 1; }
      call "$REQ_BODY" "${REQ_HEADERS[@]}" >/dev/null
      # Enforced: a second call within the minute is refused at value 1. Then a value no run reaches.
      got=$(call "$REQ_BODY" "${REQ_HEADERS[@]}" | status)
      [ "$got" = 429 ] || { echo "the policy was not enforced (answered $got)"; return 1; }
      curl -sf -X PUT "127.0.0.1:$GW_PORT/v1/policies/rate-limits/$id" -H "x-gateway-api-key: $KEY" \
        -H 'content-type: application/json' -d '{"value":2000000000}' >/dev/null || { echo "could not raise the policy"; return 1; }
      ;;
    virtual-key)
      id=$(admin virtual-keys "{\"name\":\"profile\",\"slug\":\"profile-vk\",\"provider\":\"openai\",\"key\":\"x\",\"configurations\":{\"custom_host\":\"$HOST\"}}")
      [ -n "$id" ] || { echo "could not create the virtual key"; return 1; }
      REQ_HEADERS=("x-gateway-virtual-key: profile-vk")
      ;;
    stream) REQ_BODY=$STREAM_BODY ;;
  esac
  got=$(call "$REQ_BODY" "${REQ_HEADERS[@]}" | status)
  [ "$got" = 200 ] || { echo "the call answered $got"; return 1; }
  write_lua "$name" "$2"
}

write_lua() { # $1 scenario, $2 file: REQ_BODY and REQ_HEADERS as a wrk script
  local h lines=
  for h in "${REQ_HEADERS[@]}"; do lines+="wrk.headers[\"${h%%: *}\"] = '${h#*: }'"$'\n'; done
  case $1 in cache-miss*) lines+=$MISS_LUA ;; esac
  lua "$REQ_BODY" "$lines" >"$2"
}

measure() { # $1 scenario, $2 round: appends one line to results.tsv (not in a subshell: the EXIT trap needs GW_PID)
  local name=$1 dir="$OUT/$1-$2" why
  rm -rf "$dir" && mkdir -p "$dir"
  if curl -s -o /dev/null "127.0.0.1:$GW_PORT/health"; then
    echo "port $GW_PORT is taken: is another run still going?" >&2
    exit 1
  fi
  local prof=()
  [ "${CPU_PROF:-0}" = 1 ] && prof=(--cpu-prof --cpu-prof-dir="$dir")
  EXTRA_ENV="${SETTINGS[$name]:-}" start_gateway "$dir" "${prof[@]}" || {
    echo "$name: the gateway did not start (see $dir/gateway.log)" >&2
    kill "$GW_PID" 2>/dev/null; wait "$GW_PID"; GW_PID=
    return 1
  }
  if ! why=$(prepare "$name" "$dir/request.lua"); then
    echo "$name: $why; not measured (see $dir/gateway.log)" >&2
    kill "$GW_PID" 2>/dev/null; wait "$GW_PID"; GW_PID=
    return 1
  fi
  load "$dir" "$dir/request.lua" "$SECONDS_EACH"
  kill -INT "$GW_PID"; wait "$GW_PID"; GW_PID=
  cpu_by_thread "$dir" >"$dir/threads.txt"
  grep -q 'Non-2xx' "$dir/wrk.txt" && echo "$name: $(grep 'Non-2xx' "$dir/wrk.txt" | xargs) in round $2" >&2
  awk -v name="$name" -v round="$2" -v rps="$(awk '/Requests\/sec/ {print $2}' "$dir/wrk.txt")" '
    /^ *bun#/ {main += $2} /^ *Worker#/ {writer += $2} {total += $2}
    END {printf "%s\t%s\t%.1f\t%.1f\t%.1f\t%.0f\n", name, round, main, writer, total, rps}' "$dir/threads.txt" |
    tee -a "$RESULTS" | sed "s/^/round $2: /"
}

RESULTS="$OUT/results.tsv"
printf 'scenario\tround\tmain\tlog\ttotal\treq_s\n' >"$RESULTS"
for round in $(seq "$ROUNDS"); do
  for name in "${WANTED[@]}"; do
    measure "$name" "$round"
  done
done

median() { # numbers on stdin
  sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "nan"; else printf "%.1f\n", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'
}
declare -A MED
for name in "${ALL[@]}"; do
  for col in 3 4 5 6; do
    MED[$name,$col]=$(awk -F'\t' -v n="$name" -v c="$col" 'NR > 1 && $1 == n {print $c}' "$RESULTS" | median)
  done
done
added() { # $1 scenario, $2 base, $3 column: the difference of the medians, or "—" when either is missing
  awk -v a="${MED[$1,$3]}" -v b="${MED[$2,$3]}" 'BEGIN {if (a == "nan" || b == "nan") print "—"; else printf "%+.1f", a - b}'
}
{
  echo "CPU µs per request, median of $ROUNDS rounds of ${SECONDS_EACH} s at c=32 ($(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
  echo
  echo "| scenario | built on | main | log writer | all threads | req/s | added: main | added: log writer | added: all threads | all threads over plain |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for name in "${WANTED[@]}"; do
    base=${BASE[$name]}
    [ "$name" = plain ] && base=—
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$base" "${MED[$name,3]}" "${MED[$name,4]}" \
      "${MED[$name,5]}" "${MED[$name,6]%.*}" "$(added "$name" "${BASE[$name]}" 3)" "$(added "$name" "${BASE[$name]}" 4)" \
      "$(added "$name" "${BASE[$name]}" 5)" "$(added "$name" plain 5)"
  done
} | tee "$OUT/table.md"
