"""Helpers shared by the compat modules: the plans whose negative indices count from the end,
the compat names in error messages, and the zeros a ``scatter_nd(indices, updates, shape)``
fills."""

from __future__ import annotations

import operator
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import array_api_compat as aac
import numpy as np

from .._api import segment_reduce
from .._arrays import dtype_kind
from .._operands import namespace_name, namespace_of, python_values, shown
from .._plan import GatherPlan, plan_gather, plan_gather_nd
from .._routes import Operation

# -- negative indices counting from the end (ONNX's Gather, GatherND, ScatterND; MindSpore's
# gather on CPU; PyTorch's index_put): the core's plans with [-n, n) as their valid range, so
# the core checks each value once, as written, and counts a negative one from the end.


def _from_end(plan: GatherPlan) -> GatherPlan:
    return replace(plan, allow_negative=True, report=replace(plan.report, allow_negative=True))


def plan_gather_from_end(
    shape: tuple[int, ...], index_shape: tuple[int, ...], axis: int | None, batch_dims: int
) -> GatherPlan:
    """:func:`~portagather._plan.plan_gather`'s plan, negative values counting from the end."""
    return _from_end(plan_gather(shape, index_shape, axis, batch_dims))


def plan_gather_nd_from_end(
    shape: tuple[int, ...], index_shape: tuple[int, ...], batch_dims: int
) -> GatherPlan:
    """:func:`~portagather._plan.plan_gather_nd`'s plan, negative components counting from
    the end."""
    return _from_end(plan_gather_nd(shape, index_shape, batch_dims))


GATHER_FROM_END = Operation(("params", "indices"), plan_gather_from_end)
GATHER_ND_FROM_END = Operation(("params", "indices"), plan_gather_nd_from_end)
SCATTER_ND_FROM_END = Operation(("params", "indices", "updates"), plan_gather_nd_from_end)


def as_int(value: Any) -> Any:
    """A NumPy integer means what the Python int means; other values go to the core as given
    (which names them in its error)."""
    if isinstance(value, bool):
        return value
    try:
        return operator.index(value)
    except TypeError:
        return value


def floating_array(data: Any) -> bool:
    """Whether the array `data` has a floating or complex dtype (False for a namespace the
    core refuses, whose own checks then name it), kept per array type and dtype."""
    key: tuple[type, Any] | None = (type(data), data.dtype)
    try:
        found = _FLOATING.get(key)  # type: ignore[arg-type]
    except TypeError:  # a dtype that cannot be hashed
        found, key = None, None
    if found is None:
        try:
            kind = dtype_kind(namespace_of(data), data.dtype)
        except (AttributeError, TypeError, ValueError):  # a namespace the core refuses
            kind = None
        found = kind in ("real floating", "complex floating")
        if key is not None:
            _FLOATING[key] = found
    return found


#: Whether an array type's dtype is floating, per (array type, dtype). Why: the front ends
#: whose core call depends on it (TensorFlow's means, PyTorch's ``segment_reduce``) ask on
#: every call, and ``dtype_kind`` asks the namespace's ``isdtype``, several lookups through
#: array_api_compat (benchmarks/RESULTS.md, "The memo tables of the checks"). Bound: the
#: array types and dtypes a program passes, a few dozen.
_FLOATING: dict[tuple[type, Any], bool] = {}


# -- the scatters' helpers ------------------------------------------------------------------

#: Exceptions whose message is rewritten with the compat signature's argument names; any
#: other type (a subclass with its own fields, a JAX or Dask error) goes through unchanged.
_RENAMED_TYPES = (TypeError, ValueError, IndexError)


def rename_text(text: str, renames: Mapping[str, str]) -> str:
    """`text` with each core argument name (a whole word, not after a ``.``) replaced.

    Keys may be phrases (``"params of shape"``); the longest key matching at a place wins.
    """
    if not renames:
        return text
    keys = sorted(renames, key=len, reverse=True)
    pattern = r"(?<![\w.])(" + "|".join(re.escape(k) for k in keys) + r")(?![\w])"
    return re.sub(pattern, lambda m: renames[m.group(1)], text)


#: The words of the core's message where it cannot check index values (under JAX tracing
#: without ``checkify``, ``torch.compile(fullgraph=True)``, ``torch.func.vmap``, symbolic
#: ndonnx arrays): the policy it cannot enforce, and the ways out it names.
_CORE_POLICY = 'bad_indices="error"'
_CORE_WAYS_OUT = 'pass bad_indices="ignore", "clip", "wrap" or "unchecked"'


def ways_out(front_end: str, core: str, policy: str | None = None) -> dict[str, str]:
    """Renames for the core's message where index values cannot be checked, so that it
    names only ways out the front end has: `policy`, the front end's own policy argument
    (TensorFlow's ``bad_indices_policy``), or else the core function `core` with a policy.
    The message keeps its other ways out (``checkify`` under JAX). Made once per front end
    and kept (do not change the dictionary): in a plain dictionary, which torch.compile's
    Dynamo traces without the warning a ``functools`` cache draws."""
    key = (front_end, core, policy)
    ways = _WAYS.get(key)
    if ways is None:
        ways = _WAYS[key] = _ways_out(front_end, core, policy)
    return ways


#: The ways out of each front end's renamed errors, per (front end, core function, policy
#: argument). Why: built from names, the same for every call, and a share of a small call
#: when made per call. Bound: one per front end.
_WAYS: dict[tuple[str, str, str | None], dict[str, str]] = {}


def _ways_out(front_end: str, core: str, policy: str | None) -> dict[str, str]:
    if policy is not None:
        return {
            _CORE_POLICY: f'the index check of {front_end} ({policy}="" or "ERROR")',
            _CORE_WAYS_OUT: f'pass {policy}="IGNORE"',
        }
    return {
        _CORE_POLICY: f"the index check of {front_end}",
        _CORE_WAYS_OUT: (
            f'call portagather.{core} with bad_indices="ignore", "clip", "wrap" or "unchecked"'
            f" ({front_end} has no bad_indices)"
        ),
    }


class renamed:  # (lower case: used as a context manager, as contextlib's functions are)
    """Re-raise the core's eager argument and index errors with the compat names.

    The core names its arguments as its own signatures do (``params``, ``x``, ``index``,
    ``src``, ...); a compat function wraps its core call in this so that a message names the
    argument as the imitated signature spells it. Where the core cannot check index values
    (its message names its ``bad_indices`` ways out), `ways` (:func:`ways_out`) rewrites
    those instead. Errors raised later (a Dask graph when it runs, ``checkify`` under JAX)
    keep the core's names. A class, not a ``contextmanager`` generator: every compat call
    enters one, and a generator's frames cost a small call more (benchmarks/RESULTS.md,
    "Compat front ends").
    """

    __slots__ = ("renames", "ways")

    def __init__(self, renames: Mapping[str, str], ways: Mapping[str, str] | None = None) -> None:
        self.renames, self.ways = renames, ways

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, err: BaseException | None, traceback: Any) -> None:
        if kind not in _RENAMED_TYPES or err is None or len(err.args) != 1:
            return  # no error, or one that is not renamed: it goes on as it is
        text = err.args[0]
        if not isinstance(text, str):
            return
        ways = self.ways
        if ways is not None and _CORE_WAYS_OUT in text:
            new = rename_text(text, ways)
        else:
            new = rename_text(text, self.renames)
        if new != text:
            raise kind(new).with_traceback(traceback) from None


def output_shape(shape: Any, name: str = "shape") -> tuple[int, ...]:
    """`shape` (a sequence of ints, or a 1-d integer array) as a tuple of ints >= 0."""
    values = shape.tolist() if hasattr(shape, "tolist") else shape
    msg = f"{name} must be a sequence of ints; got {shape!r}"
    if not isinstance(values, Iterable) or isinstance(values, str | bytes):
        raise TypeError(msg)
    sizes = []
    for value in values:
        if isinstance(value, bool):
            raise TypeError(msg)
        try:
            sizes.append(operator.index(value))
        except TypeError:
            raise TypeError(msg) from None
    if any(s < 0 for s in sizes):
        msg = f"{name} must have no negative sizes; got {tuple(sizes)}"
        raise ValueError(msg)
    return tuple(sizes)


def zeros_of(shape: Any, updates: Any, indices: Any, shape_name: str = "shape") -> tuple[Any, Any]:
    """``(zeros, updates)``: zeros of `shape` with the namespace, dtype and device of
    `updates` (of `indices`, or NumPy, where `updates` is no array: then Python values take
    that namespace's default dtype), and `updates` as an array of that namespace."""
    sizes = output_shape(shape, shape_name)
    if aac.is_array_api_obj(updates) and not isinstance(updates, np.generic):
        xp = aac.array_namespace(updates)
    else:
        values = python_values(updates, "updates", text=True)  # its kind, checked first
        if values.dtype == object:  # Python ints past int64: no dtype to make zeros of
            msg = f"updates must hold values of one dtype; got {updates!r}"
            raise ValueError(msg)
        if aac.is_array_api_obj(indices) and not isinstance(indices, np.generic):
            xp = aac.array_namespace(indices)
            try:
                updates = xp.asarray(updates, device=aac.device(indices))
            except (TypeError, ValueError) as err:  # strings, which PyTorch and JAX hold not
                library = namespace_name(indices)
                msg = (
                    f"updates must be an array, or values that the namespace of indices "
                    f"({library}) holds; got {shown(updates)} ({err})"
                )
                raise TypeError(msg) from None
        else:
            xp = aac.array_namespace(np.empty(0))
            updates = values
    zeros = xp.zeros(sizes, dtype=updates.dtype, device=aac.device(updates))
    return zeros, updates


# -- the segment reductions' helpers ----------------------------------------------------------


def unsorted_segment(
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    reduce: str,
    function: str,
    renames: Mapping[str, str] | None = None,
    with_count: bool = False,
    floating: bool = False,
    deterministic: bool = False,
) -> Any:
    """TensorFlow's and MindSpore's ``unsorted_segment_<reduce>``: a negative id drops its
    row; an id past the end is an error where the values can be checked (eagerly, in a
    Dask graph) and drops its row under JAX tracing (TensorFlow's ``""`` default, its CPU
    and GPU behaviour); an empty segment's max (min) is the dtype's lowest (highest)
    finite value, and so is a segment of -inf (inf) only, as both libraries start from it
    (the core's, with `drop_negative`).

    With `with_count`, ``(result, count)``: the rows each segment received. With
    `floating`, integer data is refused (TensorFlow's ``unsorted_segment_sqrt_n``). With
    `deterministic`, a floating sum, mean or product in the tree's one order.
    """
    with renamed(renames or _NO_RENAMES):
        return segment_reduce(
            data, segment_ids, num_segments, reduce, bad_indices="", drop_negative=True,
            with_count=with_count, function=function, floating=floating,
            deterministic=deterministic,
        )  # fmt: skip


#: No argument to rename (a front end whose names are the core's): never written.
_NO_RENAMES: dict[str, str] = {}


def torch_deterministic() -> bool:
    """Whether PyTorch's deterministic algorithms are on (``torch.use_deterministic_algorithms
    (True)``): the PyTorch front ends then add floats in ``deterministic=True``'s one order,
    where PyTorch's own op would raise or differ between runs. Read only where torch is
    imported already (a front end on NumPy arrays imports nothing)."""
    torch = sys.modules.get("torch")
    return torch is not None and bool(torch.are_deterministic_algorithms_enabled())


def mindspore_deterministic() -> bool:
    """Whether MindSpore's deterministic switch is on (``mindspore.set_context(deterministic=
    "ON")``): the MindSpore front ends then add floats in ``deterministic=True``'s one order.
    Read only where mindspore is imported already (a front end on NumPy arrays imports
    nothing)."""
    mindspore = sys.modules.get("mindspore")
    return mindspore is not None and bool(mindspore.get_context("deterministic") == "ON")
