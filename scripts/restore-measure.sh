#!/usr/bin/env bash
# How long `records restore` takes for a database of a given size (issue
# goal: 100 MB in at most 10 s). Builds a records database of about SIZE
# megabytes (people added with sqlite3 behind the apps' back, then folded by
# records when it opens the file), replicates it to a directory with
# `records serve --replicate`, stops the server, and times
# `records restore DIR --to FILE` (which includes SQLite's integrity check)
# RUNS times. Prints each time and the median.
#
#   scripts/restore-measure.sh [--no-build] [--size MB] [--runs N]
#
# RECORDS_BIN picks the binary (default: the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=1 size=100 runs=3
while [ $# -gt 0 ]; do
    case "$1" in
    --no-build) build=0 ;;
    --size) size="$2"; shift ;;
    --runs) runs="$2"; shift ;;
    *) echo "usage: $0 [--no-build] [--size MB] [--runs N]" >&2; exit 2 ;;
    esac
    shift
done
if [ "$build" = 1 ]; then
    scripts/bootstrap.sh >/dev/null
    swift build -c release --product records >/dev/null
fi
records="${RECORDS_BIN:-$(swift build -c release --show-bin-path)/records}"
work="$(mktemp -d)"
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
database="$work/records.sqlite"
rec() { "$records" --database "$database" "$@"; }

# The schema, then people until the file is about SIZE MB.
rec people list --limit 1 >/dev/null
# About 740 bytes a person, with the search index and sort keys records adds.
rows=$((size * 1024 * 1024 / 740))
sqlite3 "$database" >/dev/null <<SQL
PRAGMA journal_mode = WAL;
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO peopleInfo (firstname, lastname, age)
SELECT 'Person' || i || ' ' || hex(randomblob(24)), 'Surname' || (i * 7919 % $rows) || ' ' || hex(randomblob(24)),
       18 + (i % 80) FROM n;
COMMIT;
SQL
# records folds the new rows' search text and sort keys when it opens the file.
rec people list --limit 1 >/dev/null
sqlite3 "$database" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
bytes=$(stat -c %s "$database")
echo "== a database of $((bytes / 1024 / 1024)) MB ($rows people added)" >&2

replica="$work/replica"
"$records" --database "$database" serve --listen 127.0.0.1:0 --replicate "$replica" >"$work/serve.out" 2>"$work/serve.log" &
server=$!
# The first copy is complete once Litestream has written a level-0 file.
for _ in $(seq 1 600); do
    if ls "$replica"/ltx/0/*.ltx >/dev/null 2>&1; then break; fi
    sleep 0.1
done
kill -TERM "$server"
wait "$server" || true
server=""
echo "== replica: $(du -sm "$replica" | cut -f1) MB in $replica" >&2

times=()
for run in $(seq 1 "$runs"); do
    rm -f "$work/restored.sqlite"
    start=$(date +%s%N)
    "$records" restore "$replica" --to "$work/restored.sqlite" >/dev/null
    elapsed_ms=$((($(date +%s%N) - start) / 1000000))
    times+=("$elapsed_ms")
    echo "restore $run: $elapsed_ms ms" >&2
done
count=$(sqlite3 "$work/restored.sqlite" 'SELECT COUNT(*) FROM peopleInfo')
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p")
echo "restore of a $((bytes / 1024 / 1024)) MB database ($count people): median $median ms over $runs runs"
