#!/usr/bin/env bash
# What `records serve --durable` costs a create, against the default
# (asynchronous) replication (docs/REPLICATION.md, "What each mode costs").
#
#   scripts/durable-measure.sh [--seconds N] [--no-build]
#
# Builds records (release) unless --no-build, makes a database with a user
# and a read-write API token, then for each mode (--replicate DIR, then
# --replicate DIR --durable, each to a new directory replica) serves it on a
# free loopback port and runs wrk against POST /api/v1/people:
#   1 connection   one create at a time: the latency of one create (p50, p99)
#   16 connections creates/s, and their p50 and p99
# for --seconds each (default 10), and prints a table: mode, connections,
# creates/s, p50 ms, p99 ms, failures (answers other than 2xx, socket
# errors). It fails if any request failed. Litestream comes from PATH or
# .build/venv (scripts/bootstrap.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seconds=10
build=1
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds)
        [ $# -ge 2 ] || {
            echo "durable-measure: --seconds needs a value" >&2
            exit 2
        }
        seconds="$2"
        shift 2
        ;;
    --no-build)
        build=0
        shift
        ;;
    -h | --help)
        sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "durable-measure: unknown argument $1 (see --help)" >&2
        exit 2
        ;;
    esac
done
case "$seconds" in '' | *[!0-9]*)
    echo "durable-measure: --seconds takes a whole number, not '$seconds'" >&2
    exit 2
    ;;
esac

if [ "$build" -eq 1 ]; then swift build -c release --product records >&2; fi
records="$(swift build -c release --show-bin-path)/records"
for tool in "$records" "$(command -v wrk || echo wrk)" "$(command -v curl || echo curl)" \
    "$(command -v python3 || echo python3)"; do
    if [ ! -x "$tool" ]; then
        echo "durable-measure: $tool is missing (build records in release; install wrk and curl)" >&2
        exit 1
    fi
done

# shellcheck source=scripts/serve-helpers.sh
. "$root/scripts/serve-helpers.sh"

private_work_directory durable

failures=0
database="$work/records.sqlite"
# The secret goes into wrk's script file in the private directory, never
# onto a command line.
token="$(make_api_user "$database")"
cat >"$work/create.lua" <<LUA
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer $token"
wrk.headers["Content-Type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "/api/v1/people", nil, string.format('{"firstName":"Load%d","lastName":"Create","age":%d}', n, 18 + n % 80))
end
bad = 0
response = function(status, headers, body)
  if status < 200 or status > 299 then bad = bad + 1 end
end
local threads = {}
setup = function(thread) table.insert(threads, thread) end
done = function(summary, latency, requests)
  local failed = 0
  for _, thread in ipairs(threads) do failed = failed + thread:get("bad") end
  local e = summary.errors
  io.write(string.format("RESULT requests=%d duration_us=%d p50_us=%d p99_us=%d failed=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    failed + e.connect + e.read + e.write + e.timeout))
end
LUA


printf '%-28s %5s %10s %8s %8s %8s\n' mode conns creates/s "p50 ms" "p99 ms" failures
for mode in async durable; do
    extra=()
    [ "$mode" = durable ] && extra=(--durable)
    start_serve "$work/serve-$mode.out" "$work/serve-$mode.log" "$database" \
        --replicate "$work/replica-$mode" "${extra[@]}" || exit 1
    label="--replicate"
    [ "$mode" = durable ] && label="--replicate --durable"
    for connections in 1 16; do
        threads=$((connections < 2 ? 1 : 2))
        line="$(wrk -t "$threads" -c "$connections" -d "${seconds}s" --timeout 10s -s "$work/create.lua" \
            --latency "${server_url}api/v1/people" | grep '^RESULT' || true)"
        if [ -z "$line" ]; then
            echo "durable-measure: $mode at $connections connections: wrk printed no result" >&2
            failures=$((failures + 1))
            continue
        fi
        requests="$(field requests "$line")"
        duration="$(field duration_us "$line")"
        failed="$(field failed "$line")"
        failures=$((failures + failed))
        awk -v m="$label" -v c="$connections" -v r="$requests" -v d="$duration" -v p50="$(field p50_us "$line")" \
            -v p99="$(field p99_us "$line")" -v f="$failed" \
            'BEGIN { printf "%-28s %5d %10.0f %8.1f %8.1f %8d\n", m, c, r / (d / 1e6), p50 / 1000, p99 / 1000, f }'
    done
    kill -TERM "$server"
    wait "$server" || true
    server=""
    # Why writes failed, in the server's words.
    grep -m 3 'error:' "$work/serve-$mode.log" >&2 || true
done
echo "records serve, Litestream to a directory replica on the same disk, wrk on 127.0.0.1," \
    "${seconds} s a run; $(nproc) cores, load average before: $(cut -d ' ' -f 1-3 /proc/loadavg)"
if [ "$failures" -gt 0 ]; then
    echo "durable-measure: $failures requests failed" >&2
    exit 1
fi
