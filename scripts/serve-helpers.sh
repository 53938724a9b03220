# Sourced by the scripts that start `records serve` and drive its API
# (scripts/durable-measure.sh, scripts/disaster-test.sh). Needs `records`
# set to the binary.

# private_work_directory NAME: makes `work`, a private temporary directory,
# and sets traps that stop the `server` still running (SIGTERM) and remove
# `work` when the script ends, however it ends (kept, and its path printed,
# when `keep_work` is 1: the servers' logs, for a run to look into).
private_work_directory() {
    work="$(mktemp -d "${TMPDIR:-/tmp}/records-$1.XXXXXX")"
    chmod 700 "$work"
    server=""
    trap serve_helpers_cleanup EXIT
    trap 'exit 129' HUP
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

serve_helpers_cleanup() {
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then
        kill -TERM "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    if [ "${keep_work:-0}" -eq 1 ]; then
        echo "== kept $work" >&2
    else
        rm -rf "$work"
    fi
}

# make_api_user DATABASE: registers a user in DATABASE and prints a
# read-write API token for it. The secret goes to standard output only,
# never onto a command line.
make_api_user() {
    local password="serve-helpers-password"
    printf '%s\n%s\n' "$password" "$password" | "$records" --database "$1" users register --first Load \
        --last Tester --email load@example.com --mobile 5550100 --state State --city City --pincode 12345 \
        --address "1 Test Street" --gender unspecified --dob 1990-01-01 --image none.png \
        --password-stdin >/dev/null
    printf '%s\n' "$password" | "$records" --database "$1" token create --email load@example.com --name load \
        --password-stdin | head -n 1
}

# start_serve OUT LOG DATABASE SERVE-ARGUMENTS...: starts `records --database
# DATABASE serve --listen 127.0.0.1:0 SERVE-ARGUMENTS` in the background,
# its standard output to OUT and its log to LOG, and waits until it serves
# (at most 60 s). Sets `server` (its process) and `server_url`; returns 1,
# with the log's last lines, when it does not start.
start_serve() {
    local out=$1 log=$2 database=$3
    shift 3
    "$records" --database "$database" serve --listen 127.0.0.1:0 "$@" >"$out" 2>"$log" &
    server=$!
    server_url=""
    for _ in $(seq 1 600); do
        server_url="$(sed -n 's/^Serving the Records apps at \(http[^ ]*\).*/\1/p' "$out" 2>/dev/null || true)"
        [ -n "$server_url" ] && return 0
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    echo "records serve $* did not start: $(tail -n 5 "$log")" >&2
    return 1
}

# field NAME LINE: the value after " NAME=" in a `RESULT key=value ...` line.
field() {
    local rest="${2##* "$1"=}"
    echo "${rest%% *}"
}
