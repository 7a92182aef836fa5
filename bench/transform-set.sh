#!/bin/bash
# The transform set (issue 17): real files with embedded JPEG/deflate streams
# and x86 code, taken from Debian 12 packages (PNG icons, .gz docs, a .deb, a
# JAR, a PDF manual). Not from bash-doc or desktop-base, which are kept for
# independent checks.
#
#   bench/transform-set.sh fetch DIR          # download, extract, DIR/files + DIR/MANIFEST.tsv
#   bench/transform-set.sh measure DIR SEP    # sizes with and without transforms, round trips
#
# `measure` runs `SEP -c -T1` (default preset) on every file twice: with the
# transforms, and with --no-transforms (segmented blocks off: the archive is
# what sep wrote before issue 17), checks that each archive decodes to the
# file, and prints one row per file and the totals. Needs apt-get (fetch) and
# /usr/bin/time.
set -euo pipefail

# package=version, pinned so that the set stays the same.
PACKAGES="tango-icon-theme=0.8.90-11 hello=2.10-3 junit4=4.13.2-3 gnuplot-doc=5.4.4+dfsg1-2"

fetch() {
    local dir=$1
    mkdir -p "$dir/debs" "$dir/x" "$dir/files"
    (cd "$dir/debs" && apt-get download $PACKAGES)
    for deb in "$dir"/debs/*.deb; do
        local pkg
        pkg=$(basename "$deb" | cut -d_ -f1)
        mkdir -p "$dir/x/$pkg"
        dpkg-deb -x "$deb" "$dir/x/$pkg"
    done
    local f="$dir/files"
    local icons
    icons=$(find "$dir/x/tango-icon-theme/usr/share/icons/Tango/32x32/apps" -type f -name '*.png' | sort | head -8)
    for p in $icons; do cp "$p" "$f/tango.32.$(basename "$p")"; done
    cp "$dir"/debs/hello_*.deb "$f/hello.deb"
    cp "$dir/x/hello/usr/share/info/hello.info.gz" "$f/hello.info.gz"
    cp "$dir/x/hello/usr/share/doc/hello/changelog.gz" "$f/hello.changelog.gz"
    cp "$dir/x/junit4/usr/share/java/junit4.jar" "$f/junit4.jar"
    cp "$dir/x/gnuplot-doc/usr/share/doc/gnuplot/gnuplot.pdf" "$f/gnuplot.pdf"
    cp "$dir/x/gnuplot-doc/usr/share/info/gnuplot.info.gz" "$f/gnuplot.info.gz"
    {
        printf '# file\tpackage\tversion\tlicence (debian/copyright)\tbytes\tsha256\n'
        for file in $(ls "$f" | sort); do
            local pkg
            case $file in
                tango.*) pkg=tango-icon-theme ;;
                hello.*) pkg=hello ;;
                junit4.*) pkg=junit4 ;;
                gnuplot.*) pkg=gnuplot-doc ;;
            esac
            local ver lic
            ver=$(dpkg-deb -f "$dir"/debs/${pkg}_*.deb Version)
            lic=$(grep -m4 '^License:' "$dir/x/$pkg/usr/share/doc/$pkg/copyright" | sed 's/^License: //' | sort -u | paste -sd ';' || true)
            [ -n "$lic" ] || lic="GPL-$(grep -m1 -o 'either version [0-9]' "$dir/x/$pkg/usr/share/doc/$pkg/copyright" | grep -o '[0-9]$')+"
            printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$file" "$pkg" "$ver" "$lic" \
                "$(wc -c < "$f/$file")" "$(sha256sum "$f/$file" | cut -d' ' -f1)"
        done
    } > "$dir/MANIFEST.tsv"
    cat "$dir/MANIFEST.tsv"
}

measure() {
    local dir=$1 sep=$2 tmp
    tmp=$(mktemp -d)
    local tot=0 tot_with=0 tot_without=0 cpu_with=0 cpu_without=0
    printf '%-34s %10s %10s %10s %7s %8s %8s\n' file bytes without with saved cpu-wo cpu-w
    for file in $(ls "$dir/files" | sort); do
        local in="$dir/files/$file"
        /usr/bin/time -f %U -o "$tmp/t0" "$sep" -c -T1 --no-transforms "$in" > "$tmp/a0"
        /usr/bin/time -f %U -o "$tmp/t1" "$sep" -c -T1 "$in" > "$tmp/a1"
        "$sep" -d -c "$tmp/a0" | cmp -s - "$in" || { echo "ROUND TRIP FAILED (without): $file"; exit 1; }
        "$sep" -d -c "$tmp/a1" | cmp -s - "$in" || { echo "ROUND TRIP FAILED (with): $file"; exit 1; }
        local n w0 w1
        n=$(wc -c < "$in"); w0=$(wc -c < "$tmp/a0"); w1=$(wc -c < "$tmp/a1")
        [ "$w1" -le "$w0" ] || echo "LARGER WITH TRANSFORMS: $file"
        printf '%-34s %10d %10d %10d %6.1f%% %8s %8s\n' "$file" "$n" "$w0" "$w1" \
            "$(echo "100 * ($w0 - $w1) / $w0" | bc -l)" "$(cat "$tmp/t0")" "$(cat "$tmp/t1")"
        tot=$((tot + n)); tot_without=$((tot_without + w0)); tot_with=$((tot_with + w1))
        cpu_without=$(echo "$cpu_without + $(cat "$tmp/t0")" | bc); cpu_with=$(echo "$cpu_with + $(cat "$tmp/t1")" | bc)
    done
    printf '%-34s %10d %10d %10d %6.1f%% %8s %8s\n' TOTAL "$tot" "$tot_without" "$tot_with" \
        "$(echo "100 * ($tot_without - $tot_with) / $tot_without" | bc -l)" "$cpu_without" "$cpu_with"
    echo "every round trip exact"
    rm -rf "$tmp"
}

case ${1:-} in
    fetch) fetch "${2:?DIR}" ;;
    measure) measure "${2:?DIR}" "${3:?SEP binary}" ;;
    *) sed -n '2,16p' "$0"; exit 2 ;;
esac
