#!/bin/bash
# Transform 6 (png-pixels) measured (doc/TRANSFORMS.md, "Nesting"):
#
#   bench/png-pixels.sh SEP FILE.png...
#
# Per PNG (8-bit RGB or RGBA): its size, `SEP -c -T1` (default preset: png-pixels),
# the same with the signature's second byte changed (only the IDAT run or the zlib
# stream is found: transforms 4 and 2, what sep wrote before), --no-transforms, the
# same pixels as a PPM/TGA (scripts/png_to_pixels.py), xz -9e, and the user CPU
# seconds of the first; every archive of the first kind must decode to the file.
set -euo pipefail
S=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
printf "file\tbytes\tpng-pixels\ttransform4\tno-transforms\tsame-pixels\txz-9e\tuser_s\n"
for f in "$@"; do
  b=$(stat -c %s "$f")
  /usr/bin/time -f %U -o "$T/t" "$S" -c -T1 "$f" > "$T/n.sep"
  $S -d -c "$T/n.sep" | cmp - "$f" || { echo "round trip failed: $f" >&2; exit 1; }
  python3 -c "import sys;d=bytearray(open(sys.argv[1],'rb').read());d[1]=ord('p');open(sys.argv[2],'wb').write(d)" "$f" "$T/cut"
  python3 "$here/scripts/png_to_pixels.py" "$f" "$T/pix"
  printf "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\n" "$(basename "$f")" "$b" "$(stat -c %s "$T/n.sep")" \
    "$("$S" -c -T1 "$T/cut" | wc -c)" "$("$S" -c -T1 --no-transforms "$f" | wc -c)" \
    "$("$S" -c -T1 "$T/pix" | wc -c)" "$(xz -9e -c "$f" | wc -c)" "$(cat "$T/t")"
done
