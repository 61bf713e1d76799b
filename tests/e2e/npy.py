"""Writes .npy files with the standard library only (CI has no NumPy), for
the tests of --input and --expect.

  python3 npy.py banded DIR ROWS WIDTH     a banded CSR matrix: rp.npy col.npy val.npy x.npy
  python3 npy.py crowded PATH COUNT MEAN   f32 values, exponentially distributed (most of them small)
  python3 npy.py array PATH DESCR SHAPE VALUES... [--version N] [--fortran]
"""
import random
import struct
import sys

CODES = {"f4": "f", "f8": "d", "i4": "i", "i8": "q", "u1": "B", "i1": "b", "u4": "I", "u8": "Q", "f2": "e"}


def save(path, descr, shape, values, version=1, fortran=False):
    dims = "".join("%d, " % s for s in shape) if len(shape) != 1 else "%d," % shape[0]
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }" % (descr, fortran, dims)
    prefix = 10 if version == 1 else 12
    header += " " * (63 - (prefix + len(header)) % 64) + "\n"
    order = ">" if descr[0] == ">" else "<"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]))
        f.write(struct.pack("<H" if version == 1 else "<I", len(header)))
        f.write(header.encode("latin1" if version < 3 else "utf8"))
        f.write(struct.pack("%s%d%s" % (order, len(values), CODES[descr[1:]]), *values))


def banded(folder, rows, width):
    """Row r holds the WIDTH columns starting at max(0, min(r - WIDTH/2, rows - WIDTH))."""
    rng = random.Random(7)
    row_ptr, col = [0], []
    for r in range(rows):
        start = max(0, min(r - width // 2, rows - width))
        col.extend(range(start, start + width))
        row_ptr.append(len(col))
    save(folder + "/rp.npy", "<i4", [rows + 1], row_ptr)
    save(folder + "/col.npy", "<i4", [len(col)], col)
    save(folder + "/val.npy", "<f4", [len(col)], [rng.uniform(-1, 1) for _ in col])
    save(folder + "/x.npy", "<f4", [rows], [rng.uniform(-1, 1) for _ in range(rows)])


def crowded(path, count, mean):
    """COUNT f32 values from an exponential distribution of MEAN: most small, a few large."""
    rng = random.Random(11)
    save(path, "<f4", [count], [rng.expovariate(1.0 / mean) for _ in range(count)])


def main(argv):
    if argv[1] == "banded":
        banded(argv[2], int(argv[3]), int(argv[4]))
        return
    if argv[1] == "crowded":
        crowded(argv[2], int(argv[3]), float(argv[4]))
        return
    args = [a for a in argv[2:] if not a.startswith("--")]
    version = int(argv[argv.index("--version") + 1]) if "--version" in argv else 1
    if "--version" in argv:
        args.remove(str(version))
    path, descr, shape = args[0], args[1], [int(s) for s in args[2].split(",") if s]
    cast = float if descr[1] == "f" else int
    save(path, descr, shape, [cast(v) for v in args[3:]], version, "--fortran" in argv)


if __name__ == "__main__":
    main(sys.argv)
