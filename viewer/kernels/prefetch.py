"""A cache prefetch hint for numba kernels: ``prefetch(arr, i, j)`` asks the CPU to start loading
``arr[i, j]`` (``arr[i]`` for a 1-D array) without waiting for it. It changes no result; it lets a loop with a long body overlap
the cache misses of the next items with the work on the current one (the out-of-order window alone
does not reach that far)."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["prefetch"]


@intrinsic
def prefetch(typingctx, arr, i, j):
    """In a numba kernel, ``prefetch(arr, i, j)``: hint that ``arr[i, j]`` (``arr[i]`` when ``arr`` is 1-D:
    ``j`` is then ignored, pass 0) will be read soon. ``arr`` any numba array, ``i`` and ``j``
    integers within its bounds (not checked, never wrapped: a negative index is not from the end). Returns
    nothing; a read prefetch kept in every cache level (LLVM's ``llvm.prefetch`` rw=0, locality=3)."""
    sig = types.void(arr, i, j)

    def codegen(context, builder, signature, args):
        aryty, ity, jty = signature.args
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = [context.cast(builder, args[1], ity, types.intp), context.cast(builder, args[2], jty, types.intp)]
        idx = idx[: aryty.ndim]  # a 1-D array: arr[i] (j is ignored)
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, idx, wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])  # read, keep, data
        return context.get_dummy_value()

    return sig, codegen
