#!/bin/bash
# Wall time of product-migration variants of two builds of remodel-bench (the library before
# and after a change), interleaved round by round on one generated source store: the median
# and range of each, in seconds. Each run is a process of its own, as the benchmark's.
#
#   Benchmarks/compare-builds.sh --before /tmp/old/Benchmarks/.build/release/remodel-bench \
#       --rounds 15 --rows 1000000 products-migrate-remodel products-migrate-sql
#
# The build in this checkout is "after" (swift build -c release --package-path Benchmarks);
# --before is another checkout's, built the same way (git worktree add /tmp/old <commit>).
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE="" ROUNDS=11 ROWS=1000000 VARIANTS=()
while [ $# -gt 0 ]; do
    case $1 in
        --before) BEFORE=$2; shift 2 ;;
        --rounds) ROUNDS=$2; shift 2 ;;
        --rows) ROWS=$2; shift 2 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) VARIANTS+=("$1"); shift ;;
    esac
done
AFTER=Benchmarks/.build/release/remodel-bench
[ -x "$AFTER" ] || { echo "no release build: swift build -c release --package-path Benchmarks" >&2; exit 1; }
[ -n "$BEFORE" ] && [ -x "$BEFORE" ] || { echo "--before must name another build of remodel-bench" >&2; exit 2; }
[ ${#VARIANTS[@]} -gt 0 ] || { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/remodel-compare-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
MAPPINGS="$PWD/mappings"
"$AFTER" --variant generate-products --result "$WORK/result.json" --rows "$ROWS" \
    --destination "$WORK/source.sqlite" --mappings "$MAPPINGS" >/dev/null

declare -A TIMES
for ((round = 1; round <= ROUNDS; round++)); do
    for variant in "${VARIANTS[@]}"; do
        for build in before after; do
            # Pure SQL does not use the library: one build of it is enough.
            [[ $variant == *-sql && $build == before ]] && continue
            binary=$AFTER
            [ $build = before ] && binary=$BEFORE
            rm -f "$WORK"/destination.sqlite*
            "$binary" --variant "$variant" --result "$WORK/result.json" --source "$WORK/source.sqlite" \
                --destination "$WORK/destination.sqlite" --mappings "$MAPPINGS" >/dev/null
            seconds=$(sed -n 's/.*"seconds":\([0-9.e+-]*\).*/\1/p' "$WORK/result.json")
            TIMES[$variant/$build]+="$seconds "
        done
    done
done

printf '%-40s %10s %18s\n' "variant (build)" "median s" "min–max s"
for key in $(printf '%s\n' "${!TIMES[@]}" | sort); do
    sorted=$(printf '%s\n' ${TIMES[$key]} | sort -g)
    count=$(echo "$sorted" | wc -l)
    median=$(echo "$sorted" | sed -n "$(( (count + 1) / 2 ))p")
    printf '%-40s %10.3f %8.3f–%.3f\n' "$key" "$median" "$(echo "$sorted" | head -1)" "$(echo "$sorted" | tail -1)"
done
