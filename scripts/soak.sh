#!/bin/bash
# Soak test of the gateway and its request log (docs/performance.md, "Soak"): MINUTES of wrk load at CONCURRENCY
# against a gateway on a fresh database, calling the tests' local OpenAI server (tests/mocks/openai-server-main.ts),
# then every figure that says whether the request log kept up and lost nothing:
#   requests     answered by the gateway (its own gateway_requests_total; wrk's count beside it)
#   rows         in request_logs once the log has drained and the gateway has stopped gracefully
#   lost         requests - rows;  dropped: what the gateway counted as dropped (gateway_request_log_rows_dropped_total)
#   RSS samples  every SAMPLE_S seconds, with the queue (entries, bytes) and the journal (bytes) at that moment
#   DB size      the SQLite file (+ WAL), or the MariaDB table's data + indexes
#
#   scripts/soak.sh [MINUTES=2] [CONCURRENCY=16] [sqlite|mysql]
#
# Environment: DRAIN_MAX_S (default 1800: the longest wait for the log to drain after the load), SOAK_MYSQL_URL (default mysql://root@127.0.0.1:3306: a database gw_soak_<random> is created there and
# dropped at the end unless KEEP=1), PIN=1 (default: wrk and the provider on CPU 0, the gateway on CPU 1, as the
# shared bench places them; PIN=0: the kernel places every process), SAMPLE_S (default 10), MOCK_PORT / GW_PORT
# (default 18970 / 18971), and any gateway setting (LOG_QUEUE_MAX_BYTES, LOG_JOURNAL_*, GATEWAY_LOG_WRITER_NICE, …),
# passed through. Needs wrk (apt-get install wrk) and, for PIN=1, taskset.
set -euo pipefail
MINUTES=${1:-2}
CONCURRENCY=${2:-16}
DIALECT=${3:-sqlite}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUN="$ROOT/node_modules/.bin/bun"
MOCK_PORT=${MOCK_PORT:-18970}
GW_PORT=${GW_PORT:-18971}
SAMPLE_S=${SAMPLE_S:-10}
KEY=soak-admin-key-0123456789abcdef0123456789
if [ "${PIN:-1}" = 0 ]; then CPU0=""; CPU1=""; else CPU0="taskset -c 0"; CPU1="taskset -c 1"; fi
command -v wrk >/dev/null || { echo "soak: wrk is not installed (apt-get install wrk)" >&2; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gw-soak-XXXXXX")
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ "$DIALECT" = mysql ] && [ "${KEEP:-0}" != 1 ]; then sql "DROP DATABASE IF EXISTS \`$DBNAME\`" >/dev/null 2>&1 || true; fi
  [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK"
}
trap cleanup EXIT

# One SQL statement against the soak's database; prints the first column of the first row.
sql() {
  "$BUN" -e '
    const [url, q] = [process.argv[1], process.argv[2]];
    if (url.startsWith("sqlite:")) {
      const { Database } = require("bun:sqlite");
      const db = new Database(url.slice(7), { readonly: true });
      console.log(Object.values(db.query(q).get() ?? {})[0] ?? "");
    } else {
      const { createConnection } = require("mysql2/promise");
      const c = await createConnection({ uri: url });
      const [rows] = await c.query(q);
      console.log(Object.values(rows[0] ?? {})[0] ?? "");
      await c.end();
    }' "$ADMIN_URL" "$1"
}

if [ "$DIALECT" = mysql ]; then
  BASE=${SOAK_MYSQL_URL:-mysql://root@127.0.0.1:3306}
  DBNAME=gw_soak_$(head -c4 /dev/urandom | od -An -tx1 | tr -d ' \n')
  ADMIN_URL="$BASE/mysql"
  (cd "$ROOT" && sql "CREATE DATABASE \`$DBNAME\`" >/dev/null)
  DATABASE_URL="$BASE/$DBNAME"
  ADMIN_URL="$DATABASE_URL"
elif [ "$DIALECT" = sqlite ]; then
  DATABASE_URL="sqlite:$WORK/gw.db"
  ADMIN_URL="$DATABASE_URL"
else
  echo "soak: the dialect is sqlite or mysql (got $DIALECT)" >&2; exit 2
fi

cd "$ROOT"
MOCK_PORT=$MOCK_PORT $CPU0 "$BUN" tests/mocks/openai-server-main.ts > "$WORK/mock.log" 2>&1 & PIDS+=($!)
env PORT=$GW_PORT HOST=127.0.0.1 DATABASE_URL="$DATABASE_URL" GATEWAY_ADMIN_API_KEY=$KEY LOG_LEVEL=${LOG_LEVEL:-warn} \
  GATEWAY_ENCRYPTION_KEY=${GATEWAY_ENCRYPTION_KEY:-soak-encryption-key-0123456789abcdef} \
  TRUSTED_CUSTOM_HOSTS=localhost,127.0.0.1,::1 BUN_CONFIG_MAX_HTTP_REQUESTS=65535 \
  $CPU1 "$BUN" core/server/src/main.ts > "$WORK/gateway.log" 2>&1 & GW=$!
PIDS+=($GW)
for _ in $(seq 300); do curl -sf "localhost:$GW_PORT/health" >/dev/null && break; sleep 0.1; done
curl -sf "localhost:$GW_PORT/health" >/dev/null || { echo "soak: the gateway did not start:" >&2; cat "$WORK/gateway.log" >&2; exit 1; }

cat > "$WORK/chat.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"model":"gpt-4o-mini","messages":[{"role":"system","content":"You are terse."},{"role":"user","content":"Say hello in five words, please."}]}'
wrk.headers["content-type"] = "application/json"
wrk.headers["x-gateway-api-key"] = "$KEY"
wrk.headers["x-gateway-provider"] = "openai"
wrk.headers["x-gateway-custom-host"] = "http://127.0.0.1:$MOCK_PORT/v1"
wrk.headers["authorization"] = "Bearer x"
LUA

metric() { # sum of a series (all its labels) from GET /metrics
  curl -sf "localhost:$GW_PORT/metrics" | awk -v n="$1" '$1 == n || index($1, n "{") == 1 { s += $2 } END { printf "%d", s }'
}
rss_mb() { awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$GW/status"; }
sample() {
  printf '%6ss  rss %5s MB  queue %6s entries %9s bytes  journal %10s bytes  written %9s  replayed %8s  dropped %s\n' \
    "$1" "$(rss_mb)" "$(metric gateway_request_log_queue_entries)" "$(metric gateway_request_log_queue_bytes)" \
    "$(metric gateway_request_log_journal_bytes)" "$(metric gateway_request_log_rows_written_total)" \
    "$(metric gateway_request_log_rows_replayed_total)" "$(metric gateway_request_log_rows_dropped_total)"
}

SECS=$(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }')
echo "soak: $MINUTES min at concurrency $CONCURRENCY on $DIALECT ($(nproc) CPUs, PIN=${PIN:-1})"
sample 0
START=$(date +%s)
$CPU0 wrk -t2 -c"$CONCURRENCY" -d"${SECS}s" -s "$WORK/chat.lua" "http://127.0.0.1:$GW_PORT/v1/chat/completions" > "$WORK/wrk.txt" & WRK=$!
PIDS+=($WRK)
while kill -0 $WRK 2>/dev/null; do
  sleep "$SAMPLE_S"
  kill -0 $WRK 2>/dev/null && sample $(( $(date +%s) - START ))
done
wait $WRK || true
echo "wrk: $(grep -E 'requests in' "$WORK/wrk.txt" | xargs)  $(grep -E 'Requests/sec' "$WORK/wrk.txt" | xargs)  $(grep -E 'Non-2xx|Socket errors' "$WORK/wrk.txt" | xargs)"

# The log drains (queue and journal empty; at most DRAIN_MAX_S, default 1800 s), then a graceful stop flushes the rest.
for _ in $(seq $(( ${DRAIN_MAX_S:-1800} * 2 ))); do
  [ "$(metric gateway_request_log_queue_entries)" = 0 ] && [ "$(metric gateway_request_log_journal_pending_bytes)" = 0 ] && break
  sleep 0.5
done
sample "$(( $(date +%s) - START ))"
DRAINED_S=$(( $(date +%s) - START - SECS ))
PENDING=$(metric gateway_request_log_journal_pending_bytes)
REQUESTS=$(metric gateway_requests_total)
# By status: refused calls (401 of a wrong key, say from another process on the same port) are counted, never logged.
BY_STATUS=$(curl -sf "localhost:$GW_PORT/metrics" | awk '/^gateway_requests_total\{/ { match($1, /status="[0-9]+"/); st = substr($1, RSTART + 8, RLENGTH - 9); n[st] += $2 } END { for (k in n) printf "%s %d  ", k, n[k] }')
DROPPED=$(metric gateway_request_log_rows_dropped_total)
PEAK=$(awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$GW/status")
kill -TERM $GW; wait $GW 2>/dev/null || true
ROWS=$(sql "SELECT COUNT(*) FROM request_logs")
if [ "$DIALECT" = sqlite ]; then
  SIZE=$(du -cb "$WORK"/gw.db* | awk 'END { print $1 }')
else
  SIZE=$(sql "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'request_logs'")
fi
echo "requests (gateway_requests_total): $REQUESTS  (by status: $BY_STATUS)"
echo "rows in request_logs:              $ROWS"
echo "lost (requests - rows):            $(( REQUESTS - ROWS ))"
echo "dropped (counted by the gateway):  $DROPPED"
echo "log drained:                       ${DRAINED_S} s after the load ended (journal still pending: $PENDING bytes)"
echo "peak RSS (VmHWM):                  $PEAK MB"
echo "database size:                     $SIZE bytes ($(( SIZE / 1024 / 1024 )) MB, $(( ROWS > 0 ? SIZE / ROWS : 0 )) bytes a row)"
