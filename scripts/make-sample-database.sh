#!/usr/bin/env bash
# Rebuilds Sources/RecordsApp/Resources/sampledb.sqlite, the sample database
# that records installs on first run, from sampledb.sql beside it. The same
# SQL gives the same bytes with the same SQLite version; the test
# "The shipped sample database is what its SQL builds" checks it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh
resources=Sources/RecordsApp/Resources
# The tool depends on RecordsApp, whose build needs the resource to exist.
[ -f "$resources/sampledb.sqlite" ] || : > "$resources/sampledb.sqlite"
swift build --product make-sample-database
binary="$(swift build --show-bin-path)/make-sample-database"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$binary" "$resources/sampledb.sql" "$tmp/sampledb.sqlite"
mv "$tmp/sampledb.sqlite" "$resources/sampledb.sqlite"
echo "wrote $resources/sampledb.sqlite ($(wc -c < "$resources/sampledb.sqlite") bytes)"
