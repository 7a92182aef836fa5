#!/usr/bin/env bash
# Threads, pipeline and memory of sep (issue 6), as Markdown tables on stdout:
#
#   1. -T1 vs -T2, each file of the bench set on its own (a file under the
#      16 MiB block size is one block: -T2 can only help through the kernels'
#      threads, which order2 and context mixing do not use);
#   2. -T1 vs -T2 on a multi-block input: the first 32 MiB of the full set
#      concatenated, as two 16 MiB blocks (the default) and as eight of 4 MiB;
#   3. pipeline on vs off (--no-pipeline: code -T blocks, write them all, then
#      read on) at -T2 on the bench set concatenated, cut into 1 MiB blocks;
#   4. peak RSS compressing and decompressing 1 MB vs 100 MB of the full set
#      concatenated: with the defaults (-T one per core, 16 MiB blocks, shrunk
#      to the input: the 1 MB input is one 1 MB block), at -T1, and at -T1
#      with blocks of 1,000,000 bytes for both (the same block size and threads;
#      -B 1M would give the 1 MB input a model for a smaller block).
#
# Every run goes through `sep __measure` (wall, CPU = user + sys, peak RSS of
# the child); the two runs of a pair run back to back, each timed one REPEAT
# times (default 3) and the fastest kept, and the ratios come from the same
# run. Speeds are MB/s (10^6 bytes of content per second), wall clock.
#
#   cargo build --release && bench/pipeline.sh [MODEL...] | tee bench/results/pipeline.md
#
# MODEL defaults to "order2 mix" (mix = the default preset). Set SEP to another
# binary, SEP_CORPUS (or CORPUS) to another corpus folder, SECTIONS to a subset of "1 2 3 4",
# SETTINGS to section 4's rows (default "default:default 1:default 1:1000000").
set -euo pipefail
cd "$(dirname "$0")/.."
SEP=${SEP:-target/release/sep}
CORPUS=${CORPUS:-${SEP_CORPUS:-../shared/corpus}}
[ -f "$CORPUS/sets/bench.txt" ] || { echo "no corpus at $CORPUS: set SEP_CORPUS to the corpus folder (with sets/ and files/)" >&2; exit 1; }
SECTIONS=${SECTIONS:-"1 2 3 4"}
# timed runs (sections 1-3): each is run REPEAT times, the fastest kept
REPEAT=${REPEAT:-3}
# section 4's rows, THREADS:BLOCK_SIZE
SETTINGS=${SETTINGS:-"default:default 1:default 1:1000000"}
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(order2 mix)
[ -x "$SEP" ] || { echo "build first: cargo build --release" >&2; exit 1; }
SEP=$(realpath "$SEP")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure OUT ARGS...: runs `sep ARGS` writing OUT; prints "wall cpu rss_kib".
measure() {
    local out=$1
    shift
    local line
    line=$("$SEP" __measure --stdout "$out" -- "$SEP" "$@")
    set -- $line
    [ "$5" = 0 ] || { echo "sep $* failed (exit $5)" >&2; exit 1; }
    awk -v w="$1" -v u="$2" -v s="$3" -v r="$4" 'BEGIN { printf "%.3f %.3f %d\n", w, u + s, r }'
}

# best OUT ARGS...: `measure` REPEAT times, keeps the fastest run.
best() {
    local r line best=""
    for ((r = 0; r < REPEAT; r++)); do
        line=$(measure "$@")
        if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
            best=$line
        fi
    done
    echo "$best"
}

# sum of column $2 of the lines of file $1
sum() { awk -v c="$2" '{ s += $c } END { printf "%.3f", s }' "$1"; }
mbps() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.3f", b / t / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

files=()
while read -r f; do files+=("$CORPUS/files/$f"); done <"$CORPUS/sets/bench.txt"
cat "${files[@]}" >"$tmp/bench.cat"
full=()
while read -r f; do full+=("$CORPUS/files/$f"); done <"$CORPUS/sets/full.txt"
# (cat stops on SIGPIPE once head has enough: not an error)
cat "${full[@]}" | head -c 100000000 >"$tmp/100M" || [ "$(stat -c %s "$tmp/100M")" = 100000000 ]
head -c 1000000 "$tmp/100M" >"$tmp/1M"
head -c $((32 << 20)) "$tmp/100M" >"$tmp/32M"
size() { stat -c %s "$1"; }

echo "sep $("$SEP" --version | cut -d' ' -f2) at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

# pair NAME INPUT ARGS...: compress and decompress INPUT with -T1 and -T2
# back to back; prints a table row.
pair() {
    local name=$1 input=$2
    shift 2
    local c1 c2 d1 d2 bytes
    bytes=$(size "$input")
    c1=$(best "$tmp/a1" -T1 -c "$@" "$input")
    c2=$(best "$tmp/a2" -T2 -c "$@" "$input")
    cmp -s "$tmp/a1" "$tmp/a2" || { echo "archives differ between -T1 and -T2" >&2; exit 1; }
    d1=$(best "$tmp/o1" -d -T1 -c "$tmp/a1")
    d2=$(best "$tmp/o2" -d -T2 -c "$tmp/a1")
    cmp -s "$tmp/o1" "$input" && cmp -s "$tmp/o2" "$input" || { echo "round trip failed" >&2; exit 1; }
    echo "$bytes $c1 $c2 $d1 $d2"
}

if [[ " $SECTIONS " == *" 1 "* ]]; then
    echo "### -T1 vs -T2, each bench file on its own (${#files[@]} files, $(size "$tmp/bench.cat") bytes)"
    echo
    echo "| model | comp MB/s -T1 | comp MB/s -T2 | speed-up | decomp MB/s -T1 | decomp MB/s -T2 | speed-up |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for m in "${models[@]}"; do
        : >"$tmp/rows"
        for f in "${files[@]}"; do pair "$m" "$f" -m "$m" >>"$tmp/rows"; done
        # columns: bytes, c1 (wall cpu rss), c2, d1, d2
        b=$(sum "$tmp/rows" 1)
        c1=$(sum "$tmp/rows" 2) c2=$(sum "$tmp/rows" 5) d1=$(sum "$tmp/rows" 8) d2=$(sum "$tmp/rows" 11)
        echo "| $m | $(mbps "$b" "$c1") | $(mbps "$b" "$c2") | $(ratio "$c1" "$c2")x | $(mbps "$b" "$d1") | $(mbps "$b" "$d2") | $(ratio "$d1" "$d2")x |"
    done
    echo
fi

if [[ " $SECTIONS " == *" 2 "* ]]; then
    echo "### -T1 vs -T2, the first 32 MiB of the full set: two 16 MiB blocks (the default), eight of 4 MiB"
    echo
    echo "| model | blocks | comp MB/s -T1 | comp MB/s -T2 | speed-up | decomp MB/s -T1 | decomp MB/s -T2 | speed-up |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|"
    for m in "${models[@]}"; do
        for b in 16M 4M; do
            set -- $(pair "$m" "$tmp/32M" -m "$m" -B "$b")
            echo "| $m | $((32 / ${b%M})) x $b | $(mbps "$1" "$2") | $(mbps "$1" "$5") | $(ratio "$2" "$5")x | $(mbps "$1" "$8") | $(mbps "$1" "${11}") | $(ratio "$8" "${11}")x |"
        done
    done
    echo
fi

if [[ " $SECTIONS " == *" 3 "* ]]; then
    echo "### Pipeline on vs off, -T2, the bench set concatenated, -B 1M ($(size "$tmp/bench.cat") bytes, 13 blocks)"
    echo
    echo "| model | comp MB/s on | comp MB/s off | on/off | decomp MB/s on | decomp MB/s off | on/off |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for m in "${models[@]}"; do
        b=$(size "$tmp/bench.cat")
        set -- $(best "$tmp/a1" -T2 -B 1M -m "$m" -c "$tmp/bench.cat") \
            $(best "$tmp/a2" -T2 -B 1M -m "$m" --no-pipeline -c "$tmp/bench.cat")
        cmp -s "$tmp/a1" "$tmp/a2" || { echo "archives differ with --no-pipeline" >&2; exit 1; }
        con=$1 coff=$4
        set -- $(best "$tmp/o1" -d -T2 -c "$tmp/a1") $(best "$tmp/o2" -d -T2 --no-pipeline -c "$tmp/a1")
        cmp -s "$tmp/o1" "$tmp/bench.cat" && cmp -s "$tmp/o2" "$tmp/bench.cat" || { echo "round trip failed" >&2; exit 1; }
        echo "| $m | $(mbps "$b" "$con") | $(mbps "$b" "$coff") | $(ratio "$coff" "$con")x | $(mbps "$b" "$1") | $(mbps "$b" "$4") | $(ratio "$4" "$1")x |"
    done
    echo
fi

if [[ " $SECTIONS " == *" 4 "* ]]; then
    echo "### Peak RSS, 1 MB vs 100 MB of the full set concatenated (MiB)"
    echo
    echo "| model | threads, block size | comp 1 MB | comp 100 MB | 100 MB / 1 MB | decomp 1 MB | decomp 100 MB | 100 MB / 1 MB |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|"
    for m in "${models[@]}"; do
        for setting in $SETTINGS; do
            set -- ${setting/:/ }
            opt=()
            [ "$1" = default ] || opt+=(-T "$1")
            [ "$2" = default ] || opt+=(-B "$2")
            label="-T $1, -B $2"
            [ "$1" = default ] && label="-T $(nproc) (default), -B $2"
            set -- $(measure "$tmp/s.sep" -m "$m" "${opt[@]}" -c "$tmp/1M") \
                $(measure "$tmp/b.sep" -m "$m" "${opt[@]}" -c "$tmp/100M")
            cs=$3 cb=$6
            dopt=()
            [ "${opt[0]:-}" = -T ] && dopt=(-T "${opt[1]}")
            set -- $(measure "$tmp/s.out" -d "${dopt[@]}" -c "$tmp/s.sep") \
                $(measure "$tmp/b.out" -d "${dopt[@]}" -c "$tmp/b.sep")
            cmp -s "$tmp/b.out" "$tmp/100M" || { echo "round trip failed" >&2; exit 1; }
            echo "| $m | $label | $(mib "$cs") | $(mib "$cb") | $(ratio "$cb" "$cs") | $(mib "$3") | $(mib "$6") | $(ratio "$6" "$3") |"
        done
    done
    echo
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
