"""The arrays of a call, the data, the index and a scatter's updates: their namespace (one for
all), their kinds as given (arrays, or Python values kept as NumPy arrays until every check
has passed), their static shapes and the plan of the call, their dtypes (checked after their
kinds and before their values: an integer index, a reduction the data's dtype has, the
scatters' and the segment reductions' one rule, updates that cast safely), and the arrays of
the namespace they become."""

from __future__ import annotations

from typing import Any

import array_api_compat as aac
import numpy as np

from ._arrays import device_for_new, dtype_kind, dtype_name, unknown_sizes
from ._options import SEGMENT_SCATTERS
from ._plan import GatherPlan, Offsets, symbolic_size
from ._values import check_exact_values, index_array, is_array, python_values, shown
from .engines import Engine

# -- the dtypes -----------------------------------------------------------------------------


#: Whether a dtype of a namespace is an integer dtype, per (namespace id, dtype).
#: Why: every call without a route checks its index's dtype, and ``isdtype`` (through
#: array_api_compat) costs several lookups (benchmarks/RESULTS.md, "The memo tables of the
#: checks"). Bound: the dtypes of the namespaces a program uses, a few dozen; a namespace
#: is a module, alive as long as the program, so its id is never another's.
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


# -- the data and the index -----------------------------------------------------------------


#: The namespace of each array type seen, for the common call with two arrays of one type.
#: Why: every call without a route (JAX, Dask, ndonnx; a NumPy or PyTorch call with an
#: option that keys nothing) finds its namespace, and ``array_namespace`` asks every library
#: it knows where one lookup answers (benchmarks/RESULTS.md, "The memo tables of the
#: checks"). Bound: one entry per array type a program passes, a handful; never
#: array-api-strict's, whose namespace follows its flags.
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

    def index_array(
        self, data: Any, engine: Engine, plan: GatherPlan | Offsets | None, policy: str
    ) -> Any:  # fmt: skip
        """The index as an array of the namespace beside `data`: Python values by the one
        rule of :func:`~._values.index_array` (`plan` and `policy` deciding the values that
        the widest integer of data's device cannot hold)."""
        if not self.from_values[1]:
            return self.indices
        return index_array(self.xp, engine, self.indices, data, policy, plan)


# -- a scatter's updates --------------------------------------------------------------------


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


# -- shapes ---------------------------------------------------------------------------------


#: Plans by call signature (the planner's name, both shapes as the arrays give them, the
#: integer arguments) where those shapes are static: one dictionary lookup for a call in a
#: loop, and the one cache of the gathers' and scatters' plans (the planners keep none; a
#: segment reduction's plan is kept in its route). Names, not the functions, as
#: keys: torch.compile traces a dictionary of strings.
#: Why: a call without a route (JAX, Dask, ndonnx, Python values) plans on every call, and
#: a plan (its checks, the shape arithmetic, the report) costs many lookups
#: (benchmarks/RESULTS.md, "The memo tables of the checks"). Bound: :data:`_MAX_PLANS`,
#: cleared when full, so that a program whose shapes grow without end holds no more.
_PLANS: dict[tuple[Any, ...], GatherPlan] = {}
_MAX_PLANS = 512


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
            if len(_PLANS) >= _MAX_PLANS:
                _PLANS.clear()
            _PLANS[key] = plan
    return plan


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
