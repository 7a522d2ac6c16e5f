"""The SAM FLAG bits (SAM specification, section 1.4), defined once for every module that writes or reads
them. numba kernels cannot use IntFlag members: they use the plain int constants below, derived from it."""

from __future__ import annotations

from enum import IntFlag


class SamFlag(IntFlag):
    PAIRED = 0x1
    PROPER_PAIR = 0x2
    UNMAPPED = 0x4
    MATE_UNMAPPED = 0x8
    REVERSE = 0x10
    MATE_REVERSE = 0x20
    READ1 = 0x40
    READ2 = 0x80
    SECONDARY = 0x100
    QCFAIL = 0x200
    DUPLICATE = 0x400
    SUPPLEMENTARY = 0x800


FLAG_PAIRED = int(SamFlag.PAIRED)
FLAG_PROPER = int(SamFlag.PROPER_PAIR)
FLAG_UNMAPPED = int(SamFlag.UNMAPPED)
FLAG_MATE_UNMAPPED = int(SamFlag.MATE_UNMAPPED)
FLAG_REVERSE = int(SamFlag.REVERSE)
FLAG_MATE_REVERSE = int(SamFlag.MATE_REVERSE)
FLAG_FIRST = int(SamFlag.READ1)
FLAG_LAST = int(SamFlag.READ2)
FLAG_SECONDARY = int(SamFlag.SECONDARY)
FLAG_QCFAIL = int(SamFlag.QCFAIL)
FLAG_DUPLICATE = int(SamFlag.DUPLICATE)
FLAG_SUPPLEMENTARY = int(SamFlag.SUPPLEMENTARY)
