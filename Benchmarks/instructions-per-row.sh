#!/bin/bash
# Instructions per row of remodel-bench variants, counted by valgrind's callgrind: a
# figure that does not move with the machine's load, for comparing two builds of the
# library (wall-clock ratios on a shared machine move by ten points from run to run).
#
#   Benchmarks/instructions-per-row.sh store-insert-remodel-keys store-insert-raw products-migrate-remodel
#
# Each variant runs twice, on 10,000 and on 30,000 rows; the difference divided by 20,000
# is the cost of a row without the fixed costs (start-up, opening stores, loading the
# model). Store reads and migrations read a source store generated once per size under
# $TMPDIR. Needs valgrind and a release build of the benchmark
# (swift build -c release --package-path Benchmarks).
#
#   Benchmarks/instructions-per-row.sh --rows 100000,300000 products-migrate-remodel
#
# counts other sizes: an SQL mapping's rows after its first chunk of 50,000 take other
# statements (checked ahead, appended). The count is of every thread of the process.
set -euo pipefail
cd "$(dirname "$0")/.."
SMALL=10000 LARGE=30000
if [ "${1:-}" = --rows ]; then IFS=, read -r SMALL LARGE <<< "$2"; shift 2; fi
[ $# -gt 0 ] || { sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
BUILT=Benchmarks/.build/release/remodel-bench
[ -x "$BUILT" ] || { echo "no release build: swift build -c release --package-path Benchmarks" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/remodel-instructions-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# valgrind cannot read the debug information Swift emits; the symbols are enough.
objcopy --strip-debug "$BUILT" "$WORK/remodel-bench"
B="$WORK/remodel-bench"
MAPPINGS="$PWD/mappings"

count() {  # variant rows -> instructions of the whole process
    local variant=$1 rows=$2 args
    rm -f "$WORK"/destination.sqlite*
    case $variant in
        store-insert-*) args=(--rows "$rows" --destination "$WORK/destination.sqlite") ;;
        store-read-*) args=(--source "$WORK/source-$rows.sqlite") ;;
        *) args=(--source "$WORK/source-$rows.sqlite" --destination "$WORK/destination.sqlite") ;;
    esac
    if [[ $variant != store-insert-* && ! -f $WORK/source-$rows.sqlite ]]; then
        "$B" --variant generate-products --result "$WORK/result.json" --rows "$rows" \
            --destination "$WORK/source-$rows.sqlite" --mappings "$MAPPINGS" >/dev/null
    fi
    valgrind --tool=callgrind --callgrind-out-file="$WORK/callgrind.out" \
        "$B" --variant "$variant" --result "$WORK/result.json" "${args[@]}" --mappings "$MAPPINGS" 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

for variant in "$@"; do
    small=$(count "$variant" "$SMALL")
    large=$(count "$variant" "$LARGE")
    printf '%-32s %6d instructions per row\n' "$variant" $(( (large - small) / (LARGE - SMALL) ))
done
