#!/usr/bin/env python3
"""Writes a PNG (8-bit RGB, Sub filter on every row, zlib level 9) of a binary
PPM with its zlib stream split into IDAT chunks of CHUNK bytes:

    python3 scripts/idat_png.py IN.ppm OUT.png CHUNK

tests/golden/inputs/kodim23.crop32x24.png is
`python3 scripts/idat_png.py tests/golden/inputs/kodim23.crop32x24.ppm
tests/golden/inputs/kodim23.crop32x24.png 512` (3 IDAT chunks; Python 3's
zlib). Issue 17: transform 4 (PNG IDAT runs), doc/FORMAT.md section 8.
"""
import sys, zlib, struct
def ppm(path):
    d=open(path,'rb').read()
    # P6 w h 255 (whitespace separated)
    parts=d.split(maxsplit=4)
    assert parts[0]==b'P6'
    w,h,mx=int(parts[1]),int(parts[2]),int(parts[3])
    px=parts[4]
    return w,h,px[:w*h*3]
def chunk(t,data):
    return struct.pack('>I',len(data))+t+data+struct.pack('>I',zlib.crc32(t+data)&0xffffffff)
def png(w,h,px,chunk_size):
    raw=bytearray()
    for y in range(h):
        row=px[y*w*3:(y+1)*w*3]
        raw.append(1)  # Sub filter
        prev=[0,0,0]
        for x in range(w*3):
            raw.append((row[x]-(row[x-3] if x>=3 else 0))&255)
    z=zlib.compress(bytes(raw),9)
    out=b'\x89PNG\r\n\x1a\n'+chunk(b'IHDR',struct.pack('>IIBBBBB',w,h,8,2,0,0,0))
    for i in range(0,len(z),chunk_size):
        out+=chunk(b'IDAT',z[i:i+chunk_size])
    return out+chunk(b'IEND',b'')
w,h,px=ppm(sys.argv[1])
open(sys.argv[2],'wb').write(png(w,h,px,int(sys.argv[3])))
