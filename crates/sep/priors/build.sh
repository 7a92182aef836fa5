#!/bin/bash
# Rebuilds the built-in priors (issue 20) bit for bit from their sources:
# Debian 12 packages of pinned versions (apt-get download) and files of the
# development corpus. MANIFEST.md beside this script lists every sample,
# its licence, and the id each prior must get.
#
#   crates/sep/priors/build.sh SEP [WORK]   # SEP: a sep binary (target/release/sep)
#
# Writes text.sepp, code.sepp and records.sepp beside this script and prints
# their ids (sep train prints them too). Every prior: preset default, CM
# revision 2 (pinned: later revisions may change what the model learns),
# a 2^20-byte context table and match tables of 2^16 entries (prior_builtin.rs
# TABLE_BITS, MATCH_BITS), plain (prior file version 1: a packed file,
# `sep train --pack`, is half the size but inflating it costs about 90 million
# instructions per load, more than coding a 4 KiB file; the replaced priors in
# legacy/, loaded only for old archives, are packed).
set -euo pipefail

SEP=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${2:-$(mktemp -d)}
CORPUS=${SEP_CORPUS:-$HERE/../../../../shared/corpus}/files
[ -d "$CORPUS" ] || CORPUS=/work/shared/corpus/files
PACKAGES="xz-utils=5.4.1-1+deb12u2 openssh-client=1:9.2p1-2+deb12u10 zlib1g-dev=1:1.2.13.dfsg-1+deb12u1 libsqlite3-dev=3.40.1-2+deb12u2 libexpat1-dev=2.5.0-1+deb12u5 json-schema-test-suite=2.0.0-1.1 tzdata=2026f-0+deb12u1 node-mdn-data=2.0.30-1"
TRAIN="train -f -p default --revision 2 --table-bits 20 --match-bits 16"

mkdir -p "$WORK/debs" "$WORK/x"
(cd "$WORK/debs" && apt-get download $PACKAGES 2>/dev/null)
for deb in "$WORK"/debs/*.deb; do dpkg-deb -x "$deb" "$WORK/x"; done
X=$WORK/x
man() { gzip -dc "$X/usr/share/man/$1.gz"; }

# text: man pages (man and mdoc macros), HTML, English prose.
T=$WORK/text
rm -rf "$T" && mkdir -p "$T"
man man1/xz.1 > "$T/01.xz.1"
man man1/lzmainfo.1 > "$T/02.lzmainfo.1"
man man3/zlib.3 > "$T/03.zlib.3"
for p in man1/ssh.1 man1/scp.1 man1/sftp.1 man1/ssh-add.1 man1/ssh-agent.1 \
    man1/ssh-keygen.1 man1/ssh-keyscan.1 man5/ssh_config.5 man8/ssh-keysign.8; do
    man "$p" > "$T/04.$(basename "$p")"
done
head -c 65536 "$CORPUS/snappy.html" > "$T/05.snappy.html"
head -c 98304 "$CORPUS/cantrbry.alice29.txt" > "$T/06.alice29.txt"

# code: C headers.
C=$WORK/code
rm -rf "$C" && mkdir -p "$C"
for h in zlib.h zconf.h expat.h expat_external.h sqlite3.h sqlite3ext.h; do
    cp "$X/usr/include/$h" "$C/$h"
done

# records: JSON, tab-separated tables, URL lines.
R=$WORK/records
rm -rf "$R" && mkdir -p "$R"
find "$X/usr/share/json-schema-test-suite/tests/draft7" -maxdepth 1 -name '*.json' | LC_ALL=C sort \
    | while read -r j; do cat "$j"; done | head -c 262144 > "$R/01.json"
for t in iso3166.tab zone1970.tab; do cp "$X/usr/share/zoneinfo/$t" "$R/02.$t"; done
# The first half of snappy.urls.10K (bench/priors.sh tests on the second).
head -c 262144 "$CORPUS/snappy.urls.10K" > "$R/03.urls"
# MDN's CSS property and API inheritance data (CC0): JSON records of short
# string fields, last (the iso-codes pieces of bench/priors.sh are such).
M=$X/usr/share/nodejs/mdn-data
{ head -c 65536 "$M/css/properties.json"; cat "$M/api/inheritance.json"; } > "$R/04.mdn.json"

for kind in text code records; do
    "$SEP" $TRAIN -o "$HERE/$kind.sepp" "$WORK/$kind"
    echo "$kind: prior $(wc -c < "$HERE/$kind.sepp") bytes, samples $(cat "$WORK/$kind"/* | wc -c) bytes, sha256 $(cat "$WORK/$kind"/* | sha256sum | cut -c1-64)"
done
