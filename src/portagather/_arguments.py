"""Every call's arguments, checked in one order before any backend sees them.

Each public function (and each compat front end, through them) passes its arguments here
first. The checks run in one order on every backend, so that a call with two faults reports
the same one everywhere (docs/contract.md, "Errors"):

1. the options: ``axis``, ``dim`` and ``batch_dims`` are ints (:func:`int_argument`, as the
   public functions read them), ``bad_indices`` names a policy and ``reduce`` a reduction;
2. the kinds: the data, the index, the updates and ``fill_value`` are arrays or Python
   values of the right kind (a scalar, or rectangular nested lists and tuples of them; no
   ``None``, dict, string index or other object), and the arrays are of one namespace;
3. ranks and shapes: the plan of the gather (``_plan``), the updates' shape, a 0-d
   ``fill_value``;
4. dtypes: an integer index, a reduction the data's dtype has, updates that cast safely;
5. values: ``fill_value`` and Python updates held exactly by the data's dtype, and Python
   index values that no integer dtype of the data's device holds, under the policy.

The values of index arrays are the policy's, afterwards (``_indices``). Python values become
arrays of the data's namespace only once all five have passed, on the data's device and in
a dtype that device holds: no backend ever sees an argument portagather has not checked.
"""

from __future__ import annotations

import operator
from typing import Any

import array_api_compat as aac
import numpy as np

from ._arrays import (
    check_fill_value,
    check_index_dtype,
    device_for_new,
    dtype_name,
    fill_value_kind,
    fill_value_shape,
    static_shape,
)
from ._errors import raise_first_bad
from ._indices import normalize_policy, resolve_default
from ._plan import GatherPlan
from ._python_values import (
    is_array,
    python_values,
    shown,
)
from ._scatter import ScatterPromises, check_promises, check_reduce, check_reduce_dtype
from ._updates import Updates
from .engines import engine_for

# -- 1. the options -------------------------------------------------------------------------


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


# -- the two entry points -------------------------------------------------------------------


def gather_arguments(
    data: Any,
    indices: Any,
    names: tuple[str, str],
    planner: Any,
    arguments: tuple[Any, ...],
    bad_indices: object,
    fill_value: object,
) -> tuple[Any, Any, Any, GatherPlan, str, Any]:
    """``(xp, data, indices, plan, policy, fill)`` of a gather, every argument checked.

    `fill` is what :func:`~portagather._arrays.check_fill_value` makes of `fill_value`.
    """
    policy = normalize_policy(bad_indices)
    data_name, index_name = names
    default_fill = type(fill_value) is int and fill_value == 0
    if default_fill and type(data) is type(indices):  # the common call, in the same order
        xp = _NAMESPACES.get(type(data))
        if xp is not None:
            plan = plan_for(planner, data, indices, data_name, index_name, arguments)
            check_index_dtype(xp, indices, index_name)
            return xp, data, indices, plan, policy, 0
    pair = _Pair(data, indices, data_name, index_name)
    if not default_fill:
        fill_value_kind(fill_value)
    plan = plan_for(planner, pair.data, pair.indices, data_name, index_name, arguments)
    if not default_fill:
        fill_value_shape(fill_value)
    xp = pair.xp
    data = pair.data_array()
    pair.check_index_dtype()
    fill = 0 if default_fill else check_fill_value(xp, fill_value, data.dtype)
    indices = pair.index_array(data, plan, policy)
    return xp, data, indices, plan, policy, fill


def scatter_arguments(
    data: Any,
    indices: Any,
    updates: Any,
    names: tuple[str, str, str],
    planner: Any,
    arguments: tuple[Any, ...],
    reduce: object,
    bad_indices: object,
    updates_fit: str,
    promises: tuple[object, object] = (False, False),
) -> tuple[Any, Any, Any, Any, GatherPlan, str, str, ScatterPromises]:
    """``(xp, data, indices, updates, plan, policy, reduction, promises)`` of a scatter, every
    argument checked: `updates` as an array of the data's namespace, dtype and of the gather's
    result shape; `reduction` is what the engine runs (``"max"`` for ``"add"`` on bool: OR);
    `promises` the caller's ``(unique_indices, indices_are_sorted)``.

    `updates_fit` says which updates shapes fit: ``"exact"`` (``scatter_nd``), ``"block"``
    (``scatter_d``: at least the index's shape on every axis; its leading block is used, as
    in ``torch.scatter``) or ``"broadcast"`` (``put_along_axis``).
    """
    data_name, index_name, update_name = names
    policy = normalize_policy(bad_indices)
    reduce = check_reduce(reduce)
    promised = check_promises(*promises)
    pair = _Pair(data, indices, data_name, index_name)
    given = Updates(pair.xp, pair.data_given, pair.data_name, updates, update_name)
    plan = plan_for(planner, pair.data, pair.indices, data_name, index_name, arguments)
    given.check_shape(plan.out_shape, updates_fit)
    data = pair.data_array()
    pair.check_index_dtype()
    reduction = check_reduce_dtype(pair.xp, reduce, data.dtype, data_name)
    given.check_dtype(data.dtype)
    updates = given.array(data, plan.out_shape, updates_fit)
    indices = pair.index_array(data, plan, policy)
    return pair.xp, data, indices, updates, plan, policy, reduction, promised


# -- 2. the kinds ---------------------------------------------------------------------------

#: The namespace of each array type seen, for the common call with two arrays of one type.
_NAMESPACES: dict[type, Any] = {}


def _namespace_name(x: Any) -> str:
    module = type(x).__module__.split(".")[0]
    return {"jaxlib": "jax", "array_api_strict": "array_api_strict"}.get(module, module)


class _Pair:
    """The data and the index of one call, as arrays of one namespace or as checked Python
    values (kept as NumPy arrays: their shapes and dtypes are checked like an array's, and
    they become arrays of the namespace once every check has passed)."""

    __slots__ = ("data", "data_given", "data_name", "from_values", "index_name", "indices", "xp")

    def __init__(self, data: Any, indices: Any, data_name: str, index_name: str) -> None:
        self.data_name, self.index_name = data_name, index_name
        self.data, self.indices, self.data_given = data, indices, data
        #: Which of the two are Python values: the data, the index.
        self.from_values = (False, False)
        kind = type(data)
        if kind is type(indices):  # the common path: one dictionary lookup
            xp = _NAMESPACES.get(kind)
            if xp is not None:
                self.xp = xp
                return
        self.xp = self._sort(data, indices)

    def _sort(self, data: Any, indices: Any) -> Any:
        data_name, index_name = self.data_name, self.index_name
        if isinstance(indices, np.ma.MaskedArray):
            msg = (
                f"{index_name} must not be a NumPy masked array: a gather reads every value, "
                f"the masked ones too; pass {index_name}.filled(value) with a valid or a bad "
                "index for the masked entries"
            )
            raise TypeError(msg)
        data_is_array, index_is_array = is_array(data), is_array(indices)
        if data_is_array and index_is_array:
            if type(data) is type(indices):
                xp = aac.array_namespace(data)
                if not aac.is_array_api_strict_namespace(xp):  # its namespace follows flags
                    _NAMESPACES[type(data)] = xp
                return xp
            data_ns, index_ns = aac.array_namespace(data), aac.array_namespace(indices)
            if data_ns is not index_ns:
                msg = (
                    f"{data_name} and {index_name} must be arrays of one namespace; got a "
                    f"{_namespace_name(data)} array for {data_name} and a "
                    f"{_namespace_name(indices)} array for {index_name}"
                )
                raise TypeError(msg)
            return data_ns
        if not data_is_array:
            self.data = python_values(data, data_name, text=True)
        if not index_is_array:
            values = python_values(indices, index_name, text=False)
            if values.size == 0 and values.dtype.kind == "f":
                values = values.astype(np.int64)  # [] is float64 in NumPy: no indices, not floats
            self.indices = values
        self.from_values = (not data_is_array, not index_is_array)
        if data_is_array:
            return aac.array_namespace(data)
        if index_is_array:
            return aac.array_namespace(indices)
        return aac.array_namespace(self.data)  # NumPy's, for two sets of Python values

    # -- 4. dtypes

    def check_index_dtype(self) -> None:
        if not self.from_values[1]:
            check_index_dtype(self.xp, self.indices, self.index_name)
        elif self.indices.dtype != object:  # object: Python ints past every NumPy integer
            check_index_dtype(np, self.indices, self.index_name)

    # -- 5. values, and the arrays

    def data_array(self) -> Any:
        """The data as an array of the namespace, kept as :attr:`data` (Python values: on
        the index's device, in the namespace's own default dtypes, as its ``asarray`` makes
        them; NumPy's where neither argument is an array)."""
        if self.from_values[0]:
            if self.data.dtype == object:  # Python ints past every NumPy integer
                msg = f"{self.data_name} holds integers that no integer dtype holds"
                raise ValueError(msg + f"; got {shown(self.data_given)}")
            if not self.from_values[1] and not aac.is_numpy_namespace(self.xp):
                device = device_for_new(self.indices)
                try:
                    self.data = self.xp.asarray(self.data_given, device=device)
                except (TypeError, ValueError, OverflowError) as err:
                    msg = (
                        f"{self.data_name} must be an array, or values that the "
                        f"{_namespace_name(self.indices)} namespace holds; got "
                        f"{shown(self.data_given)} ({err})"
                    )
                    raise TypeError(msg) from None
            self.from_values = (False, self.from_values[1])
        return self.data

    def index_array(self, data: Any, plan: GatherPlan, policy: str) -> Any:
        """The index as an array of the namespace beside `data` (Python values: in the widest
        signed integer dtype of data's device, each value it cannot hold dealt with by the
        policy first: :func:`_fitted_index`)."""
        if not self.from_values[1]:
            return self.indices
        values = self.indices
        xp = self.xp
        device = device_for_new(data)
        engine = engine_for(xp)
        held = _numpy_dtype(engine.wide_index_dtype(data))
        if values.size and values.dtype != held:
            info = np.iinfo(held)
            if int(values.min()) < int(info.min) or int(values.max()) > int(info.max):
                values = _fitted_index(xp, engine, values, held, device, plan, policy)
        return xp.asarray(values.astype(held, copy=False), device=device)


def _numpy_dtype(dtype: Any) -> Any:
    """NumPy's dtype of the name of a namespace's integer `dtype`."""
    try:
        return np.dtype(dtype)  # NumPy's, JAX's and Dask's dtypes (and NumPy's scalar types)
    except TypeError:
        return np.dtype(dtype_name(dtype))


# -- 3. shapes ------------------------------------------------------------------------------

#: Plans by call signature (the planner's name, both shapes as the arrays give them, the
#: integer arguments) where those shapes are static: one dictionary lookup for a call in a
#: loop. Names, not the functions, as keys: torch.compile traces a dictionary of strings.
_PLANS: dict[tuple[Any, ...], GatherPlan] = {}


def plan_for(
    planner: Any,
    data: Any,
    indices: Any,
    data_name: str,
    index_name: str,
    arguments: tuple[Any, ...],
) -> GatherPlan:
    """The plan of the call, from the shapes (checked static) and the integer arguments."""
    key: tuple[Any, ...] = (planner.__name__, data.shape, indices.shape, arguments)
    try:
        plan = _PLANS.get(key)
    except TypeError:  # a size that cannot be hashed (symbolic)
        plan, key = None, ()
    if plan is None:
        shapes = static_shape(data, data_name), static_shape(indices, index_name)
        plan = planner(*shapes, *arguments)
        if key and shapes == key[1:3]:  # kept where the shapes were Python ints as given
            if len(_PLANS) >= 512:
                _PLANS.clear()
            _PLANS[key] = plan
    return plan


# -- 5. index values no integer dtype of the device holds -----------------------------------


def _fitted_index(
    xp: Any, engine: Any, values: Any, held: Any, device: Any, plan: GatherPlan, policy: str
) -> Any:
    """Python index values, some of which dtype `held` (the widest the data's device holds)
    cannot hold, as values it holds that the policy treats alike.

    Such a value is out of range for every array of that device (no axis is longer than its
    widest integer), so it is bad under every policy: ``"error"`` raises the IndexError of
    the first bad index now, naming the value as written (it is known, even under a trace);
    ``"wrap"`` takes its true remainder; ``"clip"`` puts it past the end (or, if negative,
    before the start), where the clamp takes it to the same edge; ``"ignore"`` and
    ``"unchecked"`` put it past the end. An index that reads nothing, or addresses an empty
    axis (which the pipeline reports), is put past the end too.
    """
    info = np.iinfo(held)
    low, high = int(info.min), int(info.max)
    values = np.asarray(values, dtype=object)  # exact Python ints from here on
    big = np.asarray((values < low) | (values > high), dtype=bool)
    if policy == "default":  # TensorFlow's: "error" where values are checked, else "ignore"
        probe = xp.asarray(np.zeros((), dtype=held), device=device)
        policy = resolve_default(policy, engine.index_access(probe))
    readable = not plan.reads_nothing and 0 not in plan.axis_sizes
    if readable and policy == "error":
        raise_first_bad(np, _bad(values, plan), values, plan.report)
    fitted = np.where(big, high, values)
    if readable and policy == "clip":
        fitted = np.where(big & np.asarray(values < 0, dtype=bool), low, fitted)
    elif readable and policy == "wrap":
        sizes = plan.axis_sizes
        if plan.vector:
            for j, n in enumerate(sizes):
                fitted[..., j] = np.where(big[..., j], values[..., j] % n, fitted[..., j])
        else:
            fitted = np.where(big, values % sizes[0], fitted)
    return fitted.astype(held)


def _bad(values: Any, plan: GatherPlan) -> Any:
    """Where the index (Python ints, as an object array) is bad: per index vector."""
    parts = [values[..., j] for j in range(values.shape[-1])] if plan.vector else [values]
    bad = np.zeros(parts[0].shape, dtype=bool)
    for part, n in zip(parts, plan.axis_sizes, strict=True):
        low = -n if plan.allow_negative else 0
        bad |= np.asarray((part < low) | (part >= n), dtype=bool)
    return bad


# -- for front ends that work on the arguments before the core -------------------------------


def arrays(data: Any, indices: Any, data_name: str, index_name: str) -> tuple[Any, Any, Any, bool]:
    """The kinds step alone: ``(xp, data, indices, index_given_as_values)``, the data as an
    array of `xp` and the index as an array of `xp` or, where given as Python values, as a
    NumPy array of them (exact ints), for a front end that works on the values before it
    hands them to the core as Python values again (``tolist()``)."""
    pair = _Pair(data, indices, data_name, index_name)
    data = pair.data_array()
    return pair.xp, data, pair.indices, pair.from_values[1]


def as_arrays(data: Any, indices: Any, data_name: str, index_name: str) -> tuple[Any, Any, Any]:
    """The kinds step, both as arrays of one namespace ``(xp, data, indices)``, for a front
    end that applies its own index rule next: an index given as Python values must be
    integers (the gathers' dtype check: ``[0.0, 1.0]`` is a TypeError, as a float array is)
    and becomes an array of the widest signed integer the data's device holds. A value that
    dtype does not hold is out of range for every array of the device; it is clipped into the
    dtype, where it stays out of range (and keeps its sign), so that the front end's rule
    treats it alike on every device."""
    pair = _Pair(data, indices, data_name, index_name)
    data = pair.data_array()
    xp, indices, as_values = pair.xp, pair.indices, pair.from_values[1]
    if not as_values:
        return xp, data, indices
    pair.check_index_dtype()
    held = _numpy_dtype(engine_for(xp).wide_index_dtype(data))
    info = np.iinfo(held)
    if indices.size and (int(indices.min()) < int(info.min) or int(indices.max()) > int(info.max)):
        indices = np.clip(np.asarray(indices, dtype=object), int(info.min), int(info.max))
    return xp, data, xp.asarray(indices.astype(held), device=device_for_new(data))
