#!/usr/bin/env bash
# `records serve` under load, side by side with Datasette on the same
# database file (docs/WEB.md, "Under load").
#
#   scripts/load-test.sh [--quick] [--seconds N] [--people N] [--no-build]
#
# Builds records (release), makes a database in a fresh temporary directory
# with --people people (default 10000), a coffee with a 1 MiB PNG picture
# and a registered user, serves it on a free loopback port, signs in with
# curl, then runs wrk against the People list page (20 rows) and the
# picture at 1, 16 and 64 connections for --seconds each (default 10;
# --quick: 2), without and then with a concurrent writer (the records
# command adding people in a loop). Then Datasette (from .build/venv, which
# scripts/bootstrap.sh makes) serves the same file and wrk loads its People
# table page (20 rows) at the same connection counts. Prints a table (req/s,
# p50, p99, errors) and the ratio; fails if any request failed, a response
# was not the page or picture, or a write was lost.
#
# Every request goes to 127.0.0.1 only, and every run is bounded in time.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

seconds=10
people=10000
build=1
while [ $# -gt 0 ]; do
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
    --no-build) build=0 ;;
    -h | --help)
        sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "load-test: unknown option $1 (see --help)" >&2
        exit 2
        ;;
    esac
    shift
done
connections=(1 16 64)

if [ "$build" -eq 1 ]; then
    ./scripts/bootstrap.sh
    echo "== building records (release)" >&2
    swift build -c release --product records >&2
fi
records="${RECORDS_BIN:-$root/.build/release/records}"
venv="$root/.build/venv"
for needed in "$records" "$venv/bin/datasette" "$(command -v wrk || echo wrk)" "$(command -v curl || echo curl)" \
    "$(command -v sqlite3 || echo sqlite3)"; do
    if [ ! -x "$needed" ]; then
        echo "load-test: $needed is missing (run scripts/bootstrap.sh)" >&2
        exit 1
    fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/records-load.XXXXXX")"
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

database="$work/records.sqlite"
rec() { "$records" --database "$database" "$@"; }

# --- The fixture --------------------------------------------------------------
echo "== making a database with $people people, a 1 MiB picture and a user" >&2
# records creates the database (schema, indexes, search triggers); the bulk
# of people goes in through sqlite3 in one transaction, since adding them
# one command at a time would take minutes. The search index's triggers
# index them as usual.
rec people list --limit 1 >/dev/null
sqlite3 "$database" >/dev/null <<SQL
PRAGMA busy_timeout = 5000;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $people)
INSERT INTO peopleInfo (firstname, lastname, age)
SELECT 'Person' || i, 'Surname' || (i * 7919 % $people), 18 + (i % 80) FROM n;
COMMIT;
SQL

# A real PNG of about 1 MiB (noise does not compress): 512 x 682 RGB.
picture="$work/picture.png"
/usr/bin/python3 - "$picture" <<'PY'
import os, struct, sys, zlib
width, height = 512, 682
raw = b"".join(b"\x00" + os.urandom(width * 3) for _ in range(height))
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(raw, 0)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
coffee="$(rec coffee add --name "Load test espresso" --price 3.50 --json | sed -n 's/.*"id" *: *\([0-9]*\).*/\1/p')"
rec coffee picture set "$coffee" "$picture" >/dev/null
picture_bytes="$(stat -c %s "$picture")"

email="load@example.com"
password="load-test-password-1"
printf '%s\n%s\n' "$password" "$password" | rec users register --first Load --last Tester --email "$email" \
    --mobile 5550100 --state State --city City --pincode 12345 --address "1 Test Street" \
    --gender unspecified --dob 1990-01-01 --image none.png --password-stdin >/dev/null

people_before="$(sqlite3 "$database" 'SELECT count(*) FROM peopleInfo')"

# --- records serve ------------------------------------------------------------
"$records" --database "$database" serve --listen 127.0.0.1:0 >"$work/serve.out" 2>"$work/serve.log" &
server=$!
pids+=("$server")
url=""
for _ in $(seq 1 300); do
    url="$(sed -n 's/^Serving the Records apps at \(http[^ ]*\).*/\1/p' "$work/serve.out" 2>/dev/null || true)"
    [ -n "$url" ] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$url" ]; then
    echo "load-test: records serve did not start" >&2
    cat "$work/serve.log" >&2
    exit 1
fi
url="${url%/}"

# Signs in as a browser would: the log-in page's CSRF token (field and
# cookie), then the form; the session cookie is what wrk sends.
jar="$work/cookies"
login_page="$(curl -sS -c "$jar" "$url/login")"
csrf="$(printf '%s' "$login_page" | sed -n 's/.*name="csrf" value="\([^"]*\)".*/\1/p' | head -n 1)"
curl -sS -o /dev/null -b "$jar" -c "$jar" --data-urlencode "email=$email" \
    --data-urlencode "password=$password" --data-urlencode "csrf=$csrf" "$url/login"
session="$(awk '$6 == "records_session" { print $7 }' "$jar")"
if [ -z "$session" ]; then
    echo "load-test: could not sign in at $url/login" >&2
    exit 1
fi
cookie="records_session=$session"

list_path="/people"
picture_path="/coffee/$coffee/picture"
# What each target must answer: the status and the bytes, read once with
# curl. wrk counts any non-2xx/3xx as an error; a 3xx (a lost session sent
# to the log-in page) would not be, so the bytes each response averaged are
# checked against these too.
expect() { # path → "status size"
    curl -sS -o "$work/body" -w '%{http_code} %{size_download}' -H "Cookie: $cookie" "$1"
}
read -r list_status list_size <<<"$(expect "$url$list_path")"
read -r picture_status picture_size <<<"$(expect "$url$picture_path")"
if [ "$list_status" != 200 ] || [ "$picture_status" != 200 ] || [ "$picture_size" != "$picture_bytes" ]; then
    echo "load-test: $list_path answered $list_status, $picture_path $picture_status with $picture_size bytes" >&2
    exit 1
fi
rows="$(curl -sS -H "Cookie: $cookie" "$url$list_path" | grep -o '<tr id="person-' | wc -l || true)"
if [ "$rows" -ne 20 ]; then
    echo "load-test: $list_path shows $rows people, not a page of 20" >&2
    exit 1
fi
echo "== records serve at $url: $list_path is $list_size bytes with $rows people, the picture $picture_size bytes" >&2

# --- wrk ----------------------------------------------------------------------
lua="$work/report.lua"
cat >"$lua" <<'LUA'
-- One line for the script to read: counts, bytes and latency percentiles
-- (microseconds), and the errors by kind (status: non-2xx/3xx answers).
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d duration_us=%d bytes=%d p50_us=%d p99_us=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(99),
    e.connect, e.read, e.write, e.status, e.timeout))
end
LUA

failures=0
table="$work/table"
: >"$table"
# load NAME TARGET_URL CONNECTIONS EXPECTED_BYTES [HEADER]
load() {
    local name="$1" target="$2" count="$3" expected="$4" header="${5:-}"
    local threads=$((count < 2 ? 1 : 2))
    local arguments=(-t "$threads" -c "$count" -d "${seconds}s" --timeout 10s -s "$lua" --latency)
    [ -n "$header" ] && arguments+=(-H "$header")
    local line
    line="$(wrk "${arguments[@]}" "$target" | grep '^RESULT' || true)"
    if [ -z "$line" ]; then
        echo "load-test: wrk printed no result for $name" >&2
        failures=$((failures + 1))
        return
    fi
    local requests duration bytes p50 p99 errors
    field() { # the number after " NAME=" in the line
        local rest="${line##* "$1"=}"
        echo "${rest%% *}"
    }
    requests="$(field requests)"
    duration="$(field duration_us)"
    bytes="$(field bytes)"
    p50="$(field p50_us)"
    p99="$(field p99_us)"
    errors="$(awk '{ n = 0; for (i = 1; i <= NF; i++) if ($i ~ /^(connect|read|write|status|timeout)=/) { split($i, kv, "="); n += kv[2] } print n }' <<<"$line")"
    # A run in which no request completed measured nothing: for records
    # that is a failure; Datasette can take longer than a --quick run.
    if [ "$requests" -eq 0 ]; then
        echo "load-test: $name at $count connections: no request completed in ${seconds} s" >&2
        case "$name" in Datasette*) ;; *) errors=$((errors + 1)) ;; esac
    fi
    # Each response carried the page or the picture: its bytes (headers
    # included) at least the body's size.
    if [ "$requests" -gt 0 ] && [ $((bytes / requests)) -lt "$expected" ]; then
        echo "load-test: $name: responses averaged $((bytes / requests)) bytes, less than the $expected expected" >&2
        errors=$((errors + 1))
    fi
    [ "$errors" -eq 0 ] || failures=$((failures + 1))
    awk -v name="$name" -v c="$count" -v r="$requests" -v d="$duration" -v p50="$p50" -v p99="$p99" -v e="$errors" \
        'BEGIN { printf "%s\t%d\t%.0f\t%.2f\t%.2f\t%d\n", name, c, r / (d / 1e6), p50 / 1000, p99 / 1000, e }' >>"$table"
    printf '%s at %s connections: %s\n' "$name" "$count" "$(tail -n 1 "$table" | cut -f3)" >&2
}

# The concurrent writer: the records command adding one person at a time,
# as another process, until told to stop. It counts what it added and what
# failed.
writer_dir="$work/writer"
start_writer() {
    mkdir -p "$writer_dir"
    rm -f "$writer_dir/stop"
    (
        added=0 failed=0
        while [ ! -e "$writer_dir/stop" ]; do
            if rec people add --first Writer --last "W$added" --age 30 >/dev/null 2>>"$writer_dir/errors"; then
                added=$((added + 1))
            else
                failed=$((failed + 1))
            fi
        done
        echo "$added $failed" >"$writer_dir/counts"
    ) &
    writer=$!
    pids+=("$writer")
}
stop_writer() {
    touch "$writer_dir/stop"
    wait "$writer"
    read -r added failed <"$writer_dir/counts"
    writes_added=$((writes_added + added))
    writes_failed=$((writes_failed + failed))
}
writes_added=0
writes_failed=0

for count in "${connections[@]}"; do
    load "records people list" "$url$list_path" "$count" "$list_size" "Cookie: $cookie"
done
for count in "${connections[@]}"; do
    load "records picture (1 MiB)" "$url$picture_path" "$count" "$picture_size" "Cookie: $cookie"
done
for count in "${connections[@]}"; do
    start_writer
    load "records people list + writer" "$url$list_path" "$count" "$list_size" "Cookie: $cookie"
    stop_writer
done
for count in "${connections[@]}"; do
    start_writer
    load "records picture + writer" "$url$picture_path" "$count" "$picture_size" "Cookie: $cookie"
    stop_writer
done

kill -TERM "$server"
served=0
wait "$server" || served=$?

# No write lost: every add the writer saw succeed is in the table.
people_after="$(sqlite3 "$database" 'SELECT count(*) FROM peopleInfo')"
expected_people=$((people_before + writes_added))
echo "== writer: $writes_added people added, $writes_failed adds failed; rows $people_before -> $people_after (expected $expected_people)" >&2
if [ "$people_after" -ne "$expected_people" ] || [ "$writes_failed" -ne 0 ]; then
    echo "load-test: writes lost or failed" >&2
    [ -s "$writer_dir/errors" ] && head -n 5 "$writer_dir/errors" >&2
    failures=$((failures + 1))
fi
if [ "$served" -ne 0 ]; then
    echo "load-test: records serve exited $served on SIGTERM" >&2
    failures=$((failures + 1))
fi

# --- Datasette on the same file -----------------------------------------------
port="$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# Facet suggestions are turned off: by default each table page also tries
# a facet on every column (at 10,000 people, about a third of its
# requests/s), work our list page does not do, so the comparison is with
# Datasette's faster configuration.
"$venv/bin/datasette" serve "$database" --host 127.0.0.1 --port "$port" --setting suggest_facets off \
    >"$work/datasette.log" 2>&1 &
datasette=$!
pids+=("$datasette")
datasette_path="/records/peopleInfo?_size=20"
for _ in $(seq 1 300); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/-/versions.json" && break
    sleep 0.1
done
read -r datasette_status datasette_size <<<"$(expect "http://127.0.0.1:$port$datasette_path")"
if [ "$datasette_status" != 200 ]; then
    echo "load-test: Datasette answered $datasette_status for $datasette_path" >&2
    cat "$work/datasette.log" >&2
    exit 1
fi
datasette_rows="$(grep -c '<tr' "$work/body" || true)"
echo "== Datasette at http://127.0.0.1:$port$datasette_path: $datasette_size bytes, $datasette_rows table rows (header included)" >&2
for count in "${connections[@]}"; do
    load "Datasette people table" "http://127.0.0.1:$port$datasette_path" "$count" "$datasette_size"
done
kill -TERM "$datasette"
wait "$datasette" 2>/dev/null || true

# --- The report -----------------------------------------------------------------
echo
echo "records serve and Datasette $("$venv/bin/datasette" --version | awk '{ print $NF }') (suggest_facets off), ${seconds} s per run, wrk on 127.0.0.1, $(nproc) cores; $people people"
echo
echo "| target | connections | req/s | p50 ms | p99 ms | errors |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
awk -F '\t' '{ printf "| %s | %d | %d | %.2f | %.2f | %d |\n", $1, $2, $3, $4, $5, $6 }' "$table"
echo
for count in "${connections[@]}"; do
    awk -F '\t' -v c="$count" '
        $2 == c && $1 == "records people list" { ours = $3; our99 = $5 }
        $2 == c && $1 == "Datasette people table" { theirs = $3; their50 = $4 }
        END {
            if (theirs > 0) printf "list page at %d connections: %.1fx Datasette'"'"'s req/s; our p99 %.2f ms vs their p50 %.2f ms\n", c, ours / theirs, our99, their50
        }' "$table"
done
echo
echo "writes: $writes_added added by the concurrent writer, $writes_failed failed; people rows $people_before -> $people_after"
if [ "$failures" -ne 0 ]; then
    echo "load-test: $failures run(s) had errors" >&2
    exit 1
fi
