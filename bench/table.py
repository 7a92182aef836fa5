#!/usr/bin/env python3
"""Joins peers.sh output with sep measurements into a markdown table.

usage: table.py PEERS.tsv SEP.tsv [SEP2.tsv ...]
Each SEP tsv has columns: file, bytes, sep_<name>, c_cpu_s, d_cpu_s.
Prints per-file compressed sizes, then totals with ratio and speed.
"""
import csv, sys

def read(p):
    with open(p) as f:
        return list(csv.DictReader(f, delimiter="\t"))

peers = read(sys.argv[1])
seps = [read(p) for p in sys.argv[2:]]
names = [next(k for k in s[0] if k.startswith("sep_")) for s in seps]
peer_names = ["xz", "zstd", "bzip2", "brotli", "zpaq"]
cols = [n.replace("sep_", "sep ") for n in names] + peer_names
print("| file | bytes | " + " | ".join(cols) + " |")
print("|---|---:|" + "---:|" * len(cols))
tot = {c: 0 for c in cols}
tsec = {c: [0.0, 0.0] for c in cols}
raw = 0
for i, row in enumerate(peers):
    raw += int(row["bytes"])
    vals = []
    for n, s in zip(names, seps):
        r = s[i]
        assert r["file"] == row["file"], (r["file"], row["file"])
        c = n.replace("sep_", "sep ")
        tot[c] += int(r[n]); tsec[c][0] += float(r["c_cpu_s"]); tsec[c][1] += float(r["d_cpu_s"])
        vals.append(int(r[n]))
    for p in peer_names:
        tot[p] += int(row[p]); tsec[p][0] += float(row[p + "_s"])
        vals.append(int(row[p]))
    best = min(vals)
    cells = [f"**{v:,}**" if v == best else f"{v:,}" for v in vals]
    print(f"| {row['file']} | {int(row['bytes']):,} | " + " | ".join(cells) + " |")
print(f"| **total** | {raw:,} | " + " | ".join(f"{tot[c]:,}" for c in cols) + " |")
print(f"| ratio | | " + " | ".join(f"{raw / tot[c]:.3f}" for c in cols) + " |")
print(f"| compress MB/s | | " + " | ".join(f"{raw / tsec[c][0] / 1e6:.2f}" for c in cols) + " |")
print(f"| decompress MB/s | | " + " | ".join(f"{raw / tsec[c][1] / 1e6:.2f}" if tsec[c][1] else "" for c in cols) + " |")
