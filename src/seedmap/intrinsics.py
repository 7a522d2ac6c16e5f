"""LLVM intrinsics for the CPU kernels: one instruction each where numba has no spelling for it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

if TYPE_CHECKING:
    import numpy as np
    from numba.core.base import BaseContext
    from numba.core.typing.templates import Signature

    Codegen = Callable[[BaseContext, ir.IRBuilder, Signature, list[ir.Value]], ir.Value]
    Typed = tuple[Signature, Codegen] | None  # None: not this intrinsic's argument types


@intrinsic
def popcount(typingctx: object, x: types.Type) -> Typed:
    """Number of set bits of a uint64 (llvm.ctpop: one instruction on x86-64 with popcnt)."""
    if x != types.uint64:
        return None

    def codegen(context: BaseContext, builder: ir.IRBuilder, sig: Signature, args: list[ir.Value]) -> ir.Value:
        fn = builder.module.declare_intrinsic("llvm.ctpop", [ir.IntType(64)])
        return builder.call(fn, args)

    return types.uint64(types.uint64), codegen


def _prefetch_at(context: BaseContext, builder: ir.IRBuilder, arrty: types.Array, arr: ir.Value,
                 idx: list[ir.Value]) -> None:
    """llvm.prefetch of the element at idx (one index per dimension)."""
    ary = context.make_array(arrty)(context, builder, arr)
    ptr = cgutils.get_item_pointer(context, builder, arrty, ary, idx, wraparound=False, boundscheck=False)
    i8p = ir.IntType(8).as_pointer()  # one declaration serves arrays of every element type
    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                        "llvm.prefetch.p0")
    builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep in all levels, data


@intrinsic
def prefetch(typingctx: object, arr: types.Type, idx: types.Type) -> Typed:
    """Hint the cache to load arr[idx] (llvm.prefetch: no effect on results, never faults, so idx need not
    be in bounds). Lookups into a large index are cache misses one after another; asking for the lines of
    a group of lookups first lets the memory system fetch them together."""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(idx, types.Integer):
        return None

    def codegen(context: BaseContext, builder: ir.IRBuilder, sig: Signature, args: list[ir.Value]) -> ir.Value:
        _prefetch_at(context, builder, sig.args[0], args[0], [args[1]])
        return context.get_dummy_value()

    return types.none(arr, idx), codegen


@intrinsic
def prefetch_row(typingctx: object, arr: types.Type, row: types.Type) -> Typed:
    """prefetch() of arr[row, 0] of a 2-D array (the first line of a row: an occurrence-table block is one)."""
    if not isinstance(arr, types.Array) or arr.ndim != 2 or not isinstance(row, types.Integer):
        return None

    def codegen(context: BaseContext, builder: ir.IRBuilder, sig: Signature, args: list[ir.Value]) -> ir.Value:
        r = context.cast(builder, args[1], sig.args[1], types.intp)
        _prefetch_at(context, builder, sig.args[0], args[0], [r, context.get_constant(types.intp, 0)])
        return context.get_dummy_value()

    return types.none(arr, row), codegen


def _zero_count(name: str, doc: str) -> Callable[[np.uint64], np.uint64]:
    """An intrinsic counting a uint64's zero bits from one end (llvm.cttz / llvm.ctlz: one instruction with
    BMI; 64 for 0)."""

    @intrinsic
    def count(typingctx: object, x: types.Type) -> Typed:
        if x != types.uint64:
            return None

        def codegen(context: BaseContext, builder: ir.IRBuilder, sig: Signature, args: list[ir.Value]) -> ir.Value:
            fn = builder.module.declare_intrinsic(name, [ir.IntType(64), ir.IntType(1)])
            return builder.call(fn, [args[0], ir.IntType(1)(0)])  # defined (64) for a zero argument

        return types.uint64(types.uint64), codegen

    count.__doc__ = doc
    return count


trailing_zeros = _zero_count("llvm.cttz", "Zero bits below a uint64's lowest set bit (64 for 0).")
leading_zeros = _zero_count("llvm.ctlz", "Zero bits above a uint64's highest set bit (64 for 0).")
