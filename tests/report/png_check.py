#!/usr/bin/env python3
"""Checks that a PNG screenshot shows a rendered page, not a blank one.

    png_check.py SHOT.png MIN_WIDTH MIN_HEIGHT

Reads the PNG with zlib alone (8-bit RGB or RGBA, not interlaced, as
Chromium writes them), undoes the row filters, and counts the pixels that
are not white and those of the plots' first colour (#1f4e9c, the bars and
points). Fails unless the picture is at least MIN_WIDTH x MIN_HEIGHT, more
than 2% of it is not white, and the plots' colour shows. Prints the figures.
"""
import struct
import sys
import zlib


def chunks(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG file")
    at = 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        yield kind, data[at + 8:at + 8 + length]
        at += 12 + length


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def unfilter(raw, width, height, bpp):
    stride, rows, prev, at = width * bpp, [], bytearray(width * bpp), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                line[i] = (line[i] + paeth(left, up, corner)) & 255
        rows.append(line)
        prev = line
    return rows


def main(path, min_w, min_h):
    data = open(path, "rb").read()
    idat, header = b"", None
    for kind, body in chunks(data):
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        print("%s: unsupported PNG (depth %d, colour type %d, interlace %d)" % (path, depth, colour, interlace))
        return 1
    bpp = 3 if colour == 2 else 4
    rows = unfilter(zlib.decompress(idat), width, height, bpp)
    inked = plot = 0
    for line in rows:
        for x in range(0, width * bpp, bpp):
            r, g, b = line[x], line[x + 1], line[x + 2]
            inked += r < 240 or g < 240 or b < 240
            plot += abs(r - 0x1f) < 24 and abs(g - 0x4e) < 24 and abs(b - 0x9c) < 24
    share = inked / float(width * height)
    print("%s: %dx%d, %.1f%% not white, %d pixels of the plots' colour" % (path, width, height, 100 * share, plot))
    ok = width >= min_w and height >= min_h and share > 0.02 and plot > 500
    if not ok:
        print("FAIL: the page did not render (blank, too small, or no plot)", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
