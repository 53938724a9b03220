#!/usr/bin/env bash
# The browser tests: builds `records`, serves a fresh database on a free
# loopback port, and walks the apps' screens in Debian's headless Chromium
# through Selenium (Tests/e2e, run by pytest from .build/venv, which
# scripts/bootstrap.sh makes). Each screen is saved under
# .build/e2e-screenshots/. Fails if a test fails or the server does not stop
# cleanly on SIGTERM.
#
#   scripts/e2e.sh [--no-build] [PYTEST ARGUMENTS...]
#
# --no-build uses the records already built (.build/debug/records, or
# $RECORDS_BIN), for a user who cannot write .build. The screenshots go to
# $RECORDS_E2E_SCREENSHOTS when set.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

build=1
if [ "${1:-}" = "--no-build" ]; then
    build=0
    shift
fi

if [ "$build" -eq 1 ]; then
    ./scripts/bootstrap.sh
    echo "== building records (debug)"
    swift build --product records
fi
records="${RECORDS_BIN:-$root/.build/debug/records}"
python="$root/.build/venv/bin/python"
for needed in "$records" "$python" /usr/bin/chromium /usr/bin/chromedriver; do
    if [ ! -x "$needed" ]; then
        echo "e2e: $needed is missing (run scripts/bootstrap.sh and build records)" >&2
        exit 1
    fi
done

work="$(mktemp -d "${TMPDIR:-/tmp}/records-e2e.XXXXXX")"
server=""
tests_pid=""
cleanup() {
    # pytest, stopped (Tests/e2e/conftest.py turns SIGTERM into an
    # interruption), closes its browsers before it ends.
    if [ -n "$tests_pid" ] && kill -0 "$tests_pid" 2>/dev/null; then
        kill -TERM "$tests_pid" 2>/dev/null || true
        wait "$tests_pid" 2>/dev/null || true
    fi
    if [ -n "$server" ] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
# Interrupted or killed: still stop what was started (the EXIT trap runs).
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

database="$work/records.sqlite"
# Anyone may register: the tests sign up through the page, as a person would.
serve_options=(--listen 127.0.0.1:0)
if "$records" serve --help 2>/dev/null | grep -q -- '--registration'; then
    serve_options+=(--registration open)
fi
"$records" --database "$database" serve "${serve_options[@]}" >"$work/server.out" 2>"$work/server.log" &
server=$!

url=""
for _ in $(seq 1 300); do
    url="$(sed -n 's/^Serving the Records apps at \(http[^ ]*\).*/\1/p' "$work/server.out" 2>/dev/null || true)"
    [ -n "$url" ] && break
    if ! kill -0 "$server" 2>/dev/null; then break; fi
    sleep 0.1
done
if [ -z "$url" ]; then
    echo "e2e: the server did not start" >&2
    cat "$work/server.out" "$work/server.log" >&2
    exit 1
fi
echo "== records serve at $url (database $database)"

screenshots="${RECORDS_E2E_SCREENSHOTS:-$root/.build/e2e-screenshots}"
rm -rf "$screenshots"
mkdir -p "$screenshots"

set +e
RECORDS_E2E_URL="$url" RECORDS_E2E_DATABASE="$database" RECORDS_BIN="$records" \
    RECORDS_E2E_SCREENSHOTS="$screenshots" RECORDS_E2E_WORK="$work" \
    HOME="$work" PYTHONDONTWRITEBYTECODE=1 \
    "$python" -m pytest -p no:cacheprovider -v --tb=short "$root/Tests/e2e" "$@" &
# Waited for in the background, so that a signal to this script is
# handled at once (see cleanup).
tests_pid=$!
wait "$tests_pid"
tests=$?
tests_pid=""
set -e

kill -TERM "$server"
set +e
wait "$server"
served=$?
set -e
server=""

if [ "$tests" -ne 0 ] || [ "$served" -ne 0 ]; then
    echo "e2e: failed (tests exit $tests, server exit $served); the server's log:" >&2
    tail -n 60 "$work/server.log" >&2
fi
[ "$tests" -eq 0 ] || exit "$tests"
# No page answered with a server error along the way.
if grep -E ' 5[0-9][0-9]( |$)' "$work/server.log" >&2; then
    echo "e2e: the server answered with an error (above)" >&2
    exit 1
fi
if [ "$served" -ne 0 ]; then
    echo "e2e: records serve exited $served after SIGTERM" >&2
    exit 1
fi
echo "== screenshots in $screenshots"
