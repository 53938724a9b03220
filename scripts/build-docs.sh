#!/usr/bin/env bash
# Builds the documentation of SQLiteStore, SQLiteStoreAppSupport and
# SQLiteStoreSync (each module's Sources/NAME/NAME.docc plus its `///`
# comments) with the toolchain's own `docc`, without the swift-docc-plugin
# package: build the modules, extract each one's public symbol graph with
# swift-symbolgraph-extract, then `docc convert` its catalog with that graph.
# Any DocC warning (a broken ``link``, an undocumented or misnamed parameter,
# a topic that names nothing) fails the script. A module documents only its
# own symbols: SQLiteStoreAppSupport names SQLiteStore's types in code font,
# not as links (SQLiteStoreSync likewise).
#
# Output: .build/docs/NAME.doccarchive (static-hosting layout).
# Environment: DOCC, SWIFT_SYMBOLGRAPH_EXTRACT override the tools' paths.
set -euo pipefail
cd "$(dirname "$0")/.."

toolchain_bin="$(dirname "$(readlink -f "$(command -v swift)")")"
find_tool() {
    if command -v "$1" >/dev/null 2>&1; then
        command -v "$1"
    elif [ -x "$toolchain_bin/$1" ]; then
        echo "$toolchain_bin/$1"
    elif command -v xcrun >/dev/null 2>&1; then
        xcrun --find "$1"
    else
        echo "build-docs: cannot find $1 (set ${2}=/path/to/$1)" >&2
        exit 1
    fi
}
docc="${DOCC:-$(find_tool docc DOCC)}"
extract="${SWIFT_SYMBOLGRAPH_EXTRACT:-$(find_tool swift-symbolgraph-extract SWIFT_SYMBOLGRAPH_EXTRACT)}"

echo "build-docs: building the SQLiteStore, SQLiteStoreAppSupport and SQLiteStoreSync modules" >&2
swift build --target SQLiteStoreAppSupport
swift build --target SQLiteStoreSync
modules="$(swift build --show-bin-path)/Modules"
triple="$(swift -print-target-info | sed -n 's/^ *"triple": "\(.*\)",*$/\1/p' | head -n 1)"

# On Linux the C module is the CSQLite system-library target; on Apple
# platforms the SDK's SQLite3 module is found without it.
extra=()
if [ "$(uname -s)" = Darwin ]; then
    extra+=(-sdk "$(xcrun --show-sdk-path)")
fi

document() {
    local module="$1"
    local graphs=".build/symbol-graphs/$module"
    local output=".build/docs/$module.doccarchive"
    rm -rf "$graphs" "$output"
    mkdir -p "$graphs" "$(dirname "$output")"
    "$extract" -module-name "$module" -target "$triple" \
        -I "$modules" -I Sources/CSQLite ${extra[@]+"${extra[@]}"} \
        -minimum-access-level public -skip-inherited-docs \
        -output-dir "$graphs"
    "$docc" convert "Sources/$module/$module.docc" \
        --additional-symbol-graph-dir "$graphs" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.sqlitestore.$module" \
        --output-path "$output" \
        --warnings-as-errors
    echo "build-docs: documentation in $output" >&2
}

document SQLiteStore
document SQLiteStoreAppSupport
document SQLiteStoreSync
