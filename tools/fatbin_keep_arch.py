#!/usr/bin/env python3
"""fatbin_keep_arch.py IN OUT --arch 90 [--keep-ptx]: a copy of the shared library IN as OUT in
which the payload of every CUDA fatbinary entry for another architecture is zeroed.

Why (issue 48): cuDNN's libcudnn_engines_precompiled.so.9 (430-574 MB) holds its kernels for
every architecture, sm_50 to sm_90, and a device call carries at most 64 MiB. The GPU machine
is an H100 (sm_90), whose driver loads only the sm_90 cubins (or the compute_90 PTX where a
container has no sm_90 cubin), so the rest can be zeroed in place: the file keeps its size,
its ELF layout and every offset (nothing to relocate, dlopen is unchanged), and the zeroes
compress to nothing.

Fatbinary layout, as found in the .nv_fatbin section of cuDNN 9 (little-endian):
  container  u32 magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries;
             containers follow each other, 8-byte aligned (zero padding skipped; cuDNN 9.0
             and 9.5 have none)
  entry      u16 kind (1 PTX, 2 ELF cubin), u16 version, u32 header size, u64 payload size
             (padded), u32 stored size, ..., u32 arch at 28 (90 = sm_90 / compute_90), ...,
             u64 flags at 40 (0x2000: payload compressed, 0x100000: sm_90a), ..., u64
             unpacked size at 56 (PTX headers are 80 bytes, cubin ones 64);
             then the payload. Only payloads are zeroed, headers stay (cuobjdump, which unpacks
             every entry whatever -arch says, stops at the first zeroed one: "Uncompress failed").
A PTX entry of the kept arch is zeroed too where its container holds a cubin of that arch (the
driver takes the cubin), unless --keep-ptx. Python 3 standard library only.
"""
import argparse
import mmap
import os
import shutil
import struct
import sys
from collections import namedtuple

FATBIN_MAGIC = 0xBA55ED50
KIND_PTX, KIND_CUBIN = 1, 2
KIND_NAMES = {KIND_PTX: "ptx", KIND_CUBIN: "cubin"}
FLAG_COMPRESSED = 0x2000
FLAG_ARCH_SPECIFIC = 0x100000  # sm_90a rather than sm_90 (cuobjdump agrees); shown, not tested
ENTRY_HEADER_MIN = 64  # the fields read end at offset 64
SHT_NOBITS = 8

Entry = namedtuple("Entry", "kind arch flags payload_off payload_size unpacked_size")


class Malformed(Exception):
    """The input is not what this tool can rewrite safely."""


def unpack(fmt, buf, off, end):
    """struct.unpack_from(fmt, buf, off), refused where it would read past end."""
    size = struct.calcsize(fmt)
    if off < 0 or off + size > end:
        raise Malformed("read of %d bytes at 0x%x runs past 0x%x" % (size, off, end))
    return struct.unpack_from(fmt, buf, off)


def find_section(buf, wanted):
    """(file offset, size) of the ELF64 little-endian section named wanted, or None."""
    if buf[:4] != b"\x7fELF" or len(buf) < 64 or buf[4] != 2 or buf[5] != 1:
        raise Malformed("not a little-endian ELF64 file")
    shoff, = unpack("<Q", buf, 0x28, len(buf))
    shentsize, shnum, shstrndx = unpack("<HHH", buf, 0x3A, len(buf))
    if shentsize < 64 or shstrndx >= shnum:
        raise Malformed("bad section header table (entry size %d, %d sections)"
                        % (shentsize, shnum))

    def header(i):
        name, kind, _, _, off, size = unpack("<IIQQQQ", buf, shoff + i * shentsize, len(buf))
        if kind != SHT_NOBITS and off + size > len(buf):
            raise Malformed("section %d runs past the end of the file" % i)
        return name, kind, off, size

    _, _, str_off, str_size = header(shstrndx)
    for i in range(shnum):
        name, kind, off, size = header(i)
        if name >= str_size:
            raise Malformed("section %d has its name outside .shstrtab" % i)
        end = buf.find(b"\0", str_off + name, str_off + str_size)
        if end >= 0 and buf[str_off + name:end] == wanted and kind != SHT_NOBITS:
            return off, size
    return None


def read_container(buf, off, end):
    """The entries of the container at off (bounded by end), and the offset just past it."""
    magic, _, header_size, fat_size = unpack("<IHHQ", buf, off, end)
    if magic != FATBIN_MAGIC or header_size < 16:
        raise Malformed("no container header at 0x%x (magic 0x%08x)" % (off, magic))
    p, stop = off + header_size, off + header_size + fat_size
    if stop > end:
        raise Malformed("container at 0x%x (%d bytes) runs past its section" % (off, fat_size))
    entries = []
    while p < stop:
        fields = unpack("<HHIQI8xI8xQ8xQ", buf, p, stop)  # the first 64 bytes
        kind, _, ehsize, padded, stored, arch, flags, unpacked = fields
        if ehsize < ENTRY_HEADER_MIN or p + ehsize + padded > stop or stored > padded:
            raise Malformed("entry at 0x%x (header %d bytes, payload %d, stored %d) is cut off"
                            " or inconsistent" % (p, ehsize, padded, stored))
        entries.append(Entry(kind, arch, flags, p + ehsize, padded, unpacked))
        p += ehsize + padded
    return entries, stop


def read_containers(buf, start, end):
    """Every container of the section [start, end), each a list of entries."""
    containers, p = [], start
    while True:
        while p < end and buf[p] == 0:  # padding between containers
            p += 1
        if p >= end:
            return containers
        if (p - start) % 8:
            raise Malformed("non-zero byte at 0x%x between containers" % p)
        entries, p = read_container(buf, p, end)
        containers.append(entries)


def to_zero(entries, arch, keep_ptx):
    """(entry, whether to zero it) for every entry of one container."""
    has_cubin = any(e.kind == KIND_CUBIN and e.arch == arch for e in entries)
    for e in entries:
        if e.arch != arch:
            yield e, True
        else:
            yield e, e.kind == KIND_PTX and has_cubin and not keep_ptx


def tally(stats, e, zero):
    """Count entry e in stats[(kind, arch, suffix)]: entries, compressed, kept, zeroed, unpacked."""
    compressed = bool(e.flags & FLAG_COMPRESSED)
    s = stats.setdefault((e.kind, e.arch, "a" if e.flags & FLAG_ARCH_SPECIFIC else ""), [0] * 5)
    s[0] += 1
    s[1] += compressed
    s[3 if zero else 2] += e.payload_size
    s[4] += e.unpacked_size if compressed else e.payload_size


def print_table(stats, containers):
    """The (kind, arch) histogram; bytes in MB (1e6), as stored (kept, zeroed) and unpacked."""
    row = "%-6s %5s %8s %10s %9s %9s %9s"
    cells = lambda s: tuple(s[:2]) + tuple("%.1f" % (n / 1e6) for n in s[2:])
    print(row % ("kind", "arch", "entries", "compressed", "kept MB", "zeroed MB", "unpacked"))
    total = [0] * 5
    for (kind, arch, suffix), s in sorted(stats.items()):
        print(row % ((KIND_NAMES.get(kind, kind), "%d%s" % (arch, suffix)) + cells(s)))
        total = [a + b for a, b in zip(total, s)]
    print(row % (("total", "") + cells(total)) + "  (%d containers)" % containers)


def die(message):
    print("fatbin_keep_arch.py: " + message, file=sys.stderr)
    sys.exit(2)


def load(path):
    """The containers of path's .nv_fatbin; exits 2 where there is none or one is malformed."""
    try:
        with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            section = find_section(buf, b".nv_fatbin")
            if section is None:
                raise Malformed("no .nv_fatbin section")
            containers = read_containers(buf, section[0], section[0] + section[1])
    except (Malformed, OSError, ValueError) as e:
        die("%s: %s" % (path, e))
    if not containers:
        die("%s: no fatbinary container in .nv_fatbin" % path)
    return containers


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--arch", type=int, required=True, help="the arch to keep, e.g. 90 for sm_90")
    ap.add_argument("--keep-ptx", action="store_true",
                    help="keep the PTX of --arch also where its container has a cubin of it")
    args = ap.parse_args()
    if os.path.exists(args.output) and os.path.samefile(args.input, args.output):
        die("OUT must not be IN")
    containers = load(args.input)
    shutil.copyfile(args.input, args.output)
    stats = {}
    with open(args.output, "r+b") as f, mmap.mmap(f.fileno(), 0) as out:
        for entries in containers:
            for e, zero in to_zero(entries, args.arch, args.keep_ptx):
                tally(stats, e, zero)
                if zero:
                    out[e.payload_off:e.payload_off + e.payload_size] = bytes(e.payload_size)
    print_table(stats, len(containers))


if __name__ == "__main__":
    main()
