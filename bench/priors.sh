#!/bin/bash
# Priors (issue 20): small files compressed one by one, with a prior trained by
# `sep train` on a training half, against zstd -19 with a dictionary trained by
# `zstd --train` on the same half, sep without a prior, zstd -19 and brotli -q 11.
#
#   bench/priors.sh fetch DIR                 # build DIR/KIND/{train,test} for the kinds below
#   bench/priors.sh measure DIR SEP [PRESET]  # sizes per kind, round trips, times
#   bench/priors.sh time DIR SEP [PRESET]     # only the times of 4 KiB files
#   bench/priors.sh builtin DIR SEP           # the built-in priors, each kind
#
# Kinds, from public data (Debian 12 packages, pinned, and the corpus):
#   man   the man pages of Debian's `manpages` package (one page per file;
#         not manpages-dev, which is kept for independent checks)
#   c     the C headers of linux-libc-dev (usr/include/linux/*.h)
#   json  iso-codes' JSON tables cut into 4 KiB pieces at line ends (records)
#   urls  /work/shared/corpus/files/snappy.urls.10K cut into 4 KiB pieces at
#         line ends
# Files sorted by name go alternately to train/ and test/ (man, c), or the
# first half to train/ and the second half to test/ (json, urls). At most 60
# test files per kind (every k-th) keep the run short.
#
# `measure` trains one prior per kind (`SEP train -p PRESET`, default preset
# default), checks that every test file's archive decodes with it, prints per
# kind the total bytes of each compressor, and the CPU time (user + sys, best
# of 5) of compressing 4 KiB files with the prior, loading included. Needs
# zstd, brotli and /usr/bin/time. TRAIN_ARGS (e.g. "--table-bits 20") goes to
# every `sep train`; PRESET fast measures the fast preset's priors (CM
# revision 3). KINDS (e.g. "urls") limits the kinds measured.
set -euo pipefail

PACKAGES="manpages=6.03-2 linux-libc-dev=6.1.192-3 iso-codes=4.15.0-1"
CORPUS=${CORPUS:-/work/shared/corpus/files}

# Splits the lines of $1 into pieces of about 4 KiB in folder $2, named $3.NNNN.
chunks() {
    mkdir -p "$2"
    awk -v dir="$2" -v name="$3" '
        { buf = buf $0 "\n"; if (length(buf) >= 4096) { f = sprintf("%s/%s.%04d", dir, name, n++); printf "%s", buf > f; close(f); buf = "" } }
        END { if (buf != "") { f = sprintf("%s/%s.%04d", dir, name, n++); printf "%s", buf > f; close(f) } }' "$1"
}

# Moves files of folder $1 into $1/../train and $1/../test: alternately ($2 = alt)
# or first half / second half ($2 = half).
split_set() {
    local all=$1 how=$2 base
    base=$(dirname "$all")
    mkdir -p "$base/train" "$base/test"
    mapfile -t files < <(find "$all" -type f | LC_ALL=C sort)
    local n=${#files[@]} i=0
    for f in "${files[@]}"; do
        if [ "$how" = alt ]; then
            if [ $((i % 2)) = 0 ]; then mv "$f" "$base/train/"; else mv "$f" "$base/test/"; fi
        else
            if [ $i -lt $((n / 2)) ]; then mv "$f" "$base/train/"; else mv "$f" "$base/test/"; fi
        fi
        i=$((i + 1))
    done
    rm -rf "$all"
    # At most 60 test files: every k-th.
    mapfile -t tests < <(find "$base/test" -type f | LC_ALL=C sort)
    local k=$(((${#tests[@]} + 59) / 60)) j=0
    if [ "$k" -gt 1 ]; then
        for f in "${tests[@]}"; do
            if [ $((j % k)) != 0 ]; then rm "$f"; fi
            j=$((j + 1))
        done
    fi
}

fetch() {
    local dir=$1
    mkdir -p "$dir/debs" "$dir/x"
    # The pinned versions; a Debian point release can drop one from the
    # mirror (linux-libc-dev moves with every kernel update), so a version the
    # mirror no longer has is replaced by the newest one it has, said loudly:
    # the numbers of a run name the packages they measured.
    local spec pkg v got
    for spec in $PACKAGES; do
        pkg=${spec%%=*}
        if ! (cd "$dir/debs" && apt-get download "$spec" > /dev/null 2>&1); then
            got=
            for v in $(apt-cache madison "$pkg" | awk '{print $3}'); do
                if (cd "$dir/debs" && apt-get download "$pkg=$v" > /dev/null 2>&1); then
                    got=$v
                    break
                fi
            done
            [ -n "$got" ] || { echo "priors.sh: no version of $pkg can be downloaded" >&2; exit 1; }
            echo "priors.sh: $spec is not on this machine's mirror; using $pkg=$got" >&2
        fi
    done
    echo "packages: $(cd "$dir/debs" && ls *.deb | tr '\n' ' ')"
    for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/x"; done
    # man: every page, uncompressed, named by section and page.
    mkdir -p "$dir/man/all"
    find "$dir/x/usr/share/man" -type f -name '*.gz' | while read -r p; do
        gzip -dc "$p" > "$dir/man/all/$(basename "$(dirname "$p")").$(basename "$p" .gz)"
    done
    split_set "$dir/man/all" alt
    mkdir -p "$dir/c/all"
    cp "$dir"/x/usr/include/linux/*.h "$dir/c/all/"
    split_set "$dir/c/all" alt
    mkdir -p "$dir/json/all"
    for j in "$dir"/x/usr/share/iso-codes/json/*.json; do
        chunks "$j" "$dir/json/all" "$(basename "$j" .json)"
    done
    split_set "$dir/json/all" half
    chunks "$CORPUS/snappy.urls.10K" "$dir/urls/all" urls
    split_set "$dir/urls/all" half
    for kind in ${KINDS:-man c json urls}; do
        echo "$kind: $(ls "$dir/$kind/train" | wc -l) training files ($(cat "$dir/$kind"/train/* | wc -c) bytes), $(ls "$dir/$kind/test" | wc -l) test files ($(cat "$dir/$kind"/test/* | wc -c) bytes)"
    done
}

cpu() { # CPU seconds (user + sys) of a command, best of 5
    local best=999 t out
    out=$(mktemp)
    for _ in 1 2 3 4 5; do
        /usr/bin/time -o "$out" -f "%U %S" "$@" > /dev/null 2>&1
        t=$(awk '{print $1 + $2}' "$out")
        best=$(echo "$t $best" | awk '{print ($1 < $2) ? $1 : $2}')
    done
    rm -f "$out"
    echo "$best"
}

# Per-file CPU time of 4 KiB files (5 urls pieces), loading the prior included.
times() {
    local dir=$1 sep=$2 preset=$3 work=$4 f ts=()
    [ -f "$work/urls.sepp" ] || "$sep" train -q -f -p "$preset" ${TRAIN_ARGS:-} -o "$work/urls.sepp" "$dir/urls/train"
    for f in $(find "$dir/urls/test" -type f | LC_ALL=C sort | head -5); do
        ts+=("$(cpu "$sep" --prior "$work/urls.sepp" -c -T1 -q "$f")")
    done
    echo "4 KiB files, sep --prior urls.sepp -c -T1 (preset $preset; prior $(wc -c < "$work/urls.sepp") bytes), CPU s, best of 5 each: ${ts[*]}"
    ts=()
    for f in $(find "$dir/urls/test" -type f | LC_ALL=C sort | head -5); do
        ts+=("$(cpu "$sep" -p "$preset" --prior none -c -T1 -q "$f")")
    done
    echo "4 KiB files, sep -p $preset --prior none -c -T1 (no prior), CPU s, best of 5 each: ${ts[*]}"
    ts=()
    for f in $(find "$dir/urls/test" -type f | LC_ALL=C sort | head -5); do
        ts+=("$(cpu "$sep" --prior builtin:records -c -T1 -q "$f")")
    done
    echo "4 KiB files, sep --prior builtin:records -c -T1 (built-in prior named), CPU s, best of 5 each: ${ts[*]}"
    ts=()
    for f in $(find "$dir/urls/test" -type f | LC_ALL=C sort | head -5); do
        ts+=("$(cpu "$sep" -c -T1 -q "$f")")
    done
    echo "4 KiB files, sep -c -T1 (the automatic choice: coded with the built-in prior and without), CPU s, best of 5 each: ${ts[*]}"
    ts=()
    for f in $(find "$dir/urls/test" -type f | LC_ALL=C sort | head -5); do
        ts+=("$(cpu zstd -q -19 -D "$work/urls.dict" -c "$f")")
    done
    echo "4 KiB files, zstd -19 -D dict, CPU s, best of 5 each: ${ts[*]}"
}

measure() {
    local dir=$1 sep=$2 preset=${3:-default} work
    work=$(mktemp -d)
    trap 'rm -rf "$work"' RETURN
    printf "%-5s %5s %9s | %9s %9s %9s %9s %9s | %7s %7s | %s\n" kind files bytes \
        "sep+prior" "zstd+dict" "sep" "zstd-19" "brotli" "vs dict" "vs sep" "prior file"
    for kind in ${KINDS:-man c json urls}; do
        local d=$dir/$kind
        [ -d "$d/test" ] || continue
        "$sep" train -q -f -p "$preset" ${TRAIN_ARGS:-} -o "$work/$kind.sepp" "$d/train"
        zstd -q -f --train "$d"/train/* -o "$work/$kind.dict" 2>/dev/null
        local n=0 raw=0 sp=0 zd=0 s=0 z=0 b=0
        for f in "$d"/test/*; do
            local a
            a=$("$sep" --prior "$work/$kind.sepp" -c -T1 -q "$f" | tee "$work/a" | wc -c)
            "$sep" --prior "$work/$kind.sepp" -d -c -q < "$work/a" | cmp -s - "$f" \
                || { echo "round trip failed: $f" >&2; exit 1; }
            sp=$((sp + a))
            zd=$((zd + $(zstd -q -19 -D "$work/$kind.dict" -c "$f" | wc -c)))
            s=$((s + $("$sep" -p "$preset" --prior none -c -T1 -q "$f" | wc -c)))
            z=$((z + $(zstd -q -19 -c "$f" | wc -c)))
            b=$((b + $(brotli -q 11 -c "$f" | wc -c)))
            raw=$((raw + $(wc -c < "$f")))
            n=$((n + 1))
        done
        printf "%-5s %5d %9d | %9d %9d %9d %9d %9d | %6.1f%% %6.1f%% | %d\n" "$kind" "$n" "$raw" \
            "$sp" "$zd" "$s" "$z" "$b" \
            "$(echo "$sp $zd" | awk '{print 100 * (1 - $1 / $2)}')" \
            "$(echo "$sp $s" | awk '{print 100 * (1 - $1 / $2)}')" \
            "$(wc -c < "$work/$kind.sepp")"
    done
    times "$dir" "$sep" "$preset" "$work"
}

# The built-in prior of each kind named on every test file (round trips
# checked), against sep without a prior, zstd -19 and brotli -q 11, and the
# automatic choice (sep with no option).
builtin() {
    local dir=$1 sep=$2 kind prior f a
    printf "%-5s %-8s %5s %9s | %9s %9s %9s %9s %9s | %7s\n" kind prior files bytes \
        builtin auto sep zstd-19 brotli "vs brotli"
    for kind in ${KINDS:-man c json urls}; do
        local d=$dir/$kind
        [ -d "$d/test" ] || continue
        case $kind in man) prior=text ;; c) prior=code ;; *) prior=records ;; esac
        local n=0 raw=0 bp=0 au=0 s=0 z=0 b=0
        for f in "$d"/test/*; do
            a=$(mktemp)
            "$sep" --prior "builtin:$prior" -c -T1 -q "$f" > "$a"
            "$sep" -d -c -q < "$a" | cmp -s - "$f" || { echo "round trip failed: $f" >&2; exit 1; }
            bp=$((bp + $(wc -c < "$a")))
            rm -f "$a"
            au=$((au + $("$sep" -c -T1 -q "$f" | wc -c)))
            s=$((s + $("$sep" --prior none -c -T1 -q "$f" | wc -c)))
            z=$((z + $(zstd -q -19 -c "$f" | wc -c)))
            b=$((b + $(brotli -q 11 -c "$f" | wc -c)))
            raw=$((raw + $(wc -c < "$f")))
            n=$((n + 1))
        done
        printf "%-5s %-8s %5d %9d | %9d %9d %9d %9d %9d | %6.1f%%\n" "$kind" "$prior" "$n" "$raw" \
            "$bp" "$au" "$s" "$z" "$b" "$(echo "$bp $b" | awk '{print 100 * ($1 / $2 - 1)}')"
    done
}

case "${1:-}" in
fetch) fetch "$2" ;;
measure) measure "$2" "$3" "${4:-default}" ;;
builtin) builtin "$2" "$3" ;;
time)
    work=$(mktemp -d)
    zstd -q -f --train "$2"/urls/train/* -o "$work/urls.dict" 2>/dev/null
    times "$2" "$3" "${4:-default}" "$work"
    rm -rf "$work"
    ;;
*)
    sed -n "2,26p" "$0"
    exit 2
    ;;
esac
