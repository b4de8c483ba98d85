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
from ._scatter import ScatterPromises, check_promises, check_reduce, check_reduce_dtype
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
    given = _Updates(pair.xp, pair.data_given, pair.data_name, updates, update_name)
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

#: Python and NumPy scalars that are numbers (bool included: its dtype is checked later).
_NUMBERS = (bool, int, float, complex, np.bool_, np.number)
#: Text scalars, which a data array or updates may hold (NumPy's and ndonnx's strings).
_TEXT = (str, bytes, np.str_, np.bytes_)
_NESTED = (list, tuple, range)

_INDEX_KIND = "an array, an int or a rectangular nested list of ints"
_VALUES_KIND = "an array, a scalar or a rectangular nested list of scalars"

#: The namespace of each array type seen, for the common call with two arrays of one type.
_NAMESPACES: dict[type, Any] = {}


def _namespace_name(x: Any) -> str:
    module = type(x).__module__.split(".")[0]
    return {"jaxlib": "jax", "array_api_strict": "array_api_strict"}.get(module, module)


def _shown(value: Any) -> str:
    """``repr(value)``, shortened where it is long (a large list)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:72] + " ... " + text[-3:]


def _is_array(x: Any) -> bool:
    """An array of some namespace; a NumPy scalar is a Python value here."""
    return not isinstance(x, np.generic) and aac.is_array_api_obj(x)


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
        data_is_array, index_is_array = _is_array(data), _is_array(indices)
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
                raise ValueError(msg + f"; got {_shown(self.data_given)}")
            if not self.from_values[1] and not aac.is_numpy_namespace(self.xp):
                device = device_for_new(self.indices)
                try:
                    self.data = self.xp.asarray(self.data_given, device=device)
                except (TypeError, ValueError, OverflowError) as err:
                    msg = (
                        f"{self.data_name} must be an array, or values that the "
                        f"{_namespace_name(self.indices)} namespace holds; got "
                        f"{_shown(self.data_given)} ({err})"
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


def python_values(value: Any, name: str, *, text: bool) -> Any:
    """`value`, given where an array is expected, as a NumPy array, or a TypeError naming
    `name` and what it got (a ValueError for ragged nested lists).

    Accepted: a Python or NumPy number (and, where `text`, a string), rectangular nested
    lists and tuples of them, and objects NumPy converts to numbers (``__array__``). Python
    ints past int64 are kept as ints (an object array): whether a dtype holds them is a
    question about values, asked later.
    """
    kind = _VALUES_KIND if text else _INDEX_KIND
    if isinstance(value, np.generic) and not text:
        value = value.item()  # a NumPy integer index means the Python int it holds
    if isinstance(value, _NUMBERS) or (text and isinstance(value, _TEXT)):
        return np.asarray(value)
    if isinstance(value, _NESTED):
        try:
            array = np.asarray(value)
        except ValueError:
            odd = _odd_leaf(value, text)
            if not odd:
                scalars = "scalars" if text else "ints"
                msg = (
                    f"{name} must be an array or a rectangular nested list of {scalars}; "
                    f"got {_shown(value)}"
                )
                raise ValueError(msg) from None
        except Exception:
            odd = _odd_leaf(value, text) or [value]
        else:
            odd = _odd_leaf(value, text) if array.dtype.kind in "OUS" else []
        if odd:
            msg = f"{name} must be {kind}; got {_shown(value)}, which holds {_shown(odd[0])}"
            raise TypeError(msg)
        if array.dtype.kind in "fO":
            return _exact(value, array)
        return array
    if not aac.is_array_api_obj(value) and hasattr(value, "__array__"):
        array = np.asarray(value)
        if array.dtype.kind in "biufc" or (text and array.dtype.kind in "US"):
            return array
    msg = f"{name} must be {kind}; got {_shown(value)}"
    raise TypeError(msg)


def _leaves(nested: Any) -> Any:
    if isinstance(nested, _NESTED):
        for item in nested:
            yield from _leaves(item)
    else:
        yield nested


def _odd_leaf(nested: Any, text: bool) -> list[Any]:
    """``[leaf]``: the first leaf that is no scalar of the accepted kinds; ``[]`` if none."""
    for leaf in _leaves(nested):
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind in ("biufcUS" if text else "biufc"):
            continue
        if not (isinstance(leaf, _NUMBERS) or (text and isinstance(leaf, _TEXT))):
            return [leaf]
    return []


def _exact(nested: Any, array: Any) -> Any:
    """Integers that NumPy made floats or objects (past int64: ``[1, 2**64 - 1]`` is float64,
    ``[2**64]`` object) as an object array of the Python ints, exact; other numbers as they
    are (an object array of mixed floats and huge ints: as floats)."""
    leaves = list(_leaves(nested))
    if leaves and all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in leaves):
        exact = np.empty(len(leaves), dtype=object)
        exact[:] = [int(v) for v in leaves]
        return exact.reshape(array.shape)
    if array.dtype == object:
        return array.astype(complex if any(isinstance(v, complex) for v in leaves) else float)
    return array


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


# -- the updates of a scatter ---------------------------------------------------------------


class _Updates:
    """The updates of a scatter: an array of the data's namespace, or checked Python values."""

    __slots__ = ("data_name", "given", "name", "values", "xp")

    def __init__(self, xp: Any, data: Any, data_name: str, updates: Any, name: str) -> None:
        self.xp, self.name, self.data_name = xp, name, data_name
        self.given = updates
        if _is_array(updates):
            # `data` as the caller gave it: data given as Python values takes the index's
            # library, whose arrays the updates must then be (not NumPy's, which holds them).
            if type(updates) is not type(data) and aac.array_namespace(updates) is not xp:
                library = (
                    f"{type(data).__module__}.{type(data).__name__}"
                    if _is_array(data)
                    else f"the index's library, {getattr(xp, '__name__', xp)}"
                )
                msg = (
                    f"{name} must be an array of the same library as {data_name}; got "
                    f"{type(updates).__module__}.{type(updates).__name__} and {library}"
                )
                raise TypeError(msg)
            self.values: Any = None
        else:
            self.values = python_values(updates, name, text=True)

    @property
    def shape(self) -> tuple[int, ...]:
        source = self.given if self.values is None else self.values
        return tuple(source.shape)

    def check_shape(self, shape: tuple[int, ...], mode: str) -> None:
        given = self.shape
        if mode == "block":
            fits = len(given) == len(shape) and all(
                g >= s for g, s in zip(given, shape, strict=True)
            )
            wanted = f"at least {shape} on every axis (index.shape)"
        elif mode == "broadcast":
            fits = len(given) <= len(shape) and all(
                g in (1, s) for g, s in zip(given[::-1], shape[::-1], strict=False)
            )
            wanted = f"broadcastable to {shape}"
        else:
            fits = given == shape
            wanted = f"{shape}"
        if not fits:
            msg = f"{self.name}.shape must be {wanted}; got {given}"
            raise ValueError(msg)

    def check_dtype(self, dtype: Any) -> None:
        if self.values is not None:
            return
        xp, updates = self.xp, self.given
        if updates.dtype != dtype and not _casts_safely(xp, updates.dtype, dtype):
            msg = (
                f"{self.name} must have a dtype that casts safely to {self.data_name}.dtype = "
                f"{dtype_name(dtype)}; got {dtype_name(updates.dtype)}"
            )
            raise TypeError(msg)

    def array(self, data: Any, shape: tuple[int, ...], mode: str) -> Any:
        """The updates as an array of data's namespace and dtype, of the gather's result
        `shape` (Python values checked to be held exactly by data's dtype first)."""
        xp = self.xp
        if self.values is None:
            updates = self.given
        else:
            _check_python_values(self.values, data.dtype, self.name, self.data_name, self.given)
            values = self.values
            if values.dtype == object:  # huge ints into a floating dtype: as Python floats
                values = values.astype(float)
            try:
                updates = xp.asarray(values, dtype=data.dtype, device=device_for_new(data))
            except (TypeError, ValueError, OverflowError) as err:
                wanted = dtype_name(data.dtype)
                msg = (
                    f"{self.name} must be values that {self.data_name}.dtype = {wanted} holds "
                    f"exactly, or an array; got {_shown(self.given)} ({err})"
                )
                raise TypeError(msg) from None
        if updates.dtype != data.dtype:
            updates = xp.astype(updates, data.dtype)
        if tuple(updates.shape) != shape:
            if mode == "block":
                updates = updates[tuple(slice(0, s) for s in shape)]
            else:
                updates = xp.broadcast_to(updates, shape)
        return updates


def _check_python_values(
    given: Any, dtype: Any, name: str, data_name: str, written: object
) -> None:
    """Python values (`written`, as the NumPy array `given`) must be held exactly by
    `dtype`: no float into an integer dtype, no complex into a real one, no integer outside
    the dtype's range, no string into a number (backends would truncate, wrap or refuse them,
    each differently)."""
    target = dtype_name(dtype)
    try:
        wanted = np.dtype(target)
    except TypeError:
        return  # a dtype outside the standard's: the namespace decides
    if given.size == 0:
        return  # no values, whatever dtype NumPy guessed for them
    kind = given.dtype.kind  # "O": Python ints past int64
    refused = (
        (kind == "f" and wanted.kind in "biu")
        or (kind == "c" and wanted.kind != "c")
        or (kind in "iuO" and wanted.kind == "b")
        or (kind in "US" and wanted.kind in "biufc")
    )
    if kind in "iuO" and wanted.kind in "iu":
        info = np.iinfo(wanted)
        refused = int(given.min()) < int(info.min) or int(given.max()) > int(info.max)
    if refused:
        msg = (
            f"{name} must be values that {data_name}.dtype = {target} holds exactly, or an "
            f"array; got {_shown(written)}"
        )
        raise TypeError(msg)


def _casts_safely(xp: Any, source: Any, target: Any) -> bool:
    """NumPy's "safe" casting between the standard's dtypes, by name (backends differ:
    ndonnx lets float32 cast to int32); the namespace's ``can_cast`` for any other dtype."""
    names = dtype_name(source), dtype_name(target)
    try:
        return bool(np.can_cast(np.dtype(names[0]), np.dtype(names[1]), casting="safe"))
    except TypeError:
        pass
    try:
        return bool(xp.can_cast(source, target))
    except TypeError:
        return False


# -- for front ends that work on the arguments before the core -------------------------------


def arrays(data: Any, indices: Any, data_name: str, index_name: str) -> tuple[Any, Any, Any, bool]:
    """The kinds step alone: ``(xp, data, indices, index_given_as_values)``, the data as an
    array of `xp` and the index as an array of `xp` or, where given as Python values, as a
    NumPy array of them (exact ints), for a front end that works on the values before it
    hands them to the core as Python values again (``tolist()``)."""
    pair = _Pair(data, indices, data_name, index_name)
    data = pair.data_array()
    return pair.xp, data, pair.indices, pair.from_values[1]


def updates_array(xp: Any, updates: Any, data: Any, name: str, data_name: str) -> Any:
    """`updates` as an array of data's namespace and dtype, of any shape: the kinds, dtype and
    value checks of a scatter's updates (for front ends and the segment reductions, which
    check shapes their own way)."""
    given = _Updates(xp, data, data_name, updates, name)
    given.check_dtype(data.dtype)
    return given.array(data, given.shape, "exact")


def check_python_values(values: Any, dtype: Any, name: str, data_name: str) -> None:
    """Python `values` (a scalar or nested lists) must be held exactly by `dtype`."""
    _check_python_values(python_values(values, name, text=True), dtype, name, data_name, values)


def as_arrays(data: Any, indices: Any, data_name: str, index_name: str) -> tuple[Any, Any, Any]:
    """The kinds step alone, both as arrays of one namespace ``(xp, data, indices)``: an index
    given as Python values becomes an array of the widest signed integer the data's device
    holds (values it cannot hold are a ValueError naming them)."""
    xp, data, indices, as_values = arrays(data, indices, data_name, index_name)
    if not as_values:
        return xp, data, indices
    wide = engine_for(xp).wide_index_dtype(data)
    info = xp.iinfo(wide)
    low, high = (int(indices.min()), int(indices.max())) if indices.size else (0, 0)
    if low < int(info.min) or high > int(info.max):
        unheld = low if low < int(info.min) else high
        msg = f"{index_name} holds {unheld}, which the data's device holds in no integer dtype"
        raise ValueError(msg)
    return xp, data, xp.asarray(indices.astype(np.int64), dtype=wide, device=device_for_new(data))
