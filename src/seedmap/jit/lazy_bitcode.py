"""Load a cached numba kernel without parsing its LLVM bitcode until something links against it.

A kernel in numba's cache holds its machine code (an ELF object) and the bitcode of the same functions,
kept so that a later compilation can link them in. numba parses that bitcode at every load, only to list
the symbols the object defines. seedmap's search kernels inline most of the search, so their bitcode is
large: parsing it and walking its functions took about half of a run's kernel loading (250 Mbp human-like
genome, fm, --best: the warm-up 0.54-0.63 s -> 0.14-0.32 s, 100 reads). The object's own symbol table lists
the same symbols (test_startup.py checks that they match), so the bitcode is parsed only if a compilation
later links the kernel in. Anything unexpected (not a well-formed 64-bit little-endian ELF object with exactly one
symbol table, a numba laid out otherwise) falls back to numba's own load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numba.core.codegen import CPUCodeLibrary, JITCPUCodegen

    State = tuple[str, str, Any]  # a cached library: (name, kind, data); data (object, bitcode) for "object"

_SECTION = np.dtype([("name", "<u4"), ("type", "<u4"), ("flags", "<u8"), ("addr", "<u8"), ("offset", "<u8"),
                     ("size", "<u8"), ("link", "<u4"), ("info", "<u4"), ("align", "<u8"), ("entsize", "<u8")])
_SYMBOL = np.dtype([("name", "<u4"), ("info", "u1"), ("other", "u1"), ("shndx", "<u2"), ("value", "<u8"),
                    ("size", "<u8")])
_SYMTAB = 2  # section type
_OBJECT, _FUNC = 1, 2  # symbol types: what an LLVM module's global variables and functions become


def elf_defined_symbols(obj: bytes) -> set[str] | None:
    """Names of the functions and data an ELF object defines (None if it is not a well-formed 64-bit
    little-endian ELF object with exactly one symbol table)."""
    if len(obj) < 64 or obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
        return None
    try:
        shoff = int.from_bytes(obj[0x28:0x30], "little")
        shnum = int.from_bytes(obj[0x3C:0x3E], "little")
        sections = np.frombuffer(obj, _SECTION, shnum, shoff)
        tables = np.flatnonzero(sections["type"] == _SYMTAB)
        if tables.size != 1:
            return None
        table = sections[tables[0]]
        names = sections[int(table["link"])]
        symbols = np.frombuffer(obj, _SYMBOL, int(table["size"]) // _SYMBOL.itemsize, int(table["offset"]))
        text = obj[int(names["offset"]):int(names["offset"] + names["size"])]
        defined = (symbols["shndx"] != 0) & np.isin(symbols["info"] & 0xF, (_OBJECT, _FUNC))
        return {text[at:text.index(b"\0", at)].decode() for at in symbols["name"][defined].tolist()}
    except (ValueError, IndexError, UnicodeDecodeError):  # out of bounds: not what numba writes
        return None


def _lazy_unserialize(original: Callable[[JITCPUCodegen, State], CPUCodeLibrary]) -> classmethod:
    """CPUCodeLibrary._unserialize that leaves an object-cached kernel's bitcode unparsed (see the notes)."""
    import llvmlite.binding as ll

    def unserialize(cls: type, codegen: JITCPUCodegen, state: State) -> CPUCodeLibrary:
        name, kind, data = state
        if kind != "object" or not isinstance(getattr(codegen._engine, "_defined_symbols", None), set):
            return original(codegen, state)
        object_code, shared_bitcode = data
        symbols = elf_defined_symbols(object_code)
        if symbols is None:
            return original(codegen, state)
        library = codegen.create_library(name)
        library.enable_object_caching()
        library._set_compiled_object(object_code)

        def module_for_linking() -> object:  # what numba's own load parses up front
            if library._shared_module is None:
                library._shared_module = ll.parse_bitcode(shared_bitcode)
            return library._shared_module

        library._get_module_for_linking = module_for_linking
        library._finalize_final_module()
        codegen._engine._defined_symbols |= symbols
        return library

    return classmethod(unserialize)


@contextmanager
def bitcode_parsed_lazily() -> Iterator[None]:
    """Within the block, kernels loaded from numba's cache leave their bitcode unparsed (see the notes);
    numba's own load where its code library is not laid out as expected. Not thread-safe: callers hold
    warmup._QUICK_LOAD."""
    from numba.core import codegen

    cls = codegen.CPUCodeLibrary
    engine = getattr(codegen, "JitEngine", None)
    original = cls.__dict__.get("_unserialize")
    known = (isinstance(original, classmethod) and engine is not None
             and all(hasattr(cls, a) for a in ("enable_object_caching", "_set_compiled_object",
                                                "_finalize_final_module", "_get_module_for_linking"))
             and hasattr(engine, "_load_defined_symbols"))
    if not known:
        yield
        return
    cls._unserialize = _lazy_unserialize(original.__get__(None, cls))
    try:
        yield
    finally:
        cls._unserialize = original
