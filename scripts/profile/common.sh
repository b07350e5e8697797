# Sourced by hot-path.sh and features.sh: the bench mock, a gateway on a fresh SQLite database, wrk scripts, and the
# CPU each gateway thread spent during a wrk run, read from /proc. The caller sets MOCK_PORT, GW_PORT and OUT first.
# Pinned like the bench when taskset is there (wrk and the mock on CPU 0, the gateway on CPU 1); PIN=0: unpinned.
# shellcheck shell=bash
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUN="$ROOT/node_modules/.bin/bun"
MOCK="$ROOT/../shared/bench/src/mock.ts"
KEY=profile-admin-key-0123456789abcdef0123
if [ "${PIN:-1}" = 0 ] || ! command -v taskset >/dev/null; then CPU0=(); CPU1=(); else CPU0=(taskset -c 0); CPU1=(taskset -c 1); fi
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 2; }
[ -f "$MOCK" ] || { echo "the bench mock is missing: $MOCK (the external benchmark harness)"; exit 2; }
mkdir -p "$OUT"

# Another process on one of these ports (a soak, a second profile run) would be measured in place of ours.
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in "$MOCK_PORT" "$GW_PORT"; do
  if port_taken "$port"; then echo "port $port is taken by another process: stop it, or set other ports"; exit 2; fi
done

BODY='{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in five words, please."}]}'
STREAM_BODY='{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in five words, please."}]}'
HOST="http://127.0.0.1:$MOCK_PORT/v1"
# The bench's scenario A call: a provider named in headers, its key, the mock as the custom host (lua's 2nd argument).
PLAIN_HEADERS="wrk.headers[\"x-gateway-provider\"] = \"openai\"
wrk.headers[\"authorization\"] = \"Bearer x\"
wrk.headers[\"x-gateway-custom-host\"] = \"$HOST\""

start_mock() { # the bench mock on CPU 0: canned OpenAI answers on any path ending in /chat/completions
  "${CPU0[@]}" env MOCK_PORT="$MOCK_PORT" "$BUN" "$MOCK" >"$OUT/mock.log" 2>&1 &
  MOCK_PID=$!
}

lua() { # $1 body, $2 extra header lines
  cat <<L
wrk.method = "POST"
wrk.body = '$1'
wrk.headers["content-type"] = "application/json"
wrk.headers["x-gateway-api-key"] = "$KEY"
$2
L
}

start_gateway() { # $1 directory (database, log), then arguments for bun before main.ts; EXTRA_ENV adds settings
  local dir=$1
  shift
  # EXTRA_ENV is split on spaces on purpose: "NAME=value NAME2=value2".
  # shellcheck disable=SC2086
  (cd "$ROOT" && exec "${CPU1[@]}" env PORT="$GW_PORT" HOST=127.0.0.1 DATABASE_URL="sqlite:$dir/gateway.db" \
    GATEWAY_ADMIN_API_KEY=$KEY TRUSTED_CUSTOM_HOSTS=127.0.0.1 LOG_LEVEL=warn BUN_CONFIG_MAX_HTTP_REQUESTS=65535 \
    ${EXTRA_ENV:-} "$BUN" "$@" core/server/src/main.ts) >"$dir/gateway.log" 2>&1 &
  GW_PID=$!
  wait_health
}

start_system() { # $1 scenario (bare: the bench's bare proxy; log-off: the gateway without its request log; else the gateway), $2 directory; sets GW_PID
  if [ "$1" = bare ]; then
    "${CPU1[@]}" env PORT="$GW_PORT" UPSTREAM="http://127.0.0.1:$MOCK_PORT" "$BUN" "$ROOT/../shared/bench/src/bare-proxy.ts" >"$2/gateway.log" 2>&1 &
    GW_PID=$!
    wait_health
  elif [ "$1" = log-off ]; then
    EXTRA_ENV="${EXTRA_ENV:-} GATEWAY_DISABLED_PLUGINS=@gateway/plugin-request-log,@gateway/plugin-log-export" start_gateway "$2"
  else
    start_gateway "$2"
  fi
}

wait_health() { # up to 10 s for the server on GW_PORT; non-zero when it never answered
  local _
  for _ in $(seq 100); do curl -sf "127.0.0.1:$GW_PORT/health" >/dev/null && return 0; sleep 0.1; done
  return 1
}

threads() { # "<thread name>#<tid> <utime+stime>" for each thread of process $1 (the gateway, under env/taskset)
  local pid
  pid=$(pgrep -P "$1" -f core/server/src/main.ts | head -1)
  [ -n "$pid" ] || pid=$1
  for t in /proc/"$pid"/task/*; do
    printf '%s#%s %s\n' "$(tr ' ' _ <"$t/comm")" "${t##*/}" "$(awk '{print $14+$15}' "$t/stat")"
  done
}

load() { # $1 directory, $2 lua file, $3 seconds: WARMUP s (default 2) of warm-up, then the measured run, threads read around it
  "${CPU0[@]}" wrk -t1 -c32 -d"${WARMUP:-2}s" -s "$2" "http://127.0.0.1:$GW_PORT/v1/chat/completions" >/dev/null # warm-up
  threads "$GW_PID" >"$1/threads-before.txt"
  "${CPU0[@]}" wrk -t1 -c32 -d"$3s" -s "$2" "http://127.0.0.1:$GW_PORT/v1/chat/completions" >"$1/wrk.txt"
  threads "$GW_PID" >"$1/threads-after.txt"
  # Figures of error answers say nothing about the path measured.
  if grep -q 'Non-2xx' "$1/wrk.txt"; then echo "WARNING: $(grep 'Non-2xx' "$1/wrk.txt" | xargs) in $1: not a measurement of that path" >&2; fi
}

cpu_by_thread() { # $1 directory after load: "<thread>#<tid> <µs per request>" for each thread that ran, busiest first
  local requests tck
  requests=$(awk '/requests in/ {print $1}' "$1/wrk.txt")
  tck=$(getconf CLK_TCK)
  join -j1 <(sort "$1/threads-before.txt") <(sort "$1/threads-after.txt") |
    awk -v n="$requests" -v tck="$tck" '{d=$3-$2; if (d>0) printf "  %-24s %8.1f\n", $1, d*1e6/tck/n}' | sort -k2 -nr
}
