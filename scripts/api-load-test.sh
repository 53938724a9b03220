#!/usr/bin/env bash
# The JSON API (/api/v1) under load, side by side with PocketBase on the
# same machine with the same data (docs/WEB.md, "The API under load").
#
#   scripts/api-load-test.sh [--quick] [--seconds N] [--people N] [--no-build]
#                            [--ours-only | --pocketbase-only] [--connections "1 16 64 500"]
#                            [--streams N] [--kill-check] [--synchronous full|normal]
#                            [--event-loop-threads N] [--wrk-threads N] [--rounds N]
#
# Builds records (release) unless --no-build or --pocketbase-only, makes a
# database with --people people (default 10000) and a user with a
# read-write API token, and serves it on a free loopback port. PocketBase
# (from .build/venv, which scripts/bootstrap.sh makes) gets a `people`
# collection (first, last, age; any signed-in user may list, view and
# create) with the same number of people, made through its API, and a user
# whose token the load carries. Then, for each operation and connection
# count, wrk (--wrk-threads, default 2) runs --seconds (default 10; --quick: 2) against
# our API and then PocketBase:
#   list    GET /api/v1/people?limit=20 / GET /api/collections/people/records?perPage=20
#   get     GET /api/v1/people/ID / GET /api/collections/people/records/ID (IDs drawn from 1,000)
#   create  POST /api/v1/people / POST /api/collections/people/records
# and prints a table (req/s, p50 and p99, failures: answers other than 2xx
# and socket errors), the machine and its load average.
# --rounds N (default 1) runs each operation and connection count N times,
# the two servers taking turns, and reports each figure's median (failures
# summed): one 10 s run of either server can be off by 10% on a two-core
# machine, which a single run's ratio cannot tell from a real difference.
# --synchronous passes its mode to `records serve` (default full: every
# create on the disk before it is answered; PocketBase runs SQLite with
# synchronous=NORMAL, which --synchronous normal matches).
# --event-loop-threads passes its count to `records serve` (0: a thread for
# each connection, the server's transport before its event loop).
# --wrk-threads sets wrk's threads (at most the connection count). On two
# cores a second wrk thread competes with the server's own threads for the
# processors: with one, both servers' latencies are less the load
# generator's scheduling (docs/API.md shows runs with each).
#
# --streams N instead opens N event streams on each server
# (GET /api/v1/events?apps=people; PocketBase's /api/realtime subscribed to
# people), makes one change, and reports each server's resident memory and
# how long the change took to reach the streams.
# --kill-check instead creates people for --seconds from a client that logs
# every acknowledged create, SIGKILLs the server a third of the way in,
# restarts it, and checks that every acknowledged create is in the database.
#
# The script fails if any request failed, a check found a lost create, or a
# server could not be set up. Every request goes to 127.0.0.1 (and
# 127.0.0.2-.11 for the streams), and every run is bounded in time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seconds=10
people=10000
build=1
ours=1
theirs=1
streams=0
kill_check=0
synchronous=full
event_loop_threads=2
wrk_threads=2
rounds=1
connections=(1 16 64 500)
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds | --people | --connections | --streams | --synchronous | --event-loop-threads | --wrk-threads | --rounds)
        if [ $# -lt 2 ]; then
            echo "api-load-test: $1 needs a value (see --help)" >&2
            exit 2
        fi
        ;;
    esac
    case "$1" in
    --quick) seconds=2 ;;
    --seconds)
        seconds="$2"
        shift
        ;;
    --people)
        people="$2"
        shift
        ;;
    --connections)
        read -r -a connections <<<"$2"
        shift
        ;;
    --synchronous)
        synchronous="$2"
        shift
        ;;
    --event-loop-threads)
        event_loop_threads="$2"
        shift
        ;;
    --wrk-threads)
        wrk_threads="$2"
        shift
        ;;
    --rounds)
        rounds="$2"
        shift
        ;;
    --no-build) build=0 ;;
    --ours-only) theirs=0 ;;
    --pocketbase-only) ours=0 ;;
    --streams)
        streams="$2"
        shift
        ;;
    --kill-check) kill_check=1 ;;
    -h | --help)
        sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "api-load-test: unknown option $1 (see --help)" >&2
        exit 2
        ;;
    esac
    shift
done
if [ "$ours" -eq 0 ] && [ "$theirs" -eq 0 ]; then
    echo "api-load-test: --ours-only and --pocketbase-only leave nothing to run" >&2
    exit 2
fi
if [ ${#connections[@]} -eq 0 ]; then
    echo "api-load-test: --connections needs at least one count" >&2
    exit 2
fi
for number in "$seconds" "$people" "$streams" "$event_loop_threads" "$wrk_threads" "$rounds" "${connections[@]}"; do
    if ! [[ "$number" =~ ^[0-9]+$ ]]; then
        echo "api-load-test: '$number' is not a whole number" >&2
        exit 2
    fi
done
for number in "$seconds" "$people" "$wrk_threads" "$rounds" "${connections[@]}"; do
    if [ "$number" -eq 0 ]; then
        echo "api-load-test: --seconds, --people, --wrk-threads, --rounds and --connections take numbers above 0" >&2
        exit 2
    fi
done

./scripts/bootstrap.sh
if [ "$ours" -eq 1 ] && [ "$build" -eq 1 ]; then
    echo "== building records (release)" >&2
    swift build -c release --product records >&2
fi
records="${RECORDS_BIN:-$root/.build/release/records}"
venv="$root/.build/venv"
pocketbase="$venv/bin/pocketbase"
python=/usr/bin/python3
client="$root/scripts/api-load-client.py"
needed=("$python" "$(command -v wrk || echo wrk)" "$(command -v curl || echo curl)")
[ "$ours" -eq 1 ] && needed+=("$records" "$(command -v sqlite3 || echo sqlite3)")
[ "$theirs" -eq 1 ] && needed+=("$pocketbase")
for tool in "${needed[@]}"; do
    if [ ! -x "$tool" ]; then
        echo "api-load-test: $tool is missing (run scripts/bootstrap.sh, and build records in release)" >&2
        exit 1
    fi
done
# Thousands of connections are as many open files, in wrk, the client and
# the servers (which inherit the limit).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

work="$(mktemp -d "${TMPDIR:-/tmp}/records-api-load.XXXXXX")"
chmod 700 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do
        if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null || true; fi
    done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
# Interrupted or killed: still stop what was started (the EXIT trap runs).
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

load_before="$(cut -d ' ' -f 1-3 /proc/loadavg)"
failures=0
fail() { # message: counted, printed, and the run goes on
    echo "api-load-test: $*" >&2
    failures=$((failures + 1))
}
free_port() {
    "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# json_field PATH [len] < JSON: the value at PATH (keys and list indexes
# joined by dots; "" for the whole), or its length; nothing when absent.
json_field() {
    "$python" -c '
import json, sys
try:
    value = json.load(sys.stdin)
    for key in [k for k in sys.argv[1].split(".") if k]:
        value = value[int(key)] if isinstance(value, list) else value[key]
    print(len(value) if sys.argv[2:] == ["len"] else value)
except Exception:
    sys.exit(1)' "$@"
}
# wait_http URL PID: until anything answers at URL (up to 60 s), while PID runs.
wait_http() {
    local code
    for _ in $(seq 1 600); do
        code="$(curl -s -o /dev/null -m 2 -w '%{http_code}' "$1" || true)"
        [ "$code" != 000 ] && [ -n "$code" ] && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
# Secrets go to files in the private work directory, never into a command
# line (where `ps` would show them): curl reads its header with -H @FILE,
# wrk its scripts.
email="load@example.com"
password="load-test-password-1"

# --- Our API ------------------------------------------------------------------
ours_ready=0
database="$work/records.sqlite"
rec() { "$records" --database "$database" "$@"; }
start_ours() { # on $ours_port
    "$records" --database "$database" serve --listen "127.0.0.1:$ours_port" --max-connections-per-client 1536 \
        --synchronous "$synchronous" --event-loop-threads "$event_loop_threads" \
        >>"$work/serve.out" 2>>"$work/serve.log" &
    ours_pid=$!
    pids+=("$ours_pid")
    wait_http "$ours_url/api/v1/people" "$ours_pid"
}
setup_ours() {
    echo "== our API: a database with $people people, a user and a read-write token" >&2
    # records creates the database (schema, indexes, triggers); the people
    # go in through sqlite3 in one transaction, as in scripts/load-test.sh,
    # up to --people in all (the new database holds a few already).
    # (Called in a condition, where set -e does not stop at a failure:
    # each step says so itself.)
    rec people list --limit 1 >/dev/null || {
        fail "records could not make the database"
        return 1
    }
    local existing
    existing="$(sqlite3 "$database" 'SELECT count(*) FROM peopleInfo')"
    sqlite3 "$database" >/dev/null <<SQL || {
PRAGMA busy_timeout = 5000;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $people - $existing)
INSERT INTO peopleInfo (firstname, lastname, age)
SELECT 'Person' || i, 'Surname' || (i * 7919 % $people), 18 + (i % 80) FROM n WHERE $people > $existing;
COMMIT;
SQL
        fail "sqlite3 could not add the people"
        return 1
    }
    printf '%s\n%s\n' "$password" "$password" | rec users register --first Load --last Tester --email "$email" \
        --mobile 5550100 --state State --city City --pincode 12345 --address "1 Test Street" \
        --gender unspecified --dob 1990-01-01 --image none.png --password-stdin >/dev/null || {
        fail "records users register failed"
        return 1
    }
    local token
    if ! token="$(printf '%s\n' "$password" | rec token create --email "$email" --name load --password-stdin 2>"$work/token.err" | head -n 1)" ||
        [ -z "$token" ]; then
        fail "records token create failed: $(head -n 1 "$work/token.err") (has this build the API's tokens?)"
        return 1
    fi
    ours_token="$token"
    printf 'Authorization: Bearer %s\n' "$ours_token" >"$work/ours.header"
    ours_port="$(free_port)"
    ours_url="http://127.0.0.1:$ours_port"
    if ! start_ours; then
        fail "records serve did not start: $(tail -n 3 "$work/serve.log")"
        return 1
    fi
    # IDs for the get runs: 1,000 people, in random order.
    sqlite3 "$database" 'SELECT peopleInfoID FROM peopleInfo ORDER BY random() LIMIT 1000' >"$work/ours.ids"
    echo "== records serve at $ours_url: $(wc -l <"$work/ours.ids") IDs for the get runs" >&2
    ours_list="/api/v1/people?limit=20"
    ours_get="/api/v1/people/"
    ours_create="/api/v1/people"
    ours_ready=1
}

# --- PocketBase -----------------------------------------------------------------
theirs_ready=0
pb_dir="$work/pb_data"
start_pocketbase() { # on $pb_port
    "$pocketbase" serve --dir "$pb_dir" --http "127.0.0.1:$pb_port" >>"$work/pocketbase.log" 2>&1 &
    pb_pid=$!
    pids+=("$pb_pid")
    wait_http "$pb_url/api/health" "$pb_pid"
}
# pb METHOD PATH [JSON] (with $pb_auth): the body, or nothing and status 1 for a non-2xx.
pb() {
    local out status data=()
    # The body (passwords, some of them) goes through standard input.
    [ $# -gt 2 ] && data=(--data-binary @-)
    printf 'Authorization: %s\n' "$pb_auth" >"$work/pb-setup.header"
    out="$(printf '%s' "${3:-}" | curl -sS -X "$1" -H @"$work/pb-setup.header" -H 'Content-Type: application/json' \
        ${data[@]+"${data[@]}"} -w '\n%{http_code}' "$pb_url$2")" || return 1
    status="${out##*$'\n'}"
    out="${out%$'\n'*}"
    if [ "${status:0:1}" != 2 ]; then
        echo "api-load-test: PocketBase answered $status to $1 $2: ${out:0:300}" >&2
        return 1
    fi
    printf '%s' "$out"
}
setup_pocketbase() {
    echo "== PocketBase $("$pocketbase" --version | awk '{ print $NF }'): a people collection with $people people and a user" >&2
    local admin="admin@example.com" admin_password="load-test-admin-password-1"
    "$pocketbase" superuser upsert "$admin" "$admin_password" --dir "$pb_dir" >/dev/null || {
        fail "pocketbase superuser upsert failed"
        return 1
    }
    pb_port="$(free_port)"
    pb_url="http://127.0.0.1:$pb_port"
    if ! start_pocketbase; then
        fail "PocketBase did not start: $(tail -n 3 "$work/pocketbase.log")"
        return 1
    fi
    local body
    # The superuser's token sets PocketBase up; the load carries a plain
    # user's, as ours carries a user's API token, so both check a rule.
    body="$(printf '{"identity":"%s","password":"%s"}' "$admin" "$admin_password")"
    pb_auth=""
    pb_auth="$(pb POST /api/collections/_superusers/auth-with-password "$body" | json_field token)" || {
        fail "could not sign in to PocketBase as its superuser"
        return 1
    }
    local rule='@request.auth.id != \"\"'
    pb POST /api/collections "$(
        cat <<JSON
{"name": "people", "type": "base", "listRule": "$rule", "viewRule": "$rule", "createRule": "$rule",
 "fields": [{"name": "first", "type": "text", "required": true}, {"name": "last", "type": "text", "required": true},
            {"name": "age", "type": "number", "onlyInt": true}]}
JSON
    )" >/dev/null || {
        fail "PocketBase did not create the people collection"
        return 1
    }
    # The batch API (off by default) adds the people 500 a request, each
    # batch one transaction. PocketBase's rate limits are off by default.
    pb PATCH /api/settings '{"batch": {"enabled": true, "maxRequests": 1000, "timeout": 60, "maxBodySize": 0}}' \
        >/dev/null || {
        fail "PocketBase did not enable its batch API"
        return 1
    }
    if ! API_LOAD_TOKEN="$pb_auth" "$python" "$client" pocketbase-fill --url "$pb_url" --people "$people" >/dev/null; then
        fail "PocketBase did not take the $people people"
        return 1
    fi
    body="$(printf '{"email":"%s","password":"%s","passwordConfirm":"%s"}' "$email" "$password" "$password")"
    pb POST /api/collections/users/records "$body" >/dev/null || {
        fail "PocketBase did not register the user"
        return 1
    }
    body="$(printf '{"identity":"%s","password":"%s"}' "$email" "$password")"
    pb_token="$(pb POST /api/collections/users/auth-with-password "$body" | json_field token)" || {
        fail "could not sign in to PocketBase as the user"
        return 1
    }
    pb_auth="Bearer $pb_token"
    printf 'Authorization: Bearer %s\n' "$pb_token" >"$work/pb.header"
    # IDs for the get runs: 1,000 people, in random order.
    pb GET "/api/collections/people/records?perPage=1000&fields=id&skipTotal=1&sort=@random" >"$work/body" &&
        "$python" -c 'import json, sys; print("\n".join(i["id"] for i in json.load(sys.stdin)["items"]))' \
            <"$work/body" >"$work/pb.ids" || {
        fail "PocketBase did not list the people's IDs"
        return 1
    }
    echo "== PocketBase: $(wc -l <"$work/pb.ids") IDs for the get runs" >&2
    pb_list="/api/collections/people/records?perPage=20"
    pb_get="/api/collections/people/records/"
    pb_create="/api/collections/people/records"
    theirs_ready=1
}

# check SIDE: each of the three requests answers as the contract says, once,
# before any load (wrk itself cannot tell a page of 20 from an empty list).
check() {
    local side="$1" url header list get create ids status body count
    if [ "$side" = ours ]; then
        url="$ours_url" header="$work/ours.header" list="$ours_list" get="$ours_get" create="$ours_create"
        ids="$work/ours.ids"
        body='{"firstName":"Check","lastName":"Request","age":30}'
    else
        url="$pb_url" header="$work/pb.header" list="$pb_list" get="$pb_get" create="$pb_create" ids="$work/pb.ids"
        body='{"first":"Check","last":"Request","age":30}'
    fi
    status="$(curl -sS -o "$work/body" -w '%{http_code}' -H @"$header" "$url$list" || echo 000)"
    count="$(json_field items len <"$work/body" 2>/dev/null || echo 0)"
    if [ "$status" != 200 ] || [ "$count" != 20 ]; then
        fail "$side: GET $list answered $status with $count items, not 200 with 20: $(head -c 200 "$work/body")"
        return 1
    fi
    # PocketBase answers a list its rule hides with 200 and no items: the
    # list runs check that each answer was at least this long.
    list_bytes[$side]="$(wc -c <"$work/body")"
    status="$(curl -sS -o "$work/body" -w '%{http_code}' -H @"$header" "$url$get$(head -n 1 "$ids")" || echo 000)"
    if [ "$status" != 200 ]; then
        fail "$side: GET $get$(head -n 1 "$ids") answered $status: $(head -c 200 "$work/body")"
        return 1
    fi
    status="$(curl -sS -o "$work/body" -w '%{http_code}' -H @"$header" -H 'Content-Type: application/json' \
        --data-binary "$body" "$url$create" || echo 000)"
    # Ours answers a create with 201 (the contract), PocketBase with 200.
    if [ "$status" != "$([ "$side" = ours ] && echo 201 || echo 200)" ]; then
        fail "$side: POST $create answered $status: $(head -c 200 "$work/body")"
        return 1
    fi
}

# --- wrk scripts ------------------------------------------------------------------
# report.lua, shared: counts answers other than 2xx in each thread (wrk's
# own count leaves out 3xx) and prints one line for the script to read:
# counts, bytes, latency percentiles (microseconds) and socket errors.
cat >"$work/report.lua" <<'LUA'
local threads = {}
local number = 0
setup = function(thread)
  thread:set("offset", number * 500)
  number = number + 1
  table.insert(threads, thread)
end
non2xx = 0
response = function(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end
done = function(summary, latency, requests)
  local bad = 0
  for _, thread in ipairs(threads) do bad = bad + thread:get("non2xx") end
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d bytes=%d p50_us=%d p99_us=%d non2xx=%d socket=%d\n",
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(99),
    bad, e.connect + e.read + e.write + e.timeout))
end
LUA
# wrk_script SIDE OP: writes the Lua for one side's operation, with the
# token, and prints its path.
wrk_script() {
    local side="$1" op="$2" file="$work/$1-$2.lua" token path ids
    if [ "$side" = ours ]; then
        token="$ours_token" ids="$work/ours.ids"
    else
        token="$pb_token" ids="$work/pb.ids"
    fi
    {
        printf 'wrk.headers["Authorization"] = "Bearer %s"\n' "$token"
        cat "$work/report.lua"
        case "$op" in
        list) ;;
        get)
            path="$([ "$side" = ours ] && echo "$ours_get" || echo "$pb_get")"
            printf 'local paths = {\n'
            sed "s|.*|  \"$path&\",|" "$ids"
            printf '}\n'
            # Each thread walks the IDs from its own offset.
            cat <<'LUA'
offset = 0
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(offset + i) % #paths + 1])
end
LUA
            ;;
        create)
            path="$([ "$side" = ours ] && echo "$ours_create" || echo "$pb_create")"
            local format
            if [ "$side" = ours ]; then
                format='{"firstName":"Load%d","lastName":"Thread%d","age":%d}'
            else
                format='{"first":"Load%d","last":"Thread%d","age":%d}'
            fi
            cat <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
offset = 0
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", "$path", nil, string.format('$format', n, offset, 18 + n % 80))
end
LUA
            ;;
        esac
    } >"$file"
    echo "$file"
}

# settle SIDE: waits (up to 60 s) until the side answers a single list
# request within half a second, so that a run does not start while the
# server still works through the requests of the one before (at 500
# connections, seconds of them), then a second more.
# cpu_ticks PID: the process's user and system time so far, in clock ticks.
cpu_ticks() {
    local stat
    stat="$(cat "/proc/$1/stat" 2>/dev/null)" || {
        echo 0
        return
    }
    # The fields after the command name, which is in parentheses.
    awk '{ print $12 + $13 }' <<<"${stat##*) }"
}

# quiet: waits (at most 30 s) until neither server has used more than a
# twentieth of a core for half a second. A server can go on working after
# its run ended (answering what was still queued, collecting garbage); the
# next run, of either server, would share the cores with it.
quiet() {
    local start=$SECONDS pid busy before after
    local most=$(($(getconf CLK_TCK) / 40))
    local -A ticks
    while [ $((SECONDS - start)) -lt 30 ]; do
        for pid in ${ours_pid:-} ${pb_pid:-}; do ticks[$pid]="$(cpu_ticks "$pid")"; done
        sleep 0.5
        busy=0
        for pid in ${ours_pid:-} ${pb_pid:-}; do
            before="${ticks[$pid]}"
            after="$(cpu_ticks "$pid")"
            [ $((after - before)) -le "$most" ] || busy=1
        done
        if [ "$busy" -eq 0 ]; then
            [ $((SECONDS - start)) -lt 2 ] || echo "api-load-test: waited $((SECONDS - start)) s for the servers to go quiet" >&2
            return 0
        fi
    done
    echo "api-load-test: a server was still busy 30 s after the last run; going on" >&2
}

settle() {
    local url header took
    if [ "$1" = ours ]; then url="$ours_url$ours_list" header="$work/ours.header"; else
        url="$pb_url$pb_list" header="$work/pb.header"
    fi
    for _ in $(seq 1 120); do
        took="$(curl -s -o /dev/null -m 10 -w '%{time_total}' -H @"$header" "$url" || echo 10)"
        awk -v t="$took" 'BEGIN { exit !(t < 0.5) }' && break
        sleep 0.5
    done
    quiet
}

table="$work/table"
: >"$table"
# load SIDE OP CONNECTIONS: one wrk run, one line in the table:
# op, connections, side, req/s, p50 ms, p99 ms, failures, requests.
load() {
    local side="$1" op="$2" count="$3" url path script line
    if [ "$side" = ours ]; then
        url="$ours_url" path="$ours_list"
    else
        url="$pb_url" path="$pb_list"
    fi
    script="$(wrk_script "$side" "$op")"
    settle "$side"
    local threads=$((count < wrk_threads ? count : wrk_threads))
    line="$(wrk -t "$threads" -c "$count" -d "${seconds}s" --timeout 10s -s "$script" --latency "$url$path" |
        grep '^RESULT' || true)"
    if [ -z "$line" ]; then
        fail "$side $op at $count connections: wrk printed no result"
        printf '%s\t%d\t%s\t0\t0\t0\t1\t0\n' "$op" "$count" "$side" >>"$table"
        return
    fi
    field() { # the number after " NAME=" in the line
        local rest="${line##* "$1"=}"
        echo "${rest%% *}"
    }
    local requests duration p50 p99 bad
    requests="$(field requests)"
    duration="$(field duration_us)"
    p50="$(field p50_us)"
    p99="$(field p99_us)"
    bad=$(($(field non2xx) + $(field socket)))
    if [ "$op" = list ] && [ "$requests" -gt 0 ] && [ $(($(field bytes) / requests)) -lt "${list_bytes[$side]}" ]; then
        echo "api-load-test: $side list: answers averaged $(($(field bytes) / requests)) bytes, less than a page of 20 (${list_bytes[$side]})" >&2
        bad=$((bad + 1))
    fi
    if [ "$requests" -eq 0 ]; then
        echo "api-load-test: $side $op at $count connections: no request completed in $seconds s" >&2
        bad=$((bad + 1))
    fi
    [ "$bad" -eq 0 ] || fail "$side $op at $count connections: $bad failures"
    awk -v op="$op" -v c="$count" -v side="$side" -v r="$requests" -v d="$duration" -v p50="$p50" -v p99="$p99" \
        -v e="$bad" 'BEGIN { printf "%s\t%d\t%s\t%.0f\t%.2f\t%.2f\t%d\t%d\n", op, c, side, r / (d / 1e6), p50 / 1000, p99 / 1000, e, r }' \
        >>"$table"
    printf '%s %s at %s connections: %s req/s\n' "$side" "$op" "$count" "$(tail -n 1 "$table" | cut -f4)" >&2
}

# people_count SIDE: the rows in the side's people table, read from its file.
people_count() {
    if [ "$1" = ours ]; then
        sqlite3 "$database" 'PRAGMA busy_timeout = 5000; SELECT count(*) FROM peopleInfo' | tail -n 1
    else
        sqlite3 "$pb_dir/data.db" 'PRAGMA busy_timeout = 5000; SELECT count(*) FROM people' | tail -n 1
    fi
}

machine() {
    local model
    model="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    echo "$(nproc) cores ($model), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) memory"
}

sides=()
[ "$ours" -eq 1 ] && setup_ours && sides+=(ours)
[ "$theirs" -eq 1 ] && setup_pocketbase && sides+=(pocketbase)
if [ ${#sides[@]} -eq 0 ]; then
    echo "api-load-test: no server could be set up" >&2
    exit 1
fi
name_of() { [ "$1" = ours ] && echo "records serve" || echo "PocketBase"; }
pid_of() { [ "$1" = ours ] && echo "$ours_pid" || echo "$pb_pid"; }

# --- --streams N ------------------------------------------------------------------
if [ "$streams" -gt 0 ]; then
    results="$work/streams"
    : >"$results"
    for side in "${sides[@]}"; do
        if [ "$side" = ours ]; then url="$ours_url" token="$ours_token"; else url="$pb_url" token="$pb_token"; fi
        echo "== $(name_of "$side"): $streams event streams" >&2
        line="$(API_LOAD_TOKEN="$token" "$python" "$client" streams --kind "$side" --url "$url" \
            --streams "$streams" --pid "$(pid_of "$side")" | grep '^RESULT' || true)"
        echo "$line" >&2
        if [ -z "$line" ]; then
            fail "$(name_of "$side"): the streams client printed no result"
            continue
        fi
        printf '%s %s\n' "$side" "$line" >>"$results"
        field() { local rest="${line##* "$1"=}"; echo "${rest%% *}"; }
        if [ "$(field open)" != "$streams" ] || [ "$(field delivered)" != "$(field open)" ]; then
            fail "$(name_of "$side"): $(field open) of $streams streams open, the change reached $(field delivered)"
        fi
    done
    echo
    echo "$streams event streams, one change (records serve --event-loop-threads $event_loop_threads); $(machine); load average $load_before before, $(cut -d ' ' -f 1-3 /proc/loadavg) after"
    echo
    echo "| server | streams open | opened in s | RSS before MiB | RSS open MiB | KiB a stream | change p50 ms | p99 ms | max ms | create answered in ms | failures |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    while read -r side line; do
        awk -v name="$(name_of "$side")" '{
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            per = v["open"] > 0 ? (v["rss_open_kib"] - v["rss_before_kib"]) / v["open"] : 0
            printf "| %s | %d | %s | %.0f | %.0f | %.1f | %s | %s | %s | %s | %d |\n", name, v["open"], v["open_seconds"],
                v["rss_before_kib"] / 1024, v["rss_open_kib"] / 1024, per, v["p50_ms"], v["p99_ms"], v["max_ms"],
                v["create_ms"], v["failures"]
        }' <<<"$side $line"
    done <"$results"
    [ "$failures" -eq 0 ] || exit 1
    exit 0
fi

# --- --kill-check -----------------------------------------------------------------
if [ "$kill_check" -eq 1 ]; then
    [ "$seconds" -lt 3 ] && seconds=3
    for side in "${sides[@]}"; do
        if [ "$side" = ours ]; then url="$ours_url" token="$ours_token"; else url="$pb_url" token="$pb_token"; fi
        name="$(name_of "$side")"
        echo "== $name: creates for $seconds s, SIGKILL after $((seconds / 3)) s, then a restart" >&2
        before="$(people_count "$side")"
        API_LOAD_TOKEN="$token" "$python" "$client" creates --kind "$side" --url "$url" --seconds "$seconds" \
            --workers 16 --log "$work/$side.acknowledged" >"$work/$side.creates" &
        creator=$!
        pids+=("$creator")
        sleep $((seconds / 3))
        victim="$(pid_of "$side")"
        killed_at="$(date +%s%N)"
        kill -KILL "$victim"
        wait "$victim" 2>/dev/null || true
        if [ "$side" = ours ]; then up() { start_ours; }; else up() { start_pocketbase; }; fi
        if ! up; then
            fail "$name did not restart after SIGKILL"
        fi
        down_ms=$((($(date +%s%N) - killed_at) / 1000000))
        wait "$creator" || fail "$name: the creating client failed"
        line="$(grep '^RESULT' "$work/$side.creates" || true)"
        # Stopped cleanly before reading its file, so nothing is in flight.
        kill -TERM "$(pid_of "$side")" 2>/dev/null || true
        wait "$(pid_of "$side")" 2>/dev/null || true
        if [ "$side" = ours ]; then
            sqlite3 "$database" 'SELECT peopleInfoID FROM peopleInfo' | sort >"$work/$side.present"
        else
            sqlite3 "$pb_dir/data.db" 'SELECT id FROM people' | sort >"$work/$side.present"
        fi
        sort -u "$work/$side.acknowledged" >"$work/$side.acked"
        acknowledged="$(wc -l <"$work/$side.acked")"
        missing="$(comm -23 "$work/$side.acked" "$work/$side.present" | wc -l)"
        after="$(wc -l <"$work/$side.present")"
        echo "$name: ${line#RESULT }; down for $down_ms ms; rows $before -> $after; $acknowledged acknowledged creates, $missing of them missing"
        if [ "$acknowledged" -eq 0 ]; then
            fail "$name: no create was acknowledged"
        fi
        if [ "$missing" -ne 0 ]; then
            fail "$name lost $missing acknowledged creates, e.g. $(comm -23 "$work/$side.acked" "$work/$side.present" | head -n 3 | tr '\n' ' ')"
        fi
    done
    [ "$failures" -eq 0 ] || exit 1
    exit 0
fi

# --- wrk, side by side ------------------------------------------------------------------
# A side whose requests do not answer as they should is left out (and
# counted as a failure): its numbers would measure error pages.
checked=()
declare -A list_bytes
for side in "${sides[@]}"; do
    if check "$side"; then checked+=("$side"); fi
done
declare -A rows_before
for side in ${checked[@]+"${checked[@]}"}; do
    rows_before[$side]="$(people_count "$side")"
done
for op in list get create; do
    for count in "${connections[@]}"; do
        for _ in $(seq 1 "$rounds"); do
            for side in ${checked[@]+"${checked[@]}"}; do
                load "$side" "$op" "$count"
            done
        done
    done
done

# No create lost: the rows grew by at least the creates wrk saw answered
# (a request still in flight when a run ended may have been added too).
for side in ${checked[@]+"${checked[@]}"}; do
    answered="$(awk -F '\t' -v s="$side" '$1 == "create" && $3 == s { n += $8 - $7 } END { print n + 0 }' "$table")"
    now="$(people_count "$side")"
    echo "== $(name_of "$side"): people rows ${rows_before[$side]} -> $now; $answered creates answered" >&2
    if [ "$now" -lt $((rows_before[$side] + answered)) ]; then
        fail "$(name_of "$side"): $((rows_before[$side] + answered - now)) answered creates are not in the table"
    fi
done

# --- The report ------------------------------------------------------------------
echo
echo "records serve (/api/v1, --synchronous $synchronous, --event-loop-threads $event_loop_threads) and PocketBase $("$pocketbase" --version 2>/dev/null | awk '{ print $NF }'), $people people each, ${seconds} s per run$([ "$rounds" -eq 1 ] || echo ", medians of $rounds rounds (the servers taking turns)"), wrk ($wrk_threads thread$([ "$wrk_threads" -eq 1 ] || echo s)) on 127.0.0.1"
echo "machine: $(machine); load average $load_before before, $(cut -d ' ' -f 1-3 /proc/loadavg) after"
echo
echo "| operation | connections | ours req/s | PocketBase req/s | ratio | ours p50 / p99 ms | PocketBase p50 / p99 ms | failures (ours / PocketBase) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
awk -F '\t' '
    { key = $1 SUBSEP $2; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
      m = ++runs[key, $3]; rate[key, $3, m] = $4; p50[key, $3, m] = $5; p99[key, $3, m] = $6
      bad[key, $3] += $7; has[key, $3] = 1 }
    # The median of what[k, s, 1..runs[k, s]].
    function median(what, k, s,    count, i, j, v, sorted) {
        count = runs[k, s]
        for (i = 1; i <= count; i++) {
            v = what[k, s, i]
            for (j = i - 1; j >= 1 && sorted[j] > v; j--) sorted[j + 1] = sorted[j]
            sorted[j + 1] = v
        }
        return count % 2 ? sorted[(count + 1) / 2] : (sorted[count / 2] + sorted[count / 2 + 1]) / 2
    }
    function cell(k, s, what) {
        if (!has[k, s]) return "-"
        if (what == "rate") return sprintf("%.0f", median(rate, k, s))
        if (what == "lat") return sprintf("%.2f / %.2f", median(p50, k, s), median(p99, k, s))
        return bad[k, s]
    }
    END {
        for (i = 1; i <= n; i++) {
            k = order[i]; split(k, parts, SUBSEP)
            theirs = has[k, "pocketbase"] ? median(rate, k, "pocketbase") : 0
            ratio = (has[k, "ours"] && theirs > 0) ? sprintf("%.2fx", median(rate, k, "ours") / theirs) : "-"
            printf "| %s | %d | %s | %s | %s | %s | %s | %s / %s |\n", parts[1], parts[2], cell(k, "ours", "rate"),
                cell(k, "pocketbase", "rate"), ratio, cell(k, "ours", "lat"), cell(k, "pocketbase", "lat"),
                cell(k, "ours", "bad"), cell(k, "pocketbase", "bad")
        }
    }' "$table"
if [ "$failures" -ne 0 ]; then
    echo "api-load-test: $failures failure(s), above" >&2
    exit 1
fi
