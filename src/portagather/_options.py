"""The options of a call, checked first: the ints, names and flags a public function takes
beside its arrays (``axis``, ``reduce``, the promises, ``deterministic``), and
``num_segments``, all of whose checks are here: its kind among the options, whether an array
of the data's device can hold it, and its value read from the ids where it is not given."""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from ._arrays import dtype_name
from ._indices import to_wide
from ._plan import symbolic_size
from .engines import Engine
from .engines.scatter import ScatterPromises


def int_argument(value: object, name: str) -> int:
    """`value` as an int: a Python or NumPy integer, never a bool; a TypeError otherwise."""
    if type(value) is int:  # the common case, at the cost of one type check
        return value
    if isinstance(value, bool | np.bool_):
        msg = f"{name} must be an int; got {value!r}"
        raise TypeError(msg)
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        msg = f"{name} must be an int; got {value!r}"
        raise TypeError(msg) from None


REDUCTIONS = ("update", "add", "multiply", "min", "max")


def check_reduce(reduce: object) -> str:
    """`reduce` if it names a reduction; a ``ValueError`` listing them otherwise."""
    return one_of(reduce, REDUCTIONS, "reduce")


def one_of(value: object, choices: Any, name: str) -> str:
    """`value` if it is one of the strings `choices` (the keys, for a dict); a ``ValueError``
    naming the argument `name` and listing them otherwise."""
    if isinstance(value, str) and value in choices:
        return value
    valid = ", ".join(repr(c) for c in choices)
    msg = f"{name} must be one of {valid}; got {value!r}"
    raise ValueError(msg)


_PROMISES = {
    (unique, ordered): ScatterPromises(unique, ordered)
    for unique in (False, True)
    for ordered in (False, True)
}


def check_deterministic(deterministic: object) -> bool:
    """`deterministic` as a bool; a ``TypeError`` naming it for anything else."""
    if not isinstance(deterministic, bool | np.bool_):
        msg = f"deterministic must be True or False; got {deterministic!r}"
        raise TypeError(msg)
    return bool(deterministic)


def check_promises(unique_indices: object, indices_are_sorted: object) -> ScatterPromises:
    """The promises as one (shared) object; a ``TypeError`` naming the argument for anything
    but a bool (a truthy string or array would make a promise the caller did not mean)."""
    given = {"unique_indices": unique_indices, "indices_are_sorted": indices_are_sorted}
    for name, value in given.items():
        if not isinstance(value, bool | np.bool_):
            msg = f"{name} must be True or False; got {value!r}"
            raise TypeError(msg)
    return _PROMISES[bool(unique_indices), bool(indices_are_sorted)]


#: The segment reductions, by the name in ``segment_<name>``.
SEGMENT_REDUCTIONS = ("sum", "mean", "max", "min", "prod")


#: What ``segment_csr`` reduces by: the segment reductions and the toolkit's.
CSR_REDUCTIONS = (
    *SEGMENT_REDUCTIONS, "logsumexp", "argmax", "argmin", "var", "std", "softmax", "log_softmax",
)  # fmt: skip


#: The toolkit's reductions in ``segment_csr``, by the dtype rule of the function they are:
#: the segment reduction whose rule it is, and whether only real floating data is taken.
_CSR_DTYPES = {
    **{r: ("max", True) for r in ("logsumexp", "var", "std", "softmax", "log_softmax")},
    "argmax": ("max", False), "argmin": ("min", False),
}  # fmt: skip


#: The scatter reduction behind each segment reduction (the mean is a sum over a count), and
#: behind ``"sqrt_n"``, a sum over its count's square root: no public reduction, TensorFlow's
#: ``unsorted_segment_sqrt_n``'s one core call (floating data, ``_api.segment_reduce``).
SEGMENT_SCATTERS = {
    "sum": "add", "mean": "add", "max": "max", "min": "min", "prod": "multiply", "sqrt_n": "add",
}  # fmt: skip


_CSR_POLICIES = {"error": "error", "ERROR": "error", "unchecked": "unchecked"}


# -- num_segments ---------------------------------------------------------------------------


def _num_segments_argument(value: object) -> int | None:
    """`num_segments` as a Python int >= 0 (a symbolic size as it is), or None (read from the
    ids)."""
    if value is None:
        return None
    if symbolic_size(value):  # a dynamic size under torch.export: kept, as the shapes are
        return value  # type: ignore[return-value]
    if not isinstance(value, bool):
        try:
            number = operator.index(value)  # type: ignore[arg-type]
        except TypeError:
            number = None
        if number is not None:
            if number < 0:
                msg = f"num_segments must be an int >= 0; got {number}"
                raise ValueError(msg)
            return int(number)
    msg = (
        "num_segments must be an int >= 0 (known when the function is called: under jax.jit, "
        f"a Python int, not a traced value), or None; got {value!r}"
    )
    raise TypeError(msg)


def check_num_segments(
    count: int, xp: Any, engine: Engine, data: Any, id_rank: int, name: str = "num_segments"
) -> None:
    """A ValueError for a `num_segments` (given, as the Python int `count`) that no array of
    the data's device can hold: more than the widest integer of that device (int64; int32 on
    JAX without x64), or more result rows than ``2**63 - 1`` bytes hold (NumPy's and
    PyTorch's limit on an array's size), counting each row at least 8 bytes (the count of
    the mean, the sorts' positions)."""
    if symbolic_size(count):  # torch.export's dynamic size: an array of it exists already
        return
    info = xp.iinfo(engine.wide_index_dtype(data))
    largest = int(info.max)
    inner = tuple(data.shape[id_rank:])
    row = max(math.prod(inner) * _itemsize(data.dtype), 8)
    by_bytes = (2**63 - 1) // row
    if count <= min(largest, by_bytes):
        return
    if largest <= by_bytes:
        why = f"the largest {dtype_name(info.dtype)}, the widest integer of the data's device"
    else:
        why = (
            f"the most segments that 2**63 - 1 bytes hold at {row} bytes each: rows of "
            f"data.shape[{id_rank}:] = {inner} in {dtype_name(data.dtype)}, 8 bytes at least"
        )
    msg = f"{name} must be in [0, {min(largest, by_bytes)}] ({why}); got {count}"
    raise ValueError(msg)


def _itemsize(dtype: Any) -> int:
    """The bytes of one element of `dtype` (8 where no library says)."""
    size = getattr(dtype, "itemsize", None)
    if isinstance(size, int):
        return size
    try:
        return int(np.dtype(dtype_name(dtype)).itemsize)
    except TypeError:
        return 8


def _read_num_segments(xp: Any, engine: Engine, ids: Any, access: Any, data: Any) -> int:
    """`num_segments=None`: max(segment_ids) + 1, read now (0 for no ids), and checked as a
    given one is (:func:`check_num_segments`), since an array of that many rows beside
    `data` must exist too."""
    if access != "now":
        msg = (
            "num_segments=None reads max(segment_ids) + 1, which cannot be read when the "
            "function is called here (under jax.jit or another JAX transformation, on Dask, on "
            "symbolic ndonnx arrays, under torch.func.vmap); pass num_segments=N, a Python int"
        )
        raise ValueError(msg)
    if not math.prod(ids.shape):
        return 0
    wide = to_wide(xp, ids, engine.wide_index_dtype(ids), None, False)
    count = max(0, engine.value_range(wide)[1] + 1)
    read = "num_segments=None, read as max(segment_ids) + 1,"
    check_num_segments(count, xp, engine, data, len(ids.shape), read)
    return count
