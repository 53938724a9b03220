#!/usr/bin/env bash
# The disaster test (issue 28; docs/REPLICATION.md, "The disaster test"):
# the server's disk is lost in the middle of a run of writes.
#
#   scripts/disaster-test.sh [--no-build] [--release] [--seed N] [--creates N]
#                            [--mode durable|async|both] [--replica URL] [--keep]
#
# For each mode (--replicate DIR --durable, then --replicate DIR alone), on a
# fresh data directory with a directory replica beside it:
#   1. records serve --replicate DIR [--durable]; an API token; 20 creates one
#      at a time (the latency of one create), then --creates (default 1,000)
#      creates through POST /api/v1/people over 16 connections;
#   2. after a random number of answers, both the server and its Litestream
#      child are killed with SIGKILL (scripts/disaster-client.py);
#   3. the whole data directory is deleted and made again, empty (a new disk);
#   4. records serve --replicate DIR --restore-if-missing brings it back; every
#      person is listed through the API and the database's integrity is
#      checked (records backup).
# With --durable, every create answered 201 must be there and the integrity
# check must pass, else the script fails. Without it, the acknowledged creates
# that were lost are reported, not failed, with the replication lag: for each
# create, from its 201 until the first level-0 LTX file whose restore holds it
# showed in the replica (its directory listed every 5 ms; each such file
# restored with litestream restore -txid after the kill).
#
# --replica s3://BUCKET/PATH replicates to an S3 store instead (its endpoint
# and credentials from the environment, as for records serve; each mode
# under PATH/MODE); it goes with --mode durable, as the lag is measured on a
# directory replica only.
#
# --keep leaves the working directory (the servers' logs, the creates' log)
# and prints its path.
#
# The kill's moment comes from --seed (default: a new one, printed), so a
# failing run is replayed with the same --seed: the same number of answers
# before the kill (the timing of the syncs around it is the machine's).
# --no-build uses the records already built (.build/debug/records, or
# .build/release/records with --release, or $RECORDS_BIN); --release builds
# and runs the release build, for measuring. Litestream comes from PATH or
# .build/venv (scripts/bootstrap.sh); the client runs on .build/venv's Python.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

build=1
configuration=debug
seed=""
creates=1000
modes="durable async"
replica_url=""
keep_work=0
usage() { sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
    case "$1" in
    --no-build) build=0 ;;
    --release) configuration=release ;;
    --keep) keep_work=1 ;;
    --seed | --creates | --mode | --replica)
        [ $# -ge 2 ] || {
            echo "disaster-test: $1 needs a value" >&2
            exit 2
        }
        case "$1" in
        --seed) seed="$2" ;;
        --creates) creates="$2" ;;
        --replica) replica_url="$2" ;;
        --mode)
            case "$2" in
            durable | async) modes="$2" ;;
            both) modes="durable async" ;;
            *)
                echo "disaster-test: --mode takes durable, async or both, not '$2'" >&2
                exit 2
                ;;
            esac
            ;;
        esac
        shift
        ;;
    -h | --help)
        usage
        exit 0
        ;;
    *)
        echo "disaster-test: unknown argument $1 (see --help)" >&2
        exit 2
        ;;
    esac
    shift
done
for number in "$creates" "${seed:-0}"; do
    case "$number" in '' | *[!0-9]*)
        echo "disaster-test: --seed and --creates take whole numbers, not '$number'" >&2
        exit 2
        ;;
    esac
done
[ "$creates" -ge 10 ] || {
    echo "disaster-test: --creates must be at least 10" >&2
    exit 2
}
case "$replica_url" in
'') ;;
s3://*)
    [ "$modes" = durable ] || {
        echo "disaster-test: --replica goes with --mode durable" >&2
        exit 2
    }
    ;;
*)
    echo "disaster-test: --replica takes an s3://BUCKET/PATH URL, not '$replica_url'" >&2
    exit 2
    ;;
esac
[ -n "$seed" ] || seed=$(((RANDOM << 15) | RANDOM))

if [ "$build" -eq 1 ]; then swift build -c "$configuration" --product records >&2; fi
records="${RECORDS_BIN:-$root/.build/$configuration/records}"
python="$root/.build/venv/bin/python"
litestream="$(command -v litestream || echo "$root/.build/venv/bin/litestream")"
for tool in "$records" "$python" "$litestream"; do
    if [ ! -x "$tool" ]; then
        echo "disaster-test: $tool is missing (run scripts/bootstrap.sh and build records)" >&2
        exit 1
    fi
done
# shellcheck source=scripts/serve-helpers.sh
. "$root/scripts/serve-helpers.sh"

private_work_directory disaster

client() { "$python" "$root/scripts/disaster-client.py" "$@"; }

echo "== disaster test: seed $seed (replay with --seed $seed), $creates creates at 16 connections, $configuration build${replica_url:+, replica in $replica_url}"
failed=0
declare -A single_p50
for mode in $modes; do
    directory="$work/$mode"
    data="$directory/data"
    replica="$directory/replica"
    [ -z "$replica_url" ] || replica="${replica_url%/}/$mode"
    database="$data/records.sqlite"
    mkdir -p "$data"
    flags=(--replicate "$replica")
    [ "$mode" = durable ] && flags+=(--durable)
    # The kill comes after a number of answers between a tenth and
    # nine tenths of the creates, drawn from the seed and the mode.
    kill_after="$(python3 -c "import random, sys; r = random.Random(sys.argv[1]); print(r.randint($creates // 10, $creates * 9 // 10))" "$seed-$mode")"
    echo "-- records serve ${flags[*]}: killed with its Litestream after $kill_after answers"

    API_LOAD_TOKEN="$(make_api_user "$database")"
    export API_LOAD_TOKEN
    start_serve "$directory/serve.out" "$directory/serve.log" "$database" "${flags[@]}" || exit 1
    # The replica's first copy (the user and the token), before any load:
    # the server replicated from the start. (In an S3 store, the first
    # create answered 201 with --durable stands for it.)
    if [ -z "$replica_url" ]; then
        for _ in $(seq 1 300); do
            compgen -G "$replica/ltx/0/*.ltx" >/dev/null && break
            sleep 0.1
        done
        compgen -G "$replica/ltx/0/*.ltx" >/dev/null || {
            echo "disaster-test: Litestream made no first copy in 30 s: $(tail -n 5 "$directory/serve.log")" >&2
            exit 1
        }
    fi

    watch=()
    [ -n "$replica_url" ] || watch=(--watch-replica "$replica")
    load="$(client load --url "$server_url" --server "$server" --creates "$creates" --connections 16 \
        --sequential 20 --kill-after "$kill_after" --log "$directory/creates.jsonl" "${watch[@]}" |
        grep '^RESULT' || true)"
    [ -n "$load" ] || {
        echo "disaster-test: the client printed no result" >&2
        exit 1
    }
    status=0
    wait "$server" 2>/dev/null || status=$?
    server=""
    if [ "$status" -ne 137 ]; then
        echo "disaster-test: the server ended with status $status, not by the kill: $(tail -n 5 "$directory/serve.log")" >&2
        exit 1
    fi
    single_p50[$mode]="$(field single_p50_ms "$load")"
    echo "   sent $(field sent "$load") creates in $(field seconds "$load") s before the kill:" \
        "$(field acknowledged "$load") answered 201, $(field not_replicated "$load") answered 503 (not replicated)," \
        "$(field unanswered "$load") unanswered, $(field other "$load") other answers;" \
        "one create alone: p50 ${single_p50[$mode]} ms, p99 $(field single_p99_ms "$load") ms"
    if [ "$mode" = async ]; then
        lag="$(client lag --log "$directory/creates.jsonl" --replica "$replica" --litestream "$litestream" \
            --records "$records" --work "$directory" | grep '^RESULT' || true)"
    fi

    # The disk is lost: the data directory goes, a new empty one comes.
    rm -rf "$data"
    mkdir "$data"
    start_serve "$directory/restored.out" "$directory/restored.log" "$database" --replicate "$replica" \
        --restore-if-missing || exit 1
    if ! grep -q "restored $database from" "$directory/restored.log"; then
        echo "disaster-test: the server did not say it restored the database: $(tail -n 5 "$directory/restored.log")" >&2
        failed=1
    fi
    found="$(client check --url "$server_url" --log "$directory/creates.jsonl" | grep '^RESULT' || true)"
    [ -n "$found" ] || {
        echo "disaster-test: the restored server's people could not be listed" >&2
        exit 1
    }
    integrity="failed"
    if "$records" --database "$database" backup "$directory/check.sqlite" 2>"$directory/backup.err" |
        grep -q 'integrity check ok'; then
        integrity="ok"
    fi
    kill -TERM "$server"
    wait "$server" || {
        echo "disaster-test: the restored server did not stop cleanly" >&2
        failed=1
    }
    server=""

    acknowledged="$(field acknowledged "$found")"
    lost="$(field lost "$found")"
    echo "   restored: $acknowledged acknowledged creates, $lost lost;" \
        "$(field unacknowledged_present "$found") creates not acknowledged are there too; integrity $integrity"
    if [ "$mode" = async ] && [ "$(field measured "$lag")" = 0 ]; then
        echo "   replication lag: no create reached the replica before the kill" \
            "($(field syncs_seen "$lag") syncs seen); a later --seed kills later"
    elif [ "$mode" = async ]; then
        echo "   replication lag from a 201 to the replica: p50 $(field p50_ms "$lag") ms," \
            "p99 $(field p99_ms "$lag") ms, max $(field max_ms "$lag") ms over the $(field measured "$lag") creates" \
            "that reached it ($(field syncs_seen "$lag") syncs seen)"
    fi
    if [ "$integrity" != ok ]; then
        echo "disaster-test: the restored database failed the integrity check: $(cat "$directory/backup.err")" >&2
        failed=1
    fi
    if [ "$mode" = durable ]; then
        if [ "$lost" != 0 ]; then
            echo "disaster-test: with --durable, $lost creates answered 201 were lost (seed $seed)" >&2
            failed=1
        fi
        if [ "$acknowledged" -eq 0 ]; then
            echo "disaster-test: with --durable, no create was answered 201: nothing was tested" >&2
            failed=1
        fi
    fi
done
if [ -n "${single_p50[durable]:-}" ] && [ -n "${single_p50[async]:-}" ]; then
    echo "== --durable adds $(awk -v d="${single_p50[durable]}" -v a="${single_p50[async]}" 'BEGIN { printf "%.1f", d - a }') ms" \
        "to one create (p50, 20 creates one at a time: ${single_p50[durable]} ms against ${single_p50[async]} ms)"
fi
echo "== $(nproc) cores, load average $(cut -d ' ' -f 1-3 /proc/loadavg)"
if [ "$failed" -ne 0 ]; then
    echo "disaster-test: FAILED (replay with --seed $seed)" >&2
    exit 1
fi
