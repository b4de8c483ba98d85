"""PyTorch's writes along one axis, for :class:`~portagather.engines.torch.TorchEngine`'s
scatters: one ``scatter_*`` or ``index_*`` kernel per call, and how ``"update"`` settles which
duplicate wins without relying on the order in which torch writes (``scatter_`` and
``index_put_`` document none)."""

from __future__ import annotations

from typing import Any

import torch

from ._torch_private import vmap_running
from .base import position_bytes, winning_positions
from .scatter import ScatterPromises

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
        and target.element_size() >= position_bytes(values.numel())
    )


def _winning_values(line: Any, dim: int, index: Any, values: Any, elementwise: bool) -> Any:
    """`values` with each update replaced by the last update to its target, found in `line`
    itself (the new result, every target of which is written afterwards), viewed as
    integers of the elements' width (one element per slice where each update writes a
    slice): :func:`_winning_positions`. Every update then writes its target's winner, so
    duplicates write equal values whatever order torch writes them in."""
    ints = line.view(torch.int32 if line.element_size() == 4 else torch.int64)
    at = dim
    if not elementwise:  # the first element of each slice along dim stands for the slice
        ints = ints[tuple(slice(None) if d == dim else 0 for d in range(ints.ndim))]
        at = 0
    positions = torch.arange(index.numel(), dtype=ints.dtype, device=index.device)
    won = _winning_positions(ints, at, index, positions.reshape(index.shape), cheap=True)
    if won is None:
        return values
    if elementwise:
        return values.reshape(-1).index_select(0, won.reshape(-1)).reshape(values.shape)
    return values.index_select(dim, won)


def _winners(size: int, dim: int, index: Any, cheap: bool, dropping: bool) -> tuple[Any, bool]:
    """`index` (along `dim`, in ``[0, size)``, or at `size` for a dropped update where
    `dropping`) with each update that a later one to its target overrides moved to `size`,
    and whether no update was moved (proved unique): for autograd, which must see each
    target written once, by its winner, and where :func:`_winning_values` cannot be used.
    The winners are found (:func:`_winning_positions`) in a scratch of their own (the data
    may be recorded by autograd), by the maximum alone where the index does not read
    cheaply (on a GPU, under ``torch.compile`` or ``vmap``)."""
    count = index.numel()
    # A symbolic count (torch.export's dynamic sizes) may be any: int64, with no comparison.
    narrow = type(count) is int and position_bytes(count) == 4
    positions_dtype = torch.int32 if narrow else torch.int64
    positions = torch.arange(count, dtype=positions_dtype, device=index.device)
    positions = positions.reshape(index.shape)
    shape = list(index.shape)
    shape[dim] = size + dropping  # no more: torch's bounds check sees the caller's index
    scratch = torch.empty(shape, dtype=positions_dtype, device=index.device)
    won = _winning_positions(scratch, dim, index, positions, cheap)
    if won is None:
        return index, True
    return torch.where(won == positions, index, size), False


def _winning_positions(slots: Any, dim: int, index: Any, positions: Any, cheap: bool) -> Any | None:
    """:func:`~.base.winning_positions` in `slots` (integers of the positions' dtype, one
    per target along `dim`), at `index`: written by ``scatter_``, read by ``gather`` or
    ``index_select``, settled by ``scatter_reduce("amax")``; values read only where `cheap`
    (:meth:`TorchEngine.reads_cheaply`). Never assumed from the order in which torch
    writes (``scatter_`` documents none)."""

    def write(positions: Any) -> None:
        slots.scatter_(dim, index, positions)

    def read() -> Any:
        return _read_at(slots, dim, index)

    def settle(positions: Any) -> None:
        nonlocal slots
        if cheap:
            # Written first: each target holds one of its own positions. Counting it
            # (include_self) runs several times faster than leaving it out.
            slots.scatter_reduce_(dim, index, positions, "amax")
        else:
            # Nothing written, the scratch holds junk: left out. Out of place under vmap.
            slots = _write(
                slots, "scatter_reduce", dim, index, positions, "amax", include_self=False
            )

    return winning_positions(positions, write, read, settle, reads_values=cheap, unique=torch.equal)
