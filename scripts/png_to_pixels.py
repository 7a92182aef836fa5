#!/usr/bin/env python3
"""Writes the pixels of an 8-bit RGB or RGBA PNG (not interlaced) as the image
file transform 6 (png-pixels, doc/FORMAT.md section 8) shows the model: a
binary PPM for RGB, a TGA (B, G, R, A, top-left origin) for RGBA:

    python3 scripts/png_to_pixels.py IN.png OUT

Used by bench/png-pixels.sh for the "same pixels" column (doc/TRANSFORMS.md).
"""
import sys,zlib,struct
def paeth(a,b,c):
    p=a+b-c; pa,pb,pc=abs(p-a),abs(p-b),abs(p-c)
    return a if pa<=pb and pa<=pc else (b if pb<=pc else c)
d=open(sys.argv[1],'rb').read()
at=8; z=b''
while at<len(d):
    n=struct.unpack('>I',d[at:at+4])[0]; t=d[at+4:at+8]; data=d[at+8:at+8+n]
    if t==b'IHDR': w,h,depth,ct=struct.unpack('>IIBB',data[:10])
    if t==b'IDAT': z+=data
    at+=12+n
assert depth==8 and ct in (2,6)
ch=3 if ct==2 else 4
raw=zlib.decompress(z); rl=w*ch; out=bytearray(); prev=bytearray(rl)
for y in range(h):
    f=raw[y*(rl+1)]; cur=bytearray(raw[y*(rl+1)+1:(y+1)*(rl+1)])
    for i in range(rl):
        a=cur[i-ch] if i>=ch else 0; b=prev[i]; c=prev[i-ch] if i>=ch else 0
        p=[0,a,b,(a+b)//2,paeth(a,b,c)][f]; cur[i]=(cur[i]+p)&255
    out+=cur; prev=cur
if ch==3: hdr=b'P6\n%d %d\n255\n'%(w,h); px=out
else:
    hdr=bytes([0,0,2,0,0,0,0,0,0,0,0,0])+struct.pack('<HH',w,h)+bytes([32,0x28])
    px=bytearray(out); px[0::4],px[2::4]=out[2::4],out[0::4]
open(sys.argv[2],'wb').write(hdr+bytes(px))
