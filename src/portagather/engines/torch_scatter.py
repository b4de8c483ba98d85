"""PyTorch's writes along one axis, for :class:`~portagather.engines.torch.TorchEngine`'s
scatters: one ``scatter_*`` or ``index_*`` kernel per call, and how ``"update"`` settles which
duplicate wins without relying on the order in which torch writes (``scatter_`` and
``index_put_`` document none)."""

from __future__ import annotations

from typing import Any

import torch

from .._scatter import ScatterPromises
from ._torch_private import vmap_running

#: torch's names of the reductions, where they differ from portagather's.
TORCH_REDUCE = {"multiply": "prod", "min": "amin", "max": "amax"}

#: The signed dtype of each unsigned one that torch has no gather or scatter kernels for:
#: such data is gathered and scattered as the same bits.
SIGNED_TWIN = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}


#: Dtypes whose ``scatter_`` on the CPU rewrites every NaN of the tensor, written or not,
#: as the canonical NaN (it goes through float32): written as the same bits of int16, so
#: that ``"update"`` moves bits and leaves the other elements alone.
_BITS_TWIN = {torch.float16: torch.int16, torch.bfloat16: torch.int16}


def compiling() -> bool:
    return bool(torch.compiler.is_compiling())


def _write(tensor: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """``tensor.<method>_(...)`` in place on a new tensor of ours, or out of place under
    ``torch.func.vmap``, which refuses in-place writes of batched values into a tensor that
    is not batched (the copy is then torch's)."""
    if not compiling() and vmap_running():  # torch.compile can't trace it
        return getattr(tensor, method)(*args, **kwargs)
    return getattr(tensor, method + "_")(*args, **kwargs)


def scatter_along(
    target: Any, dim: int, index: Any, values: Any, reduce: str, dropping: bool,
    promises: ScatterPromises, cheap: bool,
) -> Any:  # fmt: skip
    """A new tensor: `target` with `values` combined by `reduce` at `index` along `dim`.

    `index` is either 1-d (``values.shape[dim] == len(index)``: each value writes a slice,
    by ``index_copy_``, ``index_add_``, or ``scatter_reduce_`` of the index expanded, a
    view), or of the shape of `values` (elementwise: ``scatter_``, ``scatter_add_``,
    ``scatter_reduce_``). Where `dropping`, the copy has one more slice along `dim`, where
    dropped updates (at ``target.shape[dim]``) land, cut off at the end; nothing is
    compressed (boolean indexing costs torch more than the scatter). Under ``"update"`` the
    winners are found in the result's own storage, and duplicates write the winner's value
    (:func:`_winning_values`), where autograd records nothing; otherwise the losers land in
    the extra slice too (:func:`_winners`), so that each target is written once and autograd
    gives the gradient to the winner alone. Under the promise of unique
    indices nothing is resolved, and min and max read the targets, combine and write
    (cheaper than ``scatter_reduce_``). `cheap` says whether index values may be read into
    Python (:meth:`TorchEngine.reads_cheaply`). Autograd records the in-place ops on the
    copy (under ``torch.func.vmap``, out-of-place ops: :func:`_write`).

    uint16/32/64 (no kernels) go through the signed type of the same width: the same bits
    for writes, sums and products (modulo 2**bits), and with the sign bit flipped for min
    and max, which keeps their order; bool as uint8 (max is OR, min AND). float16 and
    bfloat16 are written as int16 where autograd does not record them (:data:`_BITS_TWIN`)."""
    dtype = target.dtype
    twin = SIGNED_TWIN.get(dtype)
    if dtype == torch.bool:  # PyTorch's CUDA scatters have no bool kernels: as uint8 bits
        twin = torch.uint8
    if reduce == "update" and dtype in _BITS_TWIN and not _records_gradients(target, values):
        twin = _BITS_TWIN[dtype]
    if twin is not None:
        target, values = target.view(twin), values.view(twin)
    flip = torch.iinfo(twin).min if twin is not None and reduce in ("min", "max") else 0
    if flip:
        target, values = target ^ flip, values ^ flip
    size = target.shape[dim]
    elementwise = index.ndim == values.ndim
    unique = promises.unique_indices
    in_place = reduce == "update" and not unique and _resolves_in_place(target, values, cheap)
    if reduce == "update" and not unique and not in_place:
        index, unique = _winners(size, dim if elementwise else 0, index, cheap, dropping)
        dropping = dropping or not unique
    if dropping:
        extra = list(target.shape)
        extra[dim] = 1
        line = torch.cat([target, target.new_zeros(extra)], dim)
    else:
        line = target if flip else target.clone()  # the flip made a new tensor already
    if in_place:
        values = _winning_values(line, dim, index, values, elementwise)
    if reduce == "update":
        line = _write(line, "scatter" if elementwise else "index_copy", dim, index, values)
    elif reduce == "add":
        line = _write(line, "scatter_add" if elementwise else "index_add", dim, index, values)
    elif unique and reduce in ("min", "max"):
        old = _read_at(line, dim, index)
        new = (torch.minimum if reduce == "min" else torch.maximum)(old, values)
        line = _write(line, "scatter" if elementwise else "index_copy", dim, index, new)
    else:
        if not elementwise:
            shape = [1] * values.ndim
            shape[dim] = index.numel()
            index = index.reshape(shape).expand(values.shape)
        line = _write(
            line, "scatter_reduce", dim, index, values, TORCH_REDUCE[reduce], include_self=True
        )
    if dropping:
        line = line.narrow(dim, 0, size)
    if flip:
        line = line ^ flip
    return line if twin is None else line.view(dtype)


def _read_at(tensor: Any, dim: int, index: Any) -> Any:
    """`tensor` read along `dim` at `index`: elementwise (``gather``) where `index` has its
    rank, else whole slices (``index_select``, also for 1-d `tensor`, where it runs several
    times faster than ``gather``)."""
    if index.ndim == tensor.ndim and index.ndim != 1:
        return tensor.gather(dim, index)
    return tensor.index_select(dim, index)


def _records_gradients(*tensors: Any) -> bool:
    return torch.is_grad_enabled() and any(t.requires_grad for t in tensors)


def _resolves_in_place(target: Any, values: Any, cheap: bool) -> bool:
    """Whether ``"update"`` may find its winners in the result's own storage
    (:func:`_winning_values`): values read cheaply, autograd records nothing (the storage is
    overwritten under it), no ``vmap`` (whose writes are out of place), and elements of 4 or
    8 bytes, which hold the update positions as integers of their width."""
    return (
        cheap
        and not _records_gradients(target, values)
        and not vmap_running()
        and target.element_size() in (4, 8)
        and (target.element_size() == 8 or values.numel() <= 2**31)
    )


def _winning_values(line: Any, dim: int, index: Any, values: Any, elementwise: bool) -> Any:
    """`values` with each update replaced by the last update to its target, found in `line`
    itself (the new result, every target of which is written afterwards): the update
    positions written at the targets (one element per slice where each update writes a
    slice) as integers of the elements' width, and read back. Where every update reads back
    its own position, the targets are unique: `values` as they are. Where none reads back
    an earlier one, each target holds its last; otherwise ``scatter_reduce("amax")``, a
    reduction, settles it. Every update then writes its target's winner, so duplicates
    write equal values whatever order torch writes them in."""
    ints = line.view(torch.int32 if line.element_size() == 4 else torch.int64)
    at = dim
    if not elementwise:  # the first element of each slice along dim stands for the slice
        ints = ints[tuple(slice(None) if d == dim else 0 for d in range(ints.ndim))]
        at = 0
    positions = torch.arange(index.numel(), dtype=ints.dtype, device=index.device)
    positions = positions.reshape(index.shape)
    ints.scatter_(at, index, positions)
    won = _read_at(ints, at, index)
    if torch.equal(won, positions):
        return values
    if bool((won < positions).any()):
        # Every target holds one of its positions already: include it in the maximum.
        ints.scatter_reduce_(at, index, positions, "amax")
        won = _read_at(ints, at, index)
    if elementwise:
        return values.reshape(-1).index_select(0, won.reshape(-1)).reshape(values.shape)
    return values.index_select(dim, won)


def _winners(size: int, dim: int, index: Any, cheap: bool, dropping: bool) -> tuple[Any, bool]:
    """`index` (along `dim`, in ``[0, size)``, or at `size` for a dropped update where
    `dropping`) with each update that a later one to its target overrides moved to `size`,
    and whether no update was moved (proved unique): for autograd, which must see each
    target written once, by its winner, and where :func:`_winning_values` cannot be used.

    The update positions are written into a scratch of their own (the data may be recorded
    by autograd) at their targets. Where the index reads cheaply, read back: every position
    that reads back itself proves the targets unique; where none reads back an earlier
    position than its own, each target holds its last one; otherwise (and always on a GPU,
    under ``torch.compile`` or ``vmap``, where values are not read) ``scatter_reduce
    ("amax")``, a reduction, settles the largest position per target. Never assumed from
    the order in which torch writes (``scatter_`` documents none)."""
    count = index.numel()
    positions_dtype = torch.int32 if count <= 2**31 else torch.int64
    positions = torch.arange(count, dtype=positions_dtype, device=index.device)
    positions = positions.reshape(index.shape)
    shape = list(index.shape)
    shape[dim] = size + dropping  # no more: torch's bounds check sees the caller's index
    scratch = torch.empty(shape, dtype=positions_dtype, device=index.device)
    if cheap:
        scratch.scatter_(dim, index, positions)
        won = _read_at(scratch, dim, index)
        if torch.equal(won, positions):
            return index, True
        if not bool((won < positions).any()):
            return torch.where(won == positions, index, size), False
        # Every target holds one of its positions already: include it in the maximum.
        scratch.scatter_reduce_(dim, index, positions, "amax")
    else:
        scratch = _write(
            scratch, "scatter_reduce", dim, index, positions, "amax", include_self=False
        )
    won = _read_at(scratch, dim, index)
    return torch.where(won == positions, index, size), False
