"""The options of a call, checked first: the ints, names and flags a public function takes
beside its arrays (``axis``, ``reduce``, the promises, ``deterministic``). ``num_segments``,
the bound of the segment ids, is checked with them (``_operands``)."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

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
