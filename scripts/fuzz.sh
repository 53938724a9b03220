#!/usr/bin/env bash
# Fuzzes the library, the apps and the records command with libFuzzer and
# AddressSanitizer.
#
#   scripts/fuzz.sh TARGET SECONDS [-- LIBFUZZER_ARGS...]   one target
#   scripts/fuzz.sh all SECONDS                              each target in turn
#   scripts/fuzz.sh --ci [SECONDS]                           each target briefly (20 s by default), for CI
#   scripts/fuzz.sh --build [TARGET]                         build only
#   scripts/fuzz.sh --list                                   the targets
#
# Targets (Fuzz/Targets/NAME.swift, seed inputs in Fuzz/Corpus/NAME/):
#   sql      Database.execute: statement splitting, ?NNN/:a/@a/$a binding
#   rows     rows of any values decoded into Decodable and init(row:) records
#   cli      the records command line: global options, commands, options, help
#   picture  the picture format sniffer and picture storage round trip
#   phc      the PHC string parser of stored password hashes
#   search   full-text search patterns built from typed text, and FTS5 syntax
#
# The sanitized library objects are built by SwiftPM in .build/fuzz (its
# own scratch path, so the normal build is untouched), each target binary
# in .build/fuzz/bin. New inputs the fuzzer finds go to
# .build/fuzz/corpus/NAME (kept between runs); findings (crash-*, timeout-*,
# oom-*) go to .build/fuzz/artifacts/NAME/, and the script exits non-zero.
# Reproduce one with: .build/fuzz/bin/NAME FILE
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

targets=(sql rows cli picture phc search)
scratch=.build/fuzz
bin=$scratch/bin

# Longest input per target: enough for the structures each one reads, short
# enough to keep every run fast.
max_len() {
    case "$1" in
        sql) echo 4096 ;;
        rows) echo 2048 ;;
        cli) echo 1024 ;;
        picture) echo 4096 ;;
        phc) echo 512 ;;
        search) echo 1024 ;;
    esac
}

# Sources compiled into a target besides its own file and Fuzz/Support.
extra_sources() {
    case "$1" in
        # The records command is an executable target: its files (not
        # main.swift, which would run the command) are compiled into the
        # fuzzer, whose own file replaces main.
        cli) find Sources/records -name '*.swift' ! -name main.swift | sort ;;
    esac
}

usage() {
    sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

is_target() {
    local name
    for name in "${targets[@]}"; do [ "$name" = "$1" ] && return 0; done
    return 1
}

# The libraries, instrumented for coverage and AddressSanitizer. One
# -sanitize=fuzzer,address: SwiftPM's --sanitize=fuzzer --sanitize=address
# become two swiftc flags, the second of which drops the coverage
# instrumentation. SwiftPM's debug build also enables testability, which the
# targets use to reach internal parsers.
build_libraries() {
    echo "== fuzz: building the sanitized libraries in $scratch" >&2
    mkdir -p "$(dirname "$scratch")"
    swift build --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address --target RecordsWeb \
        >"$scratch.build.log" 2>&1 || {
        cat "$scratch.build.log" >&2
        return 1
    }
}

library_objects() {
    find "$scratch/debug/SQLiteStore.build" "$scratch/debug/SQLiteStoreAppSupport.build" \
        "$scratch/debug/SQLiteStoreSync.build" \
        "$scratch/debug/PasswordHashing.build" "$scratch/debug/RecordsApp.build" \
        "$scratch/debug/HTTPServer.build" "$scratch/debug/Replication.build" "$scratch/debug/Spawn.build" \
        "$scratch/debug/Thumbnails.build" \
        "$scratch/debug/RecordsWeb.build" -name '*.o' | sort
}

build_target() {
    local name=$1
    local output=$bin/$name
    local sources objects libraries c_flags
    # libvips' own flags add -pthread, which swiftc does not take.
    mapfile -t libraries < <(pkg-config --libs sqlite3 libcrypto libmicrohttpd vips | tr ' ' '\n' | grep . |
        grep -vx -- -pthread)
    # The thumbnails' C module (RecordsWeb imports it through Thumbnails)
    # needs GLib's headers.
    mapfile -t c_flags < <(pkg-config --cflags-only-I gobject-2.0 | tr ' ' '\n' | grep . | sed 's/^/-Xcc\n/')
    mapfile -t sources < <(printf '%s\n' Fuzz/Support/*.swift "Fuzz/Targets/$name.swift"; extra_sources "$name")
    mapfile -t objects < <(library_objects)
    if [ -x "$output" ] && [ -z "$(find "${sources[@]}" "${objects[@]}" -newer "$output" -print -quit)" ]; then
        return 0
    fi
    echo "== fuzz: building $output" >&2
    mkdir -p "$bin"
    # -parse-as-library: the target has no top-level code; libFuzzer
    # provides main. The C modules' maps come from the package's folders.
    swiftc -sanitize=fuzzer,address -parse-as-library -swift-version 6 -g -Onone -use-ld=lld \
        -module-name "fuzz_$name" \
        -I "$scratch/debug/Modules" -I Sources/CSQLite -I Sources/COpenSSL -I Sources/CMicroHTTPD -I Sources/CVips \
        "${c_flags[@]}" "${sources[@]}" "${objects[@]}" \
        "${libraries[@]}" \
        -o "$output"
}

# Runs one target for `seconds`; extra arguments go to libFuzzer. Returns
# libFuzzer's status (non-zero on a finding).
run_target() {
    local name=$1 seconds=$2
    shift 2
    local corpus=$scratch/corpus/$name
    local artifacts=$scratch/artifacts/$name
    local work=$scratch/work/$name
    mkdir -p "$corpus" "$artifacts" "$work"
    local options=(
        -max_len="$(max_len "$name")"
        -timeout=10
        -rss_limit_mb=2048
        -max_total_time="$seconds"
        -print_final_stats=1
        -artifact_prefix="$root/$artifacts/"
    )
    if [ -f "Fuzz/Dictionaries/$name.dict" ]; then options+=(-dict="$root/Fuzz/Dictionaries/$name.dict"); fi
    echo "== fuzz: $name for ${seconds}s (corpus $corpus, seeds Fuzz/Corpus/$name)" >&2
    # The first corpus directory receives new inputs; the seeds in the
    # repository are only read. The run's files stay in its work folder.
    (
        cd "$work"
        SWIFT_BACKTRACE=enable=no ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}" TMPDIR="$root/$work" \
            "$root/$bin/$name" "${options[@]}" "$@" "$root/$corpus" "$root/Fuzz/Corpus/$name"
    )
}

[ $# -ge 1 ] || usage
case "$1" in
    --list)
        printf '%s\n' "${targets[@]}"
        ;;
    --build)
        build_libraries
        if [ $# -ge 2 ]; then
            is_target "$2" || usage
            build_target "$2"
        else
            for name in "${targets[@]}"; do build_target "$name"; done
        fi
        ;;
    --ci | all)
        if [ "$1" = --ci ]; then seconds=${2:-20}; else seconds=${2:?"seconds"}; fi
        build_libraries
        for name in "${targets[@]}"; do build_target "$name"; done
        failed=()
        for name in "${targets[@]}"; do
            run_target "$name" "$seconds" || failed+=("$name")
        done
        if [ ${#failed[@]} -gt 0 ]; then
            echo "fuzz: findings in: ${failed[*]} (inputs in $scratch/artifacts/)" >&2
            exit 1
        fi
        echo "fuzz: ${#targets[@]} targets, ${seconds}s each, no findings" >&2
        ;;
    -h | --help)
        usage
        ;;
    *)
        name=$1
        is_target "$name" || usage
        seconds=${2:?"seconds"}
        shift 2
        if [ "${1:-}" = "--" ]; then shift; fi
        build_libraries
        build_target "$name"
        run_target "$name" "$seconds" "$@"
        ;;
esac
