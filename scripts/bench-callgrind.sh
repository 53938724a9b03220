#!/usr/bin/env bash
# Counts the instructions each bench workload executes per row, on both
# sides (the raw SQLite C API and SQLiteStore), under valgrind's callgrind.
# Unlike times, the counts do not move with the machine's load, so a change
# can be judged on them: a table of instructions per row, ours, raw and
# their ratio.
#
#   scripts/bench-callgrind.sh                      # every workload but W8 and W9, 5,000 rows
#   scripts/bench-callgrind.sh --rows 2000 W2 W4c   # some workloads, fewer rows
#   scripts/bench-callgrind.sh --profiles DIR       # keep the callgrind files in DIR
#   scripts/bench-callgrind.sh --binary PATH        # a bench built earlier (to compare builds)
#
# Only the timed part of a run is counted: bench --callgrind-side runs it
# inside measuredPart(), which valgrind collects with --toggle-collect.
# Each side runs in its own process, its warm-up and five timed runs all
# counted, and the count is divided by the rows they handled (the outcome's
# count, which both sides must agree on). W8 is left out: its readers run on
# threads of their own, which the toggle does not follow, and what it
# measures is how reads scale, not what each costs. W9 is left out unless
# named: six variants of one transaction per row, one refreshing 100
# observations of the written table at each write (under callgrind, tens
# of minutes). A workload with variants (W9) gets a line per variant, each
# counted in a run of its own. W10, a search, is counted per row of the
# table searched, not per match.
#
# Inspect a profile with: callgrind_annotate --inclusive=yes DIR/W2.0.store.out (id, variant, side)
# Needs valgrind (Debian: apt-get install valgrind); not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

rows=5000
reps=5
profiles=""
bench=""
ids=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rows) rows="$2"; shift 2 ;;
        --profiles) profiles="$2"; shift 2 ;;
        --binary) bench="$2"; shift 2 ;;
        -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "bench-callgrind: unknown option $1" >&2; exit 2 ;;
        *) ids+=("$1"); shift ;;
    esac
done

if ! command -v valgrind >/dev/null 2>&1; then
    echo "bench-callgrind: valgrind is not installed (Debian: apt-get install valgrind)" >&2
    exit 1
fi

if [ -z "$bench" ]; then
    swift build -c release --product bench >&2
    bench="$(swift build -c release --show-bin-path)/bench"
fi
if [ ${#ids[@]} -eq 0 ]; then
    mapfile -t ids < <("$bench" --list | awk '{print $1}' | grep -v -e '^W8$' -e '^W9$' | uniq)
fi
# One entry per workload variant: W9 (and W8) list several under one id,
# each counted on its own (filtered by its whole "id title", which no other
# variant's contains).
entries=()
titles=()
for id in "${ids[@]}"; do
    found=0
    while IFS= read -r line; do
        [ "${line%%  *}" = "$id" ] || continue
        title="${line#*  }"
        title="${title%  (*}"
        entries+=("$id")
        titles+=("$title")
        found=1
    done < <("$bench" --list)
    if [ "$found" -eq 0 ]; then
        echo "bench-callgrind: no workload $id (bench --list names them)" >&2
        exit 2
    fi
done
if [ -z "$profiles" ]; then
    profiles="$(mktemp -d)"
    trap 'rm -rf "$profiles"' EXIT
else
    mkdir -p "$profiles"
fi

# Instructions per row of one side of one workload variant (its id, its
# title, the side). Per row is per row the variant handled (the outcome's
# count), except for W10, a search: per row of the table searched, not
# per match found.
count() {
    local id="$1" title="$2" side="$3" index="$4" json field=count
    local out="$profiles/$id.$index.$side.out"
    [ "$id" = W10 ] && field=rows
    # The whole "id title" selects this variant only (W1 not W1b, one W9 of six).
    json="$(valgrind --tool=callgrind --toggle-collect='*measuredPart*' --callgrind-out-file="$out" \
        "$bench" --rows "$rows" --reps "$reps" --filter "$id $title" --json --callgrind-side "$side" 2>/dev/null)"
    local handled total
    handled="$(printf '%s\n' "$json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["workloads"][0][sys.argv[1]])' "$field")"
    total="$(awk '/^(summary|totals):/ {print $2; exit}' "$out")"
    if [ -z "$handled" ] || [ -z "$total" ] || [ "$handled" -eq 0 ]; then
        echo "bench-callgrind: no count for $id $title ($side)" >&2
        return 1
    fi
    awk -v total="$total" -v runs="$((reps + 1))" -v handled="$handled" \
        'BEGIN {printf "%.0f", total / (runs * handled)}'
}

printf 'Instructions per row (valgrind callgrind, --rows %s, warm-up + %s runs per side)\n\n' "$rows" "$reps"
printf '| %-4s | %-60s | %11s | %10s | %6s |\n' "id" "workload" "SQLiteStore" "raw" "ratio"
printf '| %-4s | %-60s | %11s | %10s | %6s |\n' "---" "---" "---:" "---:" "---:"
for index in "${!entries[@]}"; do
    id="${entries[$index]}"
    title="${titles[$index]}"
    store="$(count "$id" "$title" store "$index")"
    raw="$(count "$id" "$title" raw "$index")"
    printf '| %-4s | %-60s | %11s | %10s | %5.2fx |\n' "$id" "$title" "$store" "$raw" \
        "$(awk -v s="$store" -v r="$raw" 'BEGIN {print s / r}')"
done
