#!/bin/bash
# CPU per request at the shared bench's scenario A load (wrk -c64, non-streamed chat), by thread, user and system
# time apart, without a profiler (docs/performance.md, "At the bench's load"). What the bench's req/s ratio measures
# is all of it: every thread of the process on its one CPU, the kernel's time for its syscalls and page faults
# included, which a CPU profile of the main thread does not show.
#
#   bash scripts/profile/sustained.sh [SCENARIO ...]     # default: bare plain log-off; ROUNDS=3 SECONDS_EACH=8
#
#   bare      the bench's bare proxy (../shared/bench/src/bare-proxy.ts): the floor
#   plain     the gateway, x-gateway-provider openai + a custom host (the bench's scenario A)
#   log-off   the same without the request log (GATEWAY_DISABLED_PLUGINS=…request-log,…log-export)
# EXTRA_ENV="NAME=value …" adds settings to every gateway scenario. Pinned like the bench (wrk and the mock on CPU 0,
# the system on CPU 1). Each round starts a fresh process: 3 s of warm-up, then SECONDS_EACH measured.
set -u
OUT=${OUT:-/tmp/gateway-sustained}
MOCK_PORT=${MOCK_PORT:-18953}
GW_PORT=${GW_PORT:-18954}
ROUNDS=${ROUNDS:-3}
SECONDS_EACH=${SECONDS_EACH:-8}
# shellcheck source=scripts/profile/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ $# -gt 0 ] || set -- bare plain log-off

start_mock
trap 'kill $MOCK_PID 2>/dev/null' EXIT
lua "$BODY" "$PLAIN_HEADERS" >"$OUT/plain.lua"

snapshot() { # "<thread>#<tid> <utime> <stime>" (clock ticks) for each thread of process $1
  local t
  for t in /proc/"$1"/task/*; do printf '%s#%s %s\n' "$(tr ' ' _ <"$t/comm")" "${t##*/}" "$(awk '{print $14, $15}' "$t/stat")"; done | sort
}

round() { # $1 scenario, $2 round: one line of totals, and the threads in $OUT/$1-$2.txt
  local name=$1 dir="$OUT/$1-$2" pid requests
  rm -rf "$dir" && mkdir -p "$dir"
  start_system "$name" "$dir"
  pid=$(pgrep -P "$GW_PID" -f 'main.ts|bare-proxy' | head -1)
  [ -n "$pid" ] || pid=$GW_PID
  "${CPU0[@]}" wrk -t1 -c64 -d3s -s "$OUT/plain.lua" "http://127.0.0.1:$GW_PORT/v1/chat/completions" >/dev/null
  snapshot "$pid" >"$dir/before"
  "${CPU0[@]}" wrk -t1 -c64 -d"${SECONDS_EACH}s" -s "$OUT/plain.lua" "http://127.0.0.1:$GW_PORT/v1/chat/completions" >"$dir/wrk.txt"
  snapshot "$pid" >"$dir/after"
  kill "$GW_PID" 2>/dev/null
  wait "$GW_PID" 2>/dev/null
  if grep -q 'Non-2xx' "$dir/wrk.txt"; then echo "WARNING: $name round $2: $(grep 'Non-2xx' "$dir/wrk.txt" | xargs)" >&2; fi
  requests=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
  # Threads are grouped by name without their id (JIT workers come and go); µs per request, user and system.
  join -j1 "$dir/before" "$dir/after" | awk -v n="$requests" -v tck="$(getconf CLK_TCK)" '
    { split($1, a, "#"); u[a[1]] += ($4 - $2) * 1e6 / tck / n; s[a[1]] += ($5 - $3) * 1e6 / tck / n }
    END { for (k in u) if (u[k] + s[k] > 0) printf "%s %.1f %.1f\n", k, u[k], s[k] }' >"$dir/threads.txt"
  printf '%s %s %s\n' "$name" "$(awk '/Requests\/sec/ {print $2}' "$dir/wrk.txt")" "$(awk '{u+=$2; s+=$3} END {printf "%.1f %.1f", u, s}' "$dir/threads.txt")" >>"$OUT/rounds.txt"
}

: >"$OUT/rounds.txt"
for r in $(seq "$ROUNDS"); do for s in "$@"; do round "$s" "$r"; done; done

# Medians over the rounds: req/s, then µs of CPU per request (all threads: user, system, total), then by thread.
echo "scenario  req/s  user  sys  total   (µs of CPU a request, all threads; median of $ROUNDS rounds, c=64, ${SECONDS_EACH} s each)"
for s in "$@"; do
  awk -v s="$s" '$1 == s {print $2, $3, $4, $3 + $4}' "$OUT/rounds.txt" | sort -n -k4 | awk -v s="$s" '
    { r[NR] = $0 } END { split(r[int((NR + 1) / 2)], m, " "); printf "%-9s %6.0f %6.1f %5.1f %6.1f\n", s, m[1], m[2], m[3], m[4] }'
done
echo
echo "by thread (µs a request, user / system; median of the rounds):"
for s in "$@"; do
  cat "$OUT/$s"-*/threads.txt | awk '{print $1}' | sort -u | while read -r t; do
    u=$(cat "$OUT/$s"-*/threads.txt | awk -v t="$t" '$1 == t {print $2}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    y=$(cat "$OUT/$s"-*/threads.txt | awk -v t="$t" '$1 == t {print $3}' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    printf '  %-9s %-16s %6.1f / %5.1f\n' "$s" "$t" "$u" "$y"
  done
done
