#!/usr/bin/env python3
"""Prototype of a word-replacement (dictionary) transform for text (issue 18 item 3).

Our own code, written for sep's measurement of the idea; not a format.
It turns a file into `header + dictionary + transformed text`, checks that the
inverse gives the file back, and (with --sep) compresses both with sep.

Transform (all variants):
* Words are maximal runs of ASCII letters.
* Reserved bytes: ESC, CAP, UPPER and the code bytes. They are chosen from the
  byte values the file never uses (preferring >= 0x80 with --high, so that
  sep's word models treat the codes as letters); if too few are free, the
  rarest used bytes are taken too. A literal reserved byte is written as
  ESC + byte.
* Capital conversion: a word Capitalised (first letter upper, rest lower) is
  written CAP + word lower-cased; an all-upper word of 2+ letters UPPER +
  lower-cased; any other mixed-case word is written as it is.
* Dictionary (variants with N > 0): the N lower-case words with the largest
  freq * (len - 2) (freq >= 2, len >= 3) are coded. The first n1 code bytes
  are 1-byte codes (given to the n1 most frequent chosen words); the other
  code bytes start 2-byte codes whose second byte is any of 256 values.
  Order (--order): freq (codes in frequency order), alpha (within each
  code-length group alphabetical), suffix (within each group sorted by the
  reversed word).
* Stream: [number of reserved bytes][reserved bytes: ESC, CAP, UPPER, codes...]
  [n1][0: second byte any value, 1: a code byte]
  [dictionary words each ended by 0x0A, an empty word ends it][text].
* encode_imp/decode_imp: an implicit dictionary (no word list stored), see there.

Usage: wrt_proto.py [--sep target/release/sep] [--orig] [--variants a,b256,...]
[--dump DIR] FILE...  (prints file, variant, transformed bytes, dictionary bytes,
sep -p max bytes and its user CPU).
  Codes are assigned to dictionary words in dictionary order.
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
from collections import Counter

WORD = re.compile(rb"[A-Za-z]+")


def classify(w):
    """Return (kind, lower) with kind 0 literal, 1 lower, 2 capitalised, 3 upper."""
    if w.islower():
        return 1, w
    if len(w) >= 2 and w.isupper():
        return 3, w.lower()
    if w[:1].isupper() and (len(w) == 1 or w[1:].islower()):
        return 2, w.lower()
    return 0, w


def choose_reserved(data, need, high):
    counts = Counter(data)
    free = [b for b in range(256) if counts[b] == 0]
    if high:
        free.sort(key=lambda b: (b < 0x80, b))
    else:
        free.sort(key=lambda b: (b >= 0x80, b))
    # never reserve \n or letters
    free = [b for b in free if b != 0x0A and not (0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A)]
    if len(free) < need:
        used = [b for b in range(256) if counts[b] > 0 and b != 0x0A
                and not (0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A)]
        used.sort(key=lambda b: counts[b])
        free += used[: need - len(free)]
    return free[:need]


def encode(data, n_words, order="freq", cap=True, high=False, n1_max=None, second=256):
    toks = []  # (is_word, bytes)
    pos = 0
    for m in WORD.finditer(data):
        if m.start() > pos:
            toks.append((False, data[pos:m.start()]))
        toks.append((True, m.group()))
        pos = m.end()
    if pos < len(data):
        toks.append((False, data[pos:]))
    wc = Counter()
    for is_w, t in toks:
        if is_w:
            k, low = classify(t) if cap else ((1, t) if t.islower() else (0, t))
            if k:
                wc[low] += 1
    counts = Counter(data)
    n_free = sum(1 for b in range(256) if counts[b] == 0 and b != 0x0A
                 and not (0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A))
    # code bytes: as many free ones as there are beyond the 3 flags, at least enough for N
    def sec_n(nc):
        return 256 if second == 256 else nc

    dict_words = []
    n1 = 0
    ncode = 0
    if n_words > 0:
        cand = [(f * (len(w) - 2), w) for w, f in wc.items() if f >= 2 and len(w) >= 3]
        cand.sort(key=lambda x: (-x[0], x[1]))
        chosen = [w for _, w in cand[:n_words]]
        ncode = max(n_free - 3, 2)
        # two-byte prefixes needed for the rest
        if n1_max is not None:
            n1 = min(n1_max, ncode - 1)
        else:
            # as many 1-byte codes as possible while the 2-byte ones fit
            n1 = ncode - 1
            while n1 > 0 and n1 + (ncode - n1) * sec_n(ncode) < len(chosen):
                n1 -= 1
        cap_total = n1 + (ncode - n1) * sec_n(ncode)
        chosen = chosen[:cap_total]
        chosen.sort(key=lambda w: (-wc[w], w))
        g1, g2 = chosen[:n1], chosen[n1:]
        if order == "alpha":
            g1.sort()
            g2.sort()
        elif order == "suffix":
            g1.sort(key=lambda w: w[::-1])
            g2.sort(key=lambda w: w[::-1])
        dict_words = g1 + g2
    reserved = choose_reserved(data, 3 + ncode, high)
    esc, capb, upb = reserved[0], reserved[1], reserved[2]
    codes = reserved[3:]
    rset = set(reserved)
    code_of = {}
    for i, w in enumerate(dict_words):
        if i < n1:
            code_of[w] = bytes([codes[i]])
        else:
            j = i - n1
            k = sec_n(len(codes))
            snd = j % k if second == 256 else codes[j % k]
            code_of[w] = bytes([codes[n1 + j // k], snd])
    out = bytearray()
    out.append(len(reserved))
    out += bytes(reserved)
    out.append(n1)
    out.append(0 if second == 256 else 1)
    for w in dict_words:
        out += w + b"\n"
    out += b"\n"
    dict_len = len(out)

    def lit(bs):
        for b in bs:
            if b in rset:
                out.append(esc)
            out.append(b)

    for is_w, t in toks:
        if not is_w:
            lit(t)
            continue
        if cap:
            k, low = classify(t)
        else:
            k, low = (1, t) if t.islower() else (0, t)
        if k == 0:
            out += t  # letters are never reserved
            continue
        if k == 2:
            out.append(capb)
        elif k == 3:
            out.append(upb)
        c = code_of.get(low)
        out += c if c is not None else low
    return bytes(out), dict_len


def cased(w, pending):
    """`w` as the pending case flag says: 2 capitalised, 3 upper case."""
    if pending == 2:
        return w[:1].upper() + w[1:]
    if pending == 3:
        return w.upper()
    return w


def decode(s):
    nres = s[0]
    reserved = s[1:1 + nres]
    esc, capb, upb = reserved[0], reserved[1], reserved[2]
    codes = reserved[3:]
    p = 1 + nres
    n1 = s[p]
    sec_codes = s[p + 1] == 1
    p += 2
    words = []
    while True:
        e = s.index(b"\n", p)
        if e == p:
            p += 1
            break
        words.append(s[p:e])
        p = e + 1
    one = {codes[i]: i for i in range(min(n1, len(codes)))}
    two = {codes[n1 + k]: k for k in range(len(codes) - n1)}
    out = bytearray()
    pending = 0  # 2 cap, 3 upper
    n = len(s)

    def emit_word(w):
        nonlocal pending
        out.extend(cased(w, pending))
        pending = 0

    while p < n:
        b = s[p]
        if b == esc:
            out.append(s[p + 1])
            p += 2
        elif b == capb or b == upb:
            pending = 2 if b == capb else 3
            p += 1
        elif b in one:
            emit_word(words[one[b]])
            p += 1
        elif b in two:
            if sec_codes:
                emit_word(words[n1 + two[b] * len(codes) + codes.index(s[p + 1])])
            else:
                emit_word(words[n1 + two[b] * 256 + s[p + 1]])
            p += 2
        elif 0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A:
            e = p
            while e < n and (0x41 <= s[e] <= 0x5A or 0x61 <= s[e] <= 0x7A):
                e += 1
            emit_word(s[p:e])
            p = e
        else:
            out.append(b)
            p += 1
    return bytes(out)


def encode_imp(data, k=2, min_len=3, n1=None, high=False):
    """Implicit (adaptive) dictionary: no word list is stored. A lower-case
    word of min_len+ letters gets the next free code once it has been
    written out k times; afterwards it is written as its code. Codes are
    assigned in that order: the first n1 are 1-byte codes, the rest 2-byte
    codes (prefix code byte + any byte). The decoder follows the same rule."""
    counts = Counter(data)
    n_free = sum(1 for b in range(256) if counts[b] == 0 and b != 0x0A
                 and not (0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A))
    ncode = max(n_free - 3, 2)
    if n1 is None:
        n1 = ncode // 2
    n1 = min(n1, ncode - 1)
    reserved = choose_reserved(data, 3 + ncode, high)
    esc, capb, upb = reserved[0], reserved[1], reserved[2]
    codes = reserved[3:]
    rset = set(reserved)
    capacity = n1 + (ncode - n1) * 256
    out = bytearray([len(reserved)]) + bytes(reserved) + bytes([n1, k, min_len])
    seen = Counter()
    code_of = {}
    pos = 0

    def lit(bs):
        for b in bs:
            if b in rset:
                out.append(esc)
            out.append(b)

    def word(t):
        kind, low = classify(t)
        if kind == 0:
            out.extend(t)
            return
        if kind == 2:
            out.append(capb)
        elif kind == 3:
            out.append(upb)
        c = code_of.get(low)
        if c is not None:
            out.extend(c)
            return
        out.extend(low)
        if len(low) >= min_len:
            seen[low] += 1
            if seen[low] == k and len(code_of) < capacity:
                i = len(code_of)
                code_of[low] = bytes([codes[i]]) if i < n1 else bytes(
                    [codes[n1 + (i - n1) // 256], (i - n1) % 256])

    for m in WORD.finditer(data):
        lit(data[pos:m.start()])
        word(m.group())
        pos = m.end()
    lit(data[pos:])
    return bytes(out), len(reserved) + 4


def decode_imp(s):
    nres = s[0]
    reserved = s[1:1 + nres]
    esc, capb, upb = reserved[0], reserved[1], reserved[2]
    codes = reserved[3:]
    ncode = len(codes)
    p = 1 + nres
    n1, k, min_len = s[p], s[p + 1], s[p + 2]
    p += 3
    capacity = n1 + (ncode - n1) * 256
    one = {codes[i]: i for i in range(n1)}
    two = {codes[n1 + j]: j for j in range(ncode - n1)}
    words = []
    known = set()
    seen = Counter()
    out = bytearray()
    pending = 0
    n = len(s)

    def emit(w):
        nonlocal pending
        out.extend(cased(w, pending))
        pending = 0

    while p < n:
        b = s[p]
        if b == esc:
            out.append(s[p + 1])
            p += 2
        elif b == capb or b == upb:
            pending = 2 if b == capb else 3
            p += 1
        elif b in one:
            emit(words[one[b]])
            p += 1
        elif b in two:
            emit(words[n1 + two[b] * 256 + s[p + 1]])
            p += 2
        elif 0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A:
            e = p
            while e < n and (0x41 <= s[e] <= 0x5A or 0x61 <= s[e] <= 0x7A):
                e += 1
            w = s[p:e]
            if w.islower() and len(w) >= min_len and w not in known:
                seen[w] += 1
                if seen[w] == k and len(words) < capacity:
                    words.append(w)
                    known.add(w)
            emit(w)
            p = e
        else:
            out.append(b)
            p += 1
    return bytes(out)


def sep_size(sep, data):
    with tempfile.NamedTemporaryFile(delete=False) as f:
        f.write(data)
        name = f.name
    try:
        t0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        r = subprocess.run([sep, "-p", "max", "-T", "1", "-q", "-c", name],
                           check=True, stdout=subprocess.PIPE)
        t1 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        return f"{len(r.stdout)}\tcpu={t1 - t0:.1f}s"
    finally:
        os.unlink(name)


VARIANTS = {
    "a": dict(n_words=0),
    "b256": dict(n_words=256),
    "b2000": dict(n_words=2000),
    "b10000": dict(n_words=10000),
    "c2000a": dict(n_words=2000, order="alpha"),
    "c2000s": dict(n_words=2000, order="suffix"),
    "c10000a": dict(n_words=10000, order="alpha"),
    "c10000s": dict(n_words=10000, order="suffix"),
    "h2000a": dict(n_words=2000, order="alpha", high=True),
    "h10000a": dict(n_words=10000, order="alpha", high=True),
    "nocap2000a": dict(n_words=2000, order="alpha", cap=False),
    "b64": dict(n_words=64),
    "imp1": dict(k=1),
    "imp2": dict(k=2),
    "imp3": dict(k=3),
    "imp2h": dict(k=2, high=True),
    "imp2l5": dict(k=2, min_len=5),
    "hh2000a": dict(n_words=2000, order="alpha", high=True, second="codes"),
    "hh10000a": dict(n_words=10000, order="alpha", high=True, second="codes"),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--variants", default="a,b256,b2000,b10000")
    ap.add_argument("--sep", default=None, help="path of sep to compress with")
    ap.add_argument("--orig", action="store_true", help="also compress the file as it is")
    ap.add_argument("--dump", default=None, help="folder to write transformed files to")
    a = ap.parse_args()
    for fn in a.files:
        data = open(fn, "rb").read()
        base = os.path.basename(fn)
        if a.orig and a.sep:
            print(f"{base}\torig\t{len(data)}\t-\t{sep_size(a.sep, data)}", flush=True)
        for v in a.variants.split(","):
            if v.startswith("imp"):
                t, dl = encode_imp(data, **VARIANTS[v])
                assert decode_imp(t) == data, (fn, v)
            else:
                t, dl = encode(data, **VARIANTS[v])
                assert decode(t) == data, (fn, v)
            size = sep_size(a.sep, t) if a.sep else "-"
            if a.dump:
                open(os.path.join(a.dump, f"{base}.{v}"), "wb").write(t)
            print(f"{base}\t{v}\t{len(t)}\tdict={dl}\t{size}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
