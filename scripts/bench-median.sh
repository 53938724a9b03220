#!/usr/bin/env bash
# Runs the whole bench several times and reports, per workload, the median
# of the runs' ratios with their spread, and the load average before each
# run: the figures docs/BENCHMARKS.md reports, never one run's.
#
#   scripts/bench-median.sh                    # 3 runs of bench --reps 11
#   scripts/bench-median.sh --runs 5 -- --rows 20000 --filter W2
#   scripts/bench-median.sh --binary PATH      # a bench built earlier
#
# Everything after "--" goes to each bench run. A run whose load average
# (one minute) is above the number of cores is reported as loaded: its
# times are not worth comparing. Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
bench=""
passed=()
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --binary) bench="$2"; shift 2 ;;
        --) shift; passed=("$@"); break ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "bench-median: unknown option $1" >&2; exit 2 ;;
    esac
done
if ! [[ "$runs" =~ ^[0-9]+$ ]] || [ "$runs" -lt 3 ]; then
    echo "bench-median: --runs needs a number of at least 3" >&2
    exit 2
fi
if [ ${#passed[@]} -eq 0 ]; then passed=(--reps 11); fi

if [ -z "$bench" ]; then
    swift build -c release --product bench >&2
    bench="$(swift build -c release --show-bin-path)/bench"
fi

results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT
for run in $(seq 1 "$runs"); do
    read -r load _ < /proc/loadavg
    echo "bench-median: run $run of $runs (load average $load)" >&2
    printf '%s\n' "$load" > "$results/$run.load"
    "$bench" "${passed[@]}" --json > "$results/$run.json"
done

python3 - "$results" "$runs" "$(nproc)" <<'PYTHON'
import json, statistics, sys

folder, runs, cores = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
loads = [float(open(f"{folder}/{run}.load").read()) for run in range(1, runs + 1)]
documents = [json.load(open(f"{folder}/{run}.json")) for run in range(1, runs + 1)]
print(f"bench, {runs} runs ({documents[0]['repetitions']} timed runs per side each, "
      f"{documents[0]['rows']} rows, SQLite {documents[0]['sqliteVersion']}); "
      f"load average before each run: {', '.join(f'{load:.2f}' for load in loads)}")
if any(load > cores for load in loads):
    print(f"warning: a run started with a load average above {cores} (the cores): its times move with it")
print()
print("| workload | rows | median ratio | ratios of the runs | median raw ms | median SQLiteStore ms | target | met in |")
print("| --- | ---: | ---: | --- | ---: | ---: | --- | --- |")
for index, first in enumerate(documents[0]["workloads"]):
    entries = [document["workloads"][index] for document in documents]
    ratios = [entry["ratio"] for entry in entries]
    target = first.get("targetRatio")
    met = [entry.get("met") for entry in entries]
    met_text = "-" if all(value is None for value in met) else f"{sum(1 for value in met if value)} of {runs}"
    print(f"| {first['id']} {first['title']} | {first['rows']} | {statistics.median(ratios):.2f}x | "
          f"{', '.join(f'{ratio:.2f}x' for ratio in ratios)} | "
          f"{statistics.median(entry['rawMilliseconds'] for entry in entries):.2f} | "
          f"{statistics.median(entry['storeMilliseconds'] for entry in entries):.2f} | "
          f"{'<= ' + format(target, '.2f') + 'x' if target else '-'} | {met_text} |")
PYTHON
