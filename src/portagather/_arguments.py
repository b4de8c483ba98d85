"""Every call's arguments, checked in one order before any backend sees them.

Each public function (the gathers, the scatters, the segment reductions and ``segment_csr``,
and each compat front end through them) passes its arguments to one entry point of
``_routes`` (``gather_call``, ``scatter_call``, ``segment_call``, ``csr_call``), which runs
the checks here and keeps what they found as the call's route. The checks run in one order
on every backend, so that a call with two faults reports the same one everywhere. The
gathers and the scatters (docs/contract.md, "Errors"):

1. the options: ``axis``, ``dim`` and ``batch_dims`` are ints (:func:`int_argument`, as the
   public functions read them), ``bad_indices`` names a policy, ``reduce`` a reduction and
   the promises are bools;
2. the kinds: the data, the index, the updates and ``fill_value`` are arrays or Python
   values of the right kind (a scalar, or rectangular nested lists and tuples of them; no
   ``None``, dict, string index or other object), and the arrays are of one namespace;
3. ranks and shapes: the plan of the gather (``_plan``), the updates' shape, a 0-d
   ``fill_value``;
4. dtypes: an integer index, a reduction the data's dtype has, updates that cast safely;
5. values: ``fill_value`` and Python updates held exactly by the data's dtype, and Python
   index values that no integer dtype of the data's device holds, under the policy.

The segment reductions and ``segment_csr`` keep the order of docs/contract.md, R6: their
options, the kinds, the dtypes (of the ids or offsets, then of the data), the shapes, then
``num_segments`` (its kind, and whether an array of the device can hold it) and the values.
TensorFlow's sorted ``segment_*`` (``sorted_vector``) check two things more, first among the
shapes, as they always have: the ids are a vector, then sorted where their values can be
read now (the one value read before the other shapes, so that a call with unsorted ids
reports them on every backend, whatever else is wrong with its shapes); for them, ids given
as Python values become an array after the dtypes (clipped into the widest integer of the
data's device, :func:`as_arrays`' rule), for those two checks to read.

The values of index arrays are the policy's, afterwards (``_indices``). Python values become
arrays of the data's namespace only once all five have passed, on the data's device and in
a dtype that device holds: no backend ever sees an argument portagather has not checked.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import array_api_compat as aac
import numpy as np

from ._arrays import (
    DTYPE_KINDS,
    Unread,
    device_for_new,
    dtype_kind,
    dtype_name,
    numpy_dtype,
    unknown_sizes,
)
from ._errors import raise_first_bad
from ._indices import resolve_default, to_wide
from ._plan import GatherPlan, Offsets, symbolic_size
from .engines import Engine, engine_for
from .engines.scatter import ScatterPromises

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


#: The scatter reduction behind each segment reduction (the mean is a sum over a count).
SEGMENT_SCATTERS = {"sum": "add", "mean": "add", "max": "max", "min": "min", "prod": "multiply"}


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


_CSR_POLICIES = {"error": "error", "ERROR": "error", "unchecked": "unchecked"}


# -- 2. the kinds ---------------------------------------------------------------------------


#: The namespace of each array type seen, for the common call with two arrays of one type.
_NAMESPACES: dict[type, Any] = {}


def namespace_name(x: Any) -> str:
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
                    f"{namespace_name(data)} array for {data_name} and a "
                    f"{namespace_name(indices)} array for {index_name}"
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
                        f"{namespace_name(self.indices)} namespace holds; got "
                        f"{shown(self.data_given)} ({err})"
                    )
                    raise TypeError(msg) from None
            self.from_values = (False, self.from_values[1])
        return self.data

    def index_array(self, data: Any, engine: Engine, plan: GatherPlan, policy: str) -> Any:
        """The index as an array of the namespace beside `data` (Python values: in the widest
        signed integer dtype of data's device, each value it cannot hold dealt with by the
        policy first: :func:`_fitted_index`)."""
        if not self.from_values[1]:
            return self.indices
        values = self.indices
        xp = self.xp
        held = numpy_dtype(engine.wide_index_dtype(data))
        device = device_for_new(data)
        if values.size and values.dtype != held:
            info = np.iinfo(held)
            if int(values.min()) < int(info.min) or int(values.max()) > int(info.max):
                values = _fitted_index(xp, engine, values, held, device, plan, policy)
        return xp.asarray(values.astype(held, copy=False), device=device)


_SCALARS = (bool, int, float, complex, str, np.generic)


def fill_value_kind(fill_value: object) -> None:
    """A TypeError unless `fill_value` is a Python or NumPy scalar or has a shape."""
    if isinstance(fill_value, _SCALARS):
        return
    if fill_value is None or not hasattr(fill_value, "shape"):
        msg = (
            "fill_value must be a scalar (a Python bool, int, float, complex or str, or a 0-d "
            f"array); got {fill_value!r}"
        )
        raise TypeError(msg)


class Updates:
    """The updates of a scatter: an array of the data's namespace, or checked Python values."""

    __slots__ = ("data_name", "given", "name", "values", "xp")

    def __init__(self, xp: Any, data: Any, data_name: str, updates: Any, name: str) -> None:
        self.xp, self.name, self.data_name = xp, name, data_name
        self.given = updates
        if is_array(updates):
            # `data` as the caller gave it: data given as Python values takes the index's
            # library, whose arrays the updates must then be (not NumPy's, which holds them).
            if type(updates) is not type(data) and aac.array_namespace(updates) is not xp:
                library = (
                    f"{type(data).__module__}.{type(data).__name__}"
                    if is_array(data)
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

    def check_shape(self, plan: GatherPlan, mode: str) -> None:
        """A ValueError unless the updates fit the gather's result shape as `mode` (an
        :class:`Operation`'s ``updates_fit``) says."""
        given, shape = self.shape, plan.out_shape
        if mode == "block":
            fits = len(given) == len(shape) and all(
                g >= s for g, s in zip(given, shape, strict=True)
            )
            wanted = f"at least {shape} on every axis (index.shape)"
        elif mode in ("broadcast", "slices, broadcast"):
            fits = len(given) <= len(shape) and all(
                g in (1, s) for g, s in zip(given[::-1], shape[::-1], strict=False)
            )
            wanted = f"broadcastable to {shape}"
        else:
            fits = given == shape
            wanted = f"{shape}"
        if mode.startswith("slices"):  # PyTorch's index_add and index_reduce say it so
            index, axis = plan.report.index_name, plan.axis
            wanted = (
                f"{self.data_name}.shape with len({index}) = {shape[axis]} along dim {axis}, "
                f"{shape}"
            )
        if not fits:
            msg = f"{self.name}.shape must be {wanted}; got {given}"
            raise ValueError(msg)

    def check_dtype(self, dtype: Any) -> None:
        if self.values is not None:
            return
        xp, updates = self.xp, self.given
        if updates.dtype != dtype and not casts_safely(xp, updates.dtype, dtype):
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
            check_exact_values(self.values, data.dtype, self.name, self.data_name, self.given)
            values = self.values
            if values.dtype == object:  # huge ints into a floating dtype: as Python floats
                values = values.astype(float)
            try:
                updates = xp.asarray(values, dtype=data.dtype, device=device_for_new(data))
            except (TypeError, ValueError, OverflowError) as err:
                wanted = dtype_name(data.dtype)
                msg = (
                    f"{self.name} must be values that {self.data_name}.dtype = {wanted} holds "
                    f"exactly, or an array; got {shown(self.given)} ({err})"
                )
                raise TypeError(msg) from None
        return fitted_updates(xp, updates, data.dtype, shape, mode)


def fitted_updates(xp: Any, updates: Any, dtype: Any, shape: tuple[int, ...], mode: str) -> Any:
    """The array `updates` (checked already) in `dtype`, of the gather's result `shape`, as
    `mode` (an :class:`Operation`'s ``updates_fit``) says they fit it."""
    if updates.dtype != dtype:
        updates = xp.astype(updates, dtype)
    if tuple(updates.shape) != shape:
        if mode == "block":  # its leading block, as torch.scatter reads src
            updates = updates[tuple(slice(0, s) for s in shape)]
        else:
            updates = xp.broadcast_to(updates, shape)
    return updates


def updates_array(xp: Any, updates: Any, data: Any, name: str, data_name: str) -> Any:
    """`updates` as an array of data's namespace and dtype, of any shape: the kinds, dtype and
    value checks of a scatter's updates (for front ends, which check shapes their own way)."""
    given = Updates(xp, data, data_name, updates, name)
    given.check_dtype(data.dtype)
    return given.array(data, given.shape, "exact")


#: Python and NumPy scalars that are numbers (bool included: its dtype is checked later).
_NUMBERS = (bool, int, float, complex, np.bool_, np.number)


#: Text scalars, which a data array or updates may hold (NumPy's and ndonnx's strings).
_TEXT = (str, bytes, np.str_, np.bytes_)


_NESTED = (list, tuple, range)


_INDEX_KIND = "an array, an int or a rectangular nested list of ints"


_VALUES_KIND = "an array, a scalar or a rectangular nested list of scalars"


def shown(value: Any) -> str:
    """``repr(value)``, shortened where it is long (a large list)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:72] + " ... " + text[-3:]


def is_array(x: Any) -> bool:
    """An array of some namespace; a NumPy scalar is a Python value here."""
    return not isinstance(x, np.generic) and aac.is_array_api_obj(x)


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
                    f"got {shown(value)}"
                )
                raise ValueError(msg) from None
        except Exception:
            odd = _odd_leaf(value, text) or [value]
        else:
            odd = _odd_leaf(value, text) if array.dtype.kind in "OUS" else []
        if odd:
            msg = f"{name} must be {kind}; got {shown(value)}, which holds {shown(odd[0])}"
            raise TypeError(msg)
        if array.dtype.kind in "fO":
            return _exact(value, array)
        return array
    if not aac.is_array_api_obj(value) and hasattr(value, "__array__"):
        array = np.asarray(value)
        if array.dtype.kind in "biufc" or (text and array.dtype.kind in "US"):
            return array
    msg = f"{name} must be {kind}; got {shown(value)}"
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
#: loop, and the one cache of the gathers' and scatters' plans (the planners keep none; a
#: segment reduction's plan is kept in its route). Names, not the functions, as
#: keys: torch.compile traces a dictionary of strings.
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


def check_sorted_vector(xp: Any, engine: Engine, ids: Any, function: str) -> None:
    """TensorFlow's sorted ``segment_*`` (`function`): a ValueError unless `ids` is 1-d and,
    where its values can be read now, sorted (non-decreasing), naming the first pair that
    falls. Run first among the shapes: the sorted form has always checked both before the
    others. Ids whose values cannot be read now (Dask, a JAX trace) are not checked for
    order."""
    if ids.ndim != 1:
        msg = f"segment_ids must be 1-d (a vector) for {function}; got shape {tuple(ids.shape)}"
        raise ValueError(msg)
    if engine.index_access(ids) != "now" or ids.shape[0] <= 1:
        return
    falls = ids[1:] < ids[:-1]
    if engine.value_range(xp.astype(falls, xp.int8))[1]:
        (where,) = xp.nonzero(falls)
        k = int(where[0]) + 1
        msg = (
            f"segment_ids must be sorted (non-decreasing) for {function}; got "
            f"segment_ids[{k}] = {engine.read_int(ids[k])} after segment_ids[{k - 1}] = "
            f"{engine.read_int(ids[k - 1])} (unsorted_segment_{function[8:]} takes any order)"
        )
        raise ValueError(msg)


def static_shape(x: Any, name: str) -> tuple[int, ...]:
    """The shape as Python ints, where a symbolic size (``torch.export``'s dynamic
    dimension) stays one; every gather here is planned from these shapes."""
    shape = tuple(x.shape)
    if all(type(s) is int or symbolic_size(s) for s in shape):
        return shape
    if any(s is None for s in shape):
        msg = (
            f"{name} must have a static shape (every size known when the call is made); "
            f"got shape {shape}"
        )
        raise ValueError(msg)
    if any(s != s for s in shape):  # NaN: Dask's unknown sizes, after boolean indexing
        raise unknown_sizes(name, f"got shape {shape}")
    return tuple(int(s) for s in shape)


def fill_value_shape(fill_value: object) -> None:
    """A ValueError for an array `fill_value` that is not 0-d (its kind checked first)."""
    scalar = isinstance(fill_value, _SCALARS)
    shape = () if scalar else tuple(fill_value.shape)  # type: ignore[attr-defined]
    if shape != ():
        msg = (
            "fill_value must be a scalar (a Python scalar or a 0-d array); got an array of "
            f"shape {shape}"
        )
        raise ValueError(msg)


# -- 4. dtypes ------------------------------------------------------------------------------


#: Whether a dtype of a namespace is an integer dtype, per (namespace id, dtype).
_INTEGRAL: dict[tuple[int, Any], bool] = {}


def check_index_dtype(xp: Any, indices: Any, index_name: str) -> None:
    """Reject boolean, floating and other non-integer index arrays."""
    dtype = indices.dtype
    key = (id(xp), dtype)
    is_integer = _INTEGRAL.get(key)
    if is_integer is None:
        try:
            is_integer = bool(xp.isdtype(dtype, "integral"))
        except (TypeError, ValueError):  # e.g. NumPy strings, which isdtype does not know
            is_integer = False
        _INTEGRAL[key] = is_integer
    if not is_integer:
        shown = dtype if isinstance(dtype, np.dtype) else dtype_name(dtype)  # NumPy's: "<U1"
        msg = f"{index_name} must have an integer dtype; got {shown}"
        raise TypeError(msg)


#: What each reduction is on bool: OR (max) or AND (min).
_BOOL_REDUCTIONS = {"add": "max", "multiply": "min", "min": "min", "max": "max"}


def reduction_for(xp: Any, reduce: str, dtype: Any) -> str | None:
    """The reduction the engines run for `reduce` (``"add"``, ``"multiply"``, ``"min"``,
    ``"max"``) on `dtype`, or None where the dtype has none: the one dtype rule of the
    scatters and the segment reductions (docs/contract.md, S6 and R3).

    Numbers (NumPy's ``bfloat16`` included: :func:`~._arrays.dtype_kind`) and bool; on bool
    ``"add"`` and ``"max"`` are a logical OR and ``"multiply"`` and ``"min"`` a logical AND
    (False < True), as TensorFlow and PyTorch combine bools: the engines run ``"max"`` and
    ``"min"`` for them. ``"min"`` and ``"max"`` need an order, so not complex.
    """
    kind = dtype_kind(xp, dtype)
    if kind == "bool":
        return _BOOL_REDUCTIONS[reduce]
    if kind is None or (kind == "complex floating" and reduce in ("min", "max")):
        return None
    return reduce


def reducible_kinds(reduce: str, bools: bool = True) -> str:
    """What :func:`reduction_for` takes for `reduce`, in words, for an error message."""
    kind = "a real numeric" if reduce in ("min", "max") else "a numeric"
    return f"{kind} or bool" if bools else kind


def check_reduce_dtype(xp: Any, reduce: str, dtype: Any, data_name: str) -> str:
    """The reduction the engines run for `reduce` on `dtype` (:func:`reduction_for`), or a
    TypeError. ``"update"`` is defined for every dtype (NumPy's strings too)."""
    if reduce == "update":
        return reduce
    found = reduction_for(xp, reduce, dtype)
    if found is not None:
        return found
    kinds = reducible_kinds(reduce)
    msg = f'reduce="{reduce}" needs {data_name} of {kinds} dtype; got {dtype_name(dtype)}'
    raise TypeError(msg)


def check_segment_dtype(
    xp: Any, reduce: str, dtype: Any, function: str, floating: bool = False
) -> None:
    """The scatters' dtype rule (:func:`reduction_for`) for the reduction's
    scatter: numbers for every reduction (NumPy's ``bfloat16`` too), but no complex numbers
    for ``max`` and ``min``; bool for ``max`` and ``min`` (any, all), not for the sum, the
    mean and the product, whose results are no bools. With `floating`, no integers either
    (TensorFlow's ``unsorted_segment_sqrt_n``, which divides by a square root); with
    `floating` and ``max`` or ``min``, real floating dtypes only (the toolkit's softmax,
    logsumexp, var and std, which take each segment's maximum)."""
    bools = reduce in ("max", "min")
    found = reduction_for(xp, SEGMENT_SCATTERS[reduce], dtype)
    kind = dtype_kind(xp, dtype)
    if floating and bools and kind != "real floating":
        kinds = "a real floating"
    elif found is None or (kind == "bool" and not bools):
        kinds = reducible_kinds(SEGMENT_SCATTERS[reduce], bools)
    elif floating and kind in ("signed integer", "unsigned integer"):
        kinds = "a floating"
    else:
        return
    msg = f"{function} needs data of {kinds} dtype; got {dtype_name(dtype)}"
    raise TypeError(msg)


def _itemsize(dtype: Any) -> int:
    """The bytes of one element of `dtype` (8 where no library says)."""
    size = getattr(dtype, "itemsize", None)
    if isinstance(size, int):
        return size
    try:
        return int(np.dtype(dtype_name(dtype)).itemsize)
    except TypeError:
        return 8


def casts_safely(xp: Any, source: Any, target: Any) -> bool:
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


# -- 5. values ------------------------------------------------------------------------------


def check_fill_value(xp: Any, fill_value: object, dtype: Any) -> Any:
    """The Python scalar `fill_value` stands for, checked against `dtype` (or an
    :class:`Unread` for a 0-d array whose value cannot be read now: traced, lazy, symbolic).

    One rule on every backend: only scalars (Python scalars or 0-d arrays); ``None`` and
    other non-numbers are a TypeError, and a value that the dtype cannot hold exactly (300
    into int8, 0.5 or NaN into an integer dtype, 2**24 + 1 or 1e300 into float32, "abc"
    into a 1-character string dtype) is a ValueError naming the value and the dtype. Floats
    round to the nearest value of a floating dtype.
    """
    if type(fill_value) is int and fill_value == 0:  # the default: the dtype's zero
        return 0
    value = _fill_scalar(fill_value)
    if value is _UNKNOWN:
        return Unread(fill_value)
    return _fitted(xp, value, fill_value, dtype)


_UNKNOWN = object()


def _fill_scalar(fill_value: object) -> Any:
    """The Python scalar of `fill_value`, or ``_UNKNOWN`` for a 0-d array without values."""
    if isinstance(fill_value, _SCALARS):
        return fill_value.item() if isinstance(fill_value, np.generic) else fill_value
    fill_value_kind(fill_value)
    fill_value_shape(fill_value)
    if aac.is_lazy_array(fill_value):  # reading it would compute or fail
        return _UNKNOWN
    try:
        return np.asarray(fill_value).item()
    except Exception:  # a tracer or a symbolic array: its value is not known here
        return _UNKNOWN


def empty_value_kind(empty_value: object) -> None:
    """A TypeError unless `empty_value` (the value of an empty segment) is None or a Python
    or NumPy real scalar; checked among the kinds, before the arrays are touched."""
    if empty_value is None or isinstance(empty_value, _REAL_SCALARS):
        return
    msg = (
        "empty_value must be None or a real scalar (a Python or NumPy bool, int or float); "
        f"got {shown(empty_value)}"
    )
    raise TypeError(msg)


_REAL_SCALARS = (bool, int, float, np.bool_, np.integer, np.floating)


def check_empty_value(xp: Any, empty_value: object, dtype: Any) -> Any:
    """The Python scalar that `empty_value` (of :func:`empty_value_kind`) stands for,
    checked against the result's `dtype` as ``fill_value`` is (:func:`check_fill_value`)."""
    empty_value_kind(empty_value)
    value = empty_value.item() if isinstance(empty_value, np.generic) else empty_value
    return _fitted(xp, value, empty_value, dtype, "empty_value", "result")


def _fitted(
    xp: Any, value: Any, fill_value: object, dtype: Any, name: str = "fill_value",
    whose: str = "data",
) -> Any:  # fmt: skip
    """`value` as the Python scalar to cast to `dtype`, or a ValueError if it does not fit
    (naming the argument `name` and `whose` dtype it is)."""

    def refuse() -> None:
        msg = (
            f"{name}={fill_value!r} cannot be held exactly by the {whose}'s dtype "
            f"{dtype_name(dtype)}"
        )
        raise ValueError(msg)

    if isinstance(value, str):
        try:
            numeric = any(xp.isdtype(dtype, k) for k in DTYPE_KINDS)
        except (TypeError, ValueError):  # a string dtype, which the standard does not name
            numeric = False
        if numeric:
            refuse()
        try:
            text = np.dtype(dtype)
        except TypeError:  # another library's string dtype: it keeps what it can
            return value
        if text.kind == "U" and len(value) > text.itemsize // 4:
            refuse()
        return value
    try:
        kind = next(k for k in DTYPE_KINDS if xp.isdtype(dtype, k))
    except (StopIteration, TypeError, ValueError):
        return value  # a dtype the standard does not name (strings of a backend)
    if kind == "complex floating":
        return value
    if isinstance(value, complex):
        if value.imag != 0:
            refuse()
        value = value.real
    if kind == "bool":
        if value not in (0, 1) or (isinstance(value, float) and not math.isfinite(value)):
            refuse()
        return value
    if kind == "real floating":
        info = xp.finfo(dtype)
        if isinstance(value, float):
            if math.isfinite(value) and abs(value) > float(info.max):
                refuse()
        elif not _int_fits_float(int(value), float(info.eps), float(info.max)):
            refuse()
        return value
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        refuse()
    info = xp.iinfo(dtype)
    if not int(info.min) <= int(value) <= int(info.max):
        refuse()
    return int(value)


def _int_fits_float(value: int, eps: float, largest: float) -> bool:
    """Whether a floating dtype with machine epsilon `eps` holds the int `value` exactly."""
    if abs(value) > largest:
        return False
    significand = abs(value)
    while significand and significand % 2 == 0:
        significand //= 2
    return significand.bit_length() <= round(-math.log2(eps)) + 1


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


def _read_num_segments(xp: Any, engine: Engine, ids: Any, access: Any) -> int:
    """`num_segments=None`: max(segment_ids) + 1, read now (0 for no ids)."""
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
    return max(0, engine.value_range(wide)[1] + 1)


def _offset_values(
    xp: Any, engine: Engine, values: Any, data: Any, shape: tuple[int, ...], axis: int,
    policy: str,
) -> Any:  # fmt: skip
    """Offsets given as Python values (a NumPy array; exact ints, objects past int64) as an
    array of the widest integer of the data's device. A value that dtype does not hold is
    past every axis of that device, so a bad offset: ``"error"`` raises the IndexError of the
    first bad offset now, naming it as written; ``"unchecked"`` clips it into the dtype."""
    held = numpy_dtype(engine.wide_index_dtype(data))
    info = np.iinfo(held)
    low, high = int(info.min), int(info.max)
    if values.size and (int(values.min()) < low or int(values.max()) > high):
        exact = np.asarray(values, dtype=object)
        if policy == "error":
            n = shape[axis]
            bad = np.asarray((exact < 0) | (exact > n), dtype=bool)
            if exact.shape[-1] > 1:
                bad[..., 1:] |= np.asarray(exact[..., 1:] < exact[..., :-1], dtype=bool)
            report = Offsets("offsets", False, "data", shape, axis)
            raise_first_bad(np, bad, exact, report)
        values = np.clip(exact, low, high)
    return xp.asarray(values.astype(held), device=device_for_new(data))


def check_exact_values(given: Any, dtype: Any, name: str, data_name: str, written: object) -> None:
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
            f"array; got {shown(written)}"
        )
        raise TypeError(msg)


def check_python_values(values: Any, dtype: Any, name: str, data_name: str) -> None:
    """Python `values` (a scalar or nested lists) must be held exactly by `dtype`."""
    check_exact_values(python_values(values, name, text=True), dtype, name, data_name, values)


# -- for front ends that work on the arguments before the core ------------------------------


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
    return xp, data, _values_array(xp, engine_for(xp), indices, data)


def _values_array(xp: Any, engine: Engine, values: Any, data: Any) -> Any:
    """Index values (a NumPy array of checked integers; objects past int64) as an array of
    `xp` beside `data`, in the widest signed integer dtype of data's device, by
    :func:`as_arrays`' rule: a value that dtype does not hold is clipped into it, where it
    stays out of range and keeps its sign."""
    held = numpy_dtype(engine.wide_index_dtype(data))
    info = np.iinfo(held)
    if values.size and (int(values.min()) < int(info.min) or int(values.max()) > int(info.max)):
        values = np.clip(np.asarray(values, dtype=object), int(info.min), int(info.max))
    return xp.asarray(values.astype(held), device=device_for_new(data))
