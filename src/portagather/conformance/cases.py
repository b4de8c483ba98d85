"""What a conformance case is: one call, its independent expected answer, and the comparison.

A :class:`Call` holds NumPy data and indices and the keyword arguments; it runs through
portagather on a backend, through the plain-loop reference, and prints itself as a
reproducer. :func:`check_result` compares exactly: values, shape, dtype, namespace, device.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

import array_api_compat as aac
import numpy as np
import numpy.typing as npt

import portagather as pg

from .._types import IndexLike
from . import reference
from .backends import Backend
from .modes import effective_policy, in_mode

if TYPE_CHECKING:
    import pytest

#: Dask's explicit chunks of one array: a tuple of block sizes per axis.
Chunks: TypeAlias = tuple[tuple[int, ...], ...]

_E = TypeVar("_E", bound=BaseException)

OPS = ("gather_nd", "gather", "gather_d", "take_along_axis")
POLICIES = ("error", "ignore", "clip", "wrap", "unchecked")
ALIASES = ("", "DEFAULT", "ERROR", "IGNORE")
EXAMPLES = Path(__file__).with_name("examples")

#: The segment reductions: a :class:`Call` of one has `data` and ``segment_ids`` (`indices`),
#: and ``num_segments`` among the keywords; ``segment_csr`` takes offsets as `indices`.
SEGMENTS = ("segment_sum", "segment_mean", "segment_max", "segment_min", "segment_prod")

_REFERENCES: dict[str, Callable[..., npt.NDArray[Any]]] = {
    "gather_nd": reference.ref_gather_nd,
    "gather": reference.ref_gather,
    "gather_d": reference.ref_gather_d,
    "take_along_axis": reference.ref_take_along_axis,
    **{op: partial(reference.ref_segment, reduce=op[8:]) for op in SEGMENTS},
    "segment_csr": reference.ref_segment_csr,
}


def _literal(values: object) -> str:
    if isinstance(values, np.ndarray):
        return f"np.array({values.tolist()!r}, dtype={str(values.dtype)!r})"
    return repr(values)


@dataclass
class Call:
    """One call of a portagather operation, on NumPy inputs.

    For ``gather_d`` the keyword ``dim`` is passed positionally, in MindSpore's order.
    `chunks` (the chunks of data and of indices) lays the arrays out on backends with
    chunks (Dask); None leaves it to the backend.
    """

    op: str
    data: npt.NDArray[Any]
    indices: npt.NDArray[Any] | IndexLike  # nested lists too (documented examples, as_lists)
    kwargs: dict[str, Any] = field(default_factory=dict)
    chunks: tuple[Chunks, Chunks] | None = None

    def args(self, data: Any, indices: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kwargs = dict(self.kwargs)
        if self.op == "gather_d":
            return (data, kwargs.pop("dim"), indices), kwargs
        return (data, indices), kwargs

    def function(self) -> Callable[[Any, Any], Any]:
        """``f(data, indices)``: this call's operation and keywords on the given arrays."""

        def f(data: Any, indices: Any) -> Any:
            args, kwargs = self.args(data, indices)
            return getattr(pg, self.op)(*args, **kwargs)

        return f

    def run(
        self, backend: Backend, *, as_lists: bool = False, mode: str = "eager"
    ) -> tuple[Any, Any]:
        """Run through portagather on `backend` in `mode` (``modes.in_mode``); returns
        ``(result, data array)``. Index lists stay constants of the call in every mode."""
        data_chunks, index_chunks = self.chunks or (None, None)
        data = _asarray(backend, self.data, data_chunks)
        f = self.function()
        if as_lists:
            return in_mode(lambda d: f(d, self.indices), mode)(data), data
        return in_mode(f, mode)(data, _asarray(backend, self.indices, index_chunks)), data

    def policy(self, mode: str = "eager") -> str:
        """The policy this call keeps in `mode`: TensorFlow's default resolved (no
        ``bad_indices``: the functions' default, ``"error"``)."""
        return effective_policy(self.kwargs.get("bad_indices", "error"), mode)

    def resolved(self, mode: str = "eager") -> Call:
        """This call with the policy it keeps in `mode` spelled out."""
        return replace(self, kwargs={**self.kwargs, "bad_indices": self.policy(mode)})

    def run_numpy(self) -> npt.NDArray[Any]:
        """Run through portagather on the NumPy arrays as they are (views included)."""
        args, kwargs = self.args(self.data, self.indices)
        out: npt.NDArray[Any] = getattr(pg, self.op)(*args, **kwargs)
        return out

    def expected(self) -> npt.NDArray[Any]:
        """The plain-loop reference's answer (raises IndexError like ``"error"``)."""
        args, kwargs = self.args(self.data, np.asarray(self.indices))
        return _REFERENCES[self.op](*args, **kwargs)

    def reproducer(self, backend_name: str) -> str:
        args, kwargs = self.args("params", "indices")
        text = ", ".join([*map(str, args)] + [f"{k}={v!r}" for k, v in kwargs.items()])
        data_chunks, index_chunks = self.chunks or (None, None)
        data_layout = f", chunks={data_chunks!r}" if data_chunks else ""
        index_layout = f", chunks={index_chunks!r}" if index_chunks else ""
        return "\n".join(
            [
                "import numpy as np, portagather as pg",
                "from portagather.conformance.backends import load_backend",
                f"b = load_backend({backend_name!r})",
                f"params = b.asarray({_literal(self.data)}{data_layout})",
                f"indices = b.asarray({_literal(np.asarray(self.indices))}{index_layout})",
                f"pg.{self.op}({text})",
            ]
        )


def _asarray(backend: Backend, values: Any, chunks: Chunks | None) -> Any:
    """``backend.asarray(values, chunks=chunks)``, called through Any: backends.py does not
    annotate ``Backend.asarray``."""
    asarray: Any = backend.asarray
    return asarray(values, chunks=chunks)


def check_result(backend: Backend, out: Any, expected: npt.NDArray[Any], data: Any) -> None:
    """Exact comparison of a backend result with the expected NumPy array."""
    assert aac.array_namespace(out) is backend.xp, f"namespace {type(out)} is not {backend.name}"
    assert out.dtype == data.dtype, f"dtype {out.dtype} != params dtype {data.dtype}"
    assert aac.device(out) == aac.device(data), f"device {aac.device(out)} != {aac.device(data)}"
    assert tuple(out.shape) == expected.shape, f"shape {tuple(out.shape)} != {expected.shape}"
    values = backend.to_numpy(out)
    equal_nan = values.dtype.kind in "fc"
    assert np.array_equal(values, expected, equal_nan=equal_nan), (
        f"values differ:\n got {values.tolist()}\nwant {expected.tolist()}"
    )


#: The backends whose arrays hold bfloat16: NumPy and Dask (ml_dtypes'), JAX, PyTorch.
BFLOAT16_BACKENDS = ("numpy", "dask", "jax", "torch")


def bfloat16_array(backend: Backend, values: npt.NDArray[Any], chunks: Any = None) -> Any:
    """`values` (exact in bfloat16) as a bfloat16 array of `backend`: ml_dtypes' NumPy
    bfloat16 on NumPy and Dask, the library's own on JAX and PyTorch."""
    if backend.name == "torch":
        import torch

        return torch.asarray(values.astype(np.float32)).to(torch.bfloat16)
    if backend.name == "jax":
        import jax.numpy as jnp

        return jnp.asarray(values.astype(np.float32), dtype=jnp.bfloat16)
    import ml_dtypes

    return _asarray(backend, values.astype(ml_dtypes.bfloat16), chunks)


def bfloat16_values(backend: Backend, out: Any) -> npt.NDArray[np.float32]:
    """A bfloat16 result of `backend` as float32 NumPy values (exact)."""
    if backend.name == "torch":
        import torch

        return np.asarray(out.detach().to(torch.float32).cpu().numpy())
    return np.asarray(backend.to_numpy(out)).astype(np.float32)


def bfloat16_reference(expected: npt.NDArray[Any]) -> npt.NDArray[np.float32]:
    """A float32 reference rounded to bfloat16 (to nearest, even), as float32 values."""
    import ml_dtypes

    return np.asarray(expected, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def raises_lazily(
    backend: Backend,
    error: type[_E],
    call: Call | ScatterCall,
    match: str | None = None,
    mode: str = "eager",
) -> pytest.ExceptionInfo[_E]:
    """Assert that `call` raises `error`, at call time or (Dask) when computed."""
    import pytest

    def run_and_compute() -> None:
        out, _ = call.run(backend, mode=mode)
        backend.to_numpy(out)

    with pytest.raises(error, match=match) as info:
        run_and_compute()
    return info


def check_call(backend: Backend, call: Call | ScatterCall, mode: str = "eager") -> None:
    """Run `call` in `mode` and compare with the reference, or expect its IndexError (Dask:
    on compute). Under ``jit``, ``"error"`` cannot raise from traced values: it asks for
    ``checkify`` (docs/transformations.md), unless the index holds no value to check."""
    if mode == "jit" and call.policy(mode) == "error" and np.size(call.indices):
        raises_lazily(backend, ValueError, call, "checkify", mode)
        return
    resolved = call.resolved(mode)
    try:
        expected = resolved.expected()
    except IndexError:
        raises_lazily(backend, IndexError, call, mode=mode)
        return
    out, data = call.run(backend, mode=mode)
    check_result(backend, out, expected, data)


def load_examples() -> list[dict[str, Any]]:
    """The documented examples, each with its ``source`` URL and ``file``."""
    cases = []
    for path in sorted(EXAMPLES.glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            cases.append({**case, "file": path.stem})
    return cases


def example_arrays(
    case: dict[str, Any], strings: bool
) -> tuple[npt.NDArray[Any], npt.NDArray[Any] | None]:
    """``(data, expected)`` of a documented example as NumPy arrays.

    Strings become integer codes (order-preserving) on backends that cannot hold strings, so
    that every backend runs every example.
    """
    dtype = case["dtype"]
    if isinstance(case["data"], dict):
        data = np.zeros(case["data"]["zeros"], dtype=dtype)
    else:
        data = np.asarray(case["data"], dtype=None if dtype == "str" else dtype)
    expected = case.get("expected")
    if expected is not None:
        expected = np.asarray(expected, dtype=data.dtype)
    if dtype == "str" and not strings:
        alphabet = np.unique(data)
        data = np.searchsorted(alphabet, data).astype(np.int32)
        if expected is not None:
            expected = np.searchsorted(alphabet, expected).astype(np.int32)
    return data, expected


def source_positions(call: Call) -> npt.NDArray[np.int64]:
    """For each output element, the flat position in params it reads, or -1 where filled.

    Runs the reference on ``arange`` data, so it shares nothing with portagather; gradients
    (a scatter-add of the cotangent) are computed from it.
    """
    positions = np.arange(call.data.size, dtype=np.int64).reshape(call.data.shape)
    kwargs = {**call.kwargs, "fill_value": -1}
    return Call(call.op, positions, call.indices, kwargs).expected()


def expected_gradient(call: Call, cotangent: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """TensorFlow's gradient with respect to the data: the cotangent added into zeros at the
    positions the reference reads (duplicates summed, nothing for filled elements)."""
    return scatter_add(source_positions(call), np.asarray(cotangent), call.data.shape)


def scatter_add(
    positions: npt.NDArray[np.int64], cotangent: npt.NDArray[Any], shape: tuple[int, ...]
) -> npt.NDArray[Any]:
    """`cotangent` added into zeros of `shape` at flat `positions` (-1: nothing)."""
    grad = np.zeros(int(np.prod(shape)), dtype=cotangent.dtype)
    read = positions >= 0
    np.add.at(grad, positions[read], cotangent[read])
    return grad.reshape(shape)


def check_unchecked(backend: Backend, call: Call, mode: str = "eager") -> None:
    """Valid indices read what the reference reads; bad ones read some element of params."""
    out, data = call.run(backend, mode=mode)
    valid = call.__class__(call.op, call.data, call.indices, {**call.kwargs})
    valid.kwargs["bad_indices"] = "ignore"
    expected = valid.expected()
    assert tuple(out.shape) == expected.shape and out.dtype == data.dtype
    values = backend.to_numpy(out)
    kept = expected != -7
    assert np.array_equal(values[kept], expected[kept])
    assert np.isin(values, call.data).all(), "unchecked read a value that is not in params"


# One call per operation with negative, past-the-end and valid indices (the contract's
# policy tests and the transformation tests share them).
_M232 = np.arange(1, 13, dtype=np.int32).reshape(2, 3, 2)
BAD = {
    "gather_nd": Call("gather_nd", _M232, np.array([[[0], [2]], [[-1], [1]]]), {"batch_dims": 1}),
    "gather": Call(
        "gather", _M232, np.array([[2, -1, 0], [1, 3, -4]]), {"axis": 1, "batch_dims": 1}
    ),
    "gather_d": Call("gather_d", _M232, np.array([[[1, -1]], [[-3, 2]]]), {"dim": 1}),
    "take_along_axis": Call("take_along_axis", _M232, np.array([[[0], [3], [-3]]]), {"axis": 1}),
}


# The scatters: each is the inverse of one gather, and its cases are that gather's calls with
# updates of the gathered shape.

#: Each scatter and the gather whose reads it writes.
SCATTERS = {"scatter_nd": "gather_nd", "scatter_d": "gather_d", "put_along_axis": "take_along_axis"}
REDUCTIONS = ("update", "add", "multiply", "min", "max")

_SCATTER_REFERENCES: dict[str, Callable[..., npt.NDArray[Any]]] = {
    "scatter_nd": reference.ref_scatter_nd,
    "scatter_d": reference.ref_scatter_d,
    "put_along_axis": reference.ref_put_along_axis,
}


@dataclass
class ScatterCall:
    """One call of a scatter on NumPy inputs (``dim`` of ``scatter_d`` passed positionally);
    `chunks` lays out data, indices and updates on backends with chunks."""

    op: str
    data: npt.NDArray[Any]
    indices: npt.NDArray[Any]
    updates: npt.NDArray[Any] | Any  # Python values too, passed as they are
    kwargs: dict[str, Any] = field(default_factory=dict)
    chunks: tuple[Chunks, Chunks, Chunks] | None = None

    def args(self, data: Any, indices: Any, updates: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        kwargs = dict(self.kwargs)
        if self.op == "scatter_d":
            return (data, kwargs.pop("dim"), indices, updates), kwargs
        return (data, indices, updates), kwargs

    def run(self, backend: Backend, *, mode: str = "eager") -> tuple[Any, Any]:
        """Run through portagather on `backend` in `mode` (``modes.in_mode``); returns
        ``(result, data array)``. Updates given as Python values stay constants of the call
        in every mode."""
        layout = self.chunks or (None, None, None)
        given = (self.data, self.indices, self.updates)
        arrays = [
            _asarray(backend, a, c)
            for a, c in zip(given, layout, strict=True)
            if isinstance(a, np.ndarray)
        ]

        def f(*traced: Any) -> Any:
            values = iter(traced)
            args, kwargs = self.args(
                *(next(values) if isinstance(a, np.ndarray) else a for a in given)
            )
            return getattr(pg, self.op)(*args, **kwargs)

        return in_mode(f, mode)(*arrays), arrays[0]

    def policy(self, mode: str = "eager") -> str:
        """The policy this call keeps in `mode`, as :meth:`Call.policy`."""
        return effective_policy(self.kwargs.get("bad_indices", "error"), mode)

    def resolved(self, mode: str = "eager") -> ScatterCall:
        """This call with the policy it keeps in `mode` spelled out."""
        return replace(self, kwargs={**self.kwargs, "bad_indices": self.policy(mode)})

    def expected(self) -> npt.NDArray[Any]:
        """The plain-loop reference's answer (raises IndexError like ``"error"``): the
        answer of every kept promise, which the reference does not take."""
        args, kwargs = self.args(self.data, self.indices, self.updates)
        kwargs = {k: v for k, v in kwargs.items() if k not in PROMISES}
        return _SCATTER_REFERENCES[self.op](*args, **kwargs)

    def reproducer(self, backend_name: str) -> str:
        args, kwargs = self.args("x", "indices", "updates")
        text = ", ".join([*map(str, args)] + [f"{k}={v!r}" for k, v in kwargs.items()])
        layout = self.chunks or (None, None, None)
        lines = [
            "import numpy as np, portagather as pg",
            "from portagather.conformance.backends import load_backend",
            f"b = load_backend({backend_name!r})",
        ]
        for name, values, chunks in zip(
            ("x", "indices", "updates"), (self.data, self.indices, self.updates), layout,
            strict=True,
        ):  # fmt: skip
            lines.append(
                f"{name} = b.asarray({_literal(values)}"
                + (f", chunks={chunks!r})" if chunks else ")")
            )
        return "\n".join([*lines, f"pg.{self.op}({text})"])


def scatter_of(call: Call, updates: npt.NDArray[Any], **kwargs: Any) -> ScatterCall:
    """The scatter that writes `updates` where gather `call` reads."""
    op = next(s for s, g in SCATTERS.items() if g == call.op)
    gather_kwargs = {k: v for k, v in call.kwargs.items() if k != "fill_value"}
    return ScatterCall(
        op, call.data, np.asarray(call.indices), updates, {**gather_kwargs, **kwargs}
    )


# Calls with odd arguments (test_arguments.py): any of the seven public functions, with
# arguments of any kind, each array given as a marker that the backend under test turns into
# its own array (or into an array of another namespace).

#: The seven public functions and their positional arguments, in order.
PUBLIC = {
    "gather_nd": ("params", "indices"),
    "gather": ("params", "indices"),
    "gather_d": ("x", "dim", "index"),
    "take_along_axis": ("x", "indices"),
    "scatter_nd": ("params", "indices", "updates"),
    "scatter_d": ("x", "dim", "index", "src"),
    "put_along_axis": ("x", "indices", "values"),
}


@dataclass(frozen=True)
class Arr:
    """NumPy values given as an array of the backend under test."""

    values: npt.NDArray[Any]

    def __repr__(self) -> str:
        return f"b.asarray({_literal(self.values)})"


@dataclass(frozen=True)
class Foreign:
    """NumPy values given as an array of another namespace than the backend's: a NumPy array,
    or, on NumPy, a :class:`ForeignArray`."""

    values: npt.NDArray[Any]

    def __repr__(self) -> str:
        return f"foreign({_literal(self.values)})"


class ForeignArray:
    """An array of a namespace that is none of the backends'."""

    def __init__(self, values: npt.NDArray[Any] | None = None) -> None:
        values = np.zeros(1, np.int64) if values is None else values
        self.shape, self.ndim, self.dtype = values.shape, values.ndim, str(values.dtype)

    def __array_namespace__(self, api_version: str | None = None) -> Any:
        from types import ModuleType

        return ModuleType("foreign")


@dataclass
class OddCall:
    """One call of a public function, with its arguments as given: Python values as they are,
    :class:`Arr` and :class:`Foreign` markers for arrays."""

    op: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def materialize(self, backend: Backend) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments for `backend`: each marker as an array."""

        def made(value: Any) -> Any:
            if isinstance(value, Arr):
                return backend.asarray(value.values)
            if isinstance(value, Foreign):
                if backend.name == "numpy":
                    return ForeignArray(value.values)
                return np.array(value.values)
            return value

        return tuple(made(a) for a in self.args), {k: made(v) for k, v in self.kwargs.items()}

    def function(self) -> Callable[..., Any]:
        """The function called: ``pg.<op>``, or for ``compat.<module>.<path>`` that function
        of ``portagather.compat.<module>``."""
        if not self.op.startswith("compat."):
            return getattr(pg, self.op)  # type: ignore[no-any-return]
        import importlib

        _, module, *path = self.op.split(".")
        found: Any = importlib.import_module(f"portagather.compat.{module}")
        for name in path:
            found = getattr(found, name)
        return found  # type: ignore[no-any-return]

    def run(self, backend: Backend) -> Any:
        """The result on `backend` (computed, where lazy), as NumPy; raises what the call
        raises."""
        args, kwargs = self.materialize(backend)
        out = self.function()(*args, **kwargs)
        self.check_namespace(backend, out)
        return out if isinstance(out, np.ndarray) else backend.to_numpy(out)

    def check_namespace(self, backend: Backend, out: Any) -> None:
        """A result of the backend's namespace where an argument is its array (the data, the
        index, an index of a tuple, a keyword's); NumPy's where none is an array."""
        got = aac.array_namespace(out)
        given = [*self.args, *self.kwargs.values()]
        given += [i for a in self.args if isinstance(a, tuple | list) for i in a]
        if any(isinstance(a, Arr) for a in given):
            assert got is backend.xp, f"namespace {type(out)} is not {backend.name}'s"
        else:
            assert aac.is_numpy_namespace(got), f"{type(out)} is not a NumPy array"

    def names(self) -> tuple[str, ...]:
        """Every argument name of the function."""
        import inspect

        return tuple(inspect.signature(self.function()).parameters)

    def reproducer(self, backend_name: str) -> str:
        text = ", ".join([*map(repr, self.args)] + [f"{k}={v!r}" for k, v in self.kwargs.items()])
        return "\n".join(
            [
                "import numpy as np, portagather as pg",
                "from portagather.conformance.backends import load_backend",
                "from portagather.conformance.cases import Foreign, OddCall",
                f"b = load_backend({backend_name!r})",
                "foreign = lambda v: OddCall('gather', (Foreign(v),)).materialize(b)[0][0]",
                f"pg.{self.op}({text})",
            ]
        )

    def sorted_promise_broken(self) -> bool:
        """Whether the call promises sorted ids (``indices_are_sorted=True``) that are not:
        its values are unspecified then (docs/contract.md, R1)."""
        promise = self.kwargs.get("indices_are_sorted")
        if not (isinstance(promise, bool | np.bool_) and promise) or len(self.args) < 2:
            return False
        ids = self.args[1].values if isinstance(self.args[1], Arr) else self.args[1]
        try:
            flat = np.asarray(ids, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError, OverflowError):
            return False
        return bool(np.any(flat[1:] < flat[:-1]))


#: The keywords of a scatter that are promises about its index, not part of what it computes
#: (docs/contract.md, S9): the reference, which takes none, computes the promised answer.
PROMISES = ("unique_indices", "indices_are_sorted")


def scatter_gather(call: ScatterCall) -> Call:
    """The gather whose reads `call` writes, with `call`'s policy and ``fill_value=-1``
    (on ``arange`` data it gives each update's flat target, -1 for a dropped one)."""
    kwargs = {k: v for k, v in call.kwargs.items() if k not in ("reduce", *PROMISES)}
    return Call(SCATTERS[call.op], call.data, call.indices, kwargs)


def scatter_targets(call: ScatterCall) -> npt.NDArray[np.int64]:
    """The flat position in the data that each update of `call` lands on (-1: dropped), of
    the updates' shape (G's result), from the plain-loop reference gather."""
    return source_positions(scatter_gather(call))


def scatter_updates(call: ScatterCall) -> npt.NDArray[Any]:
    """`call`'s updates as the scatter uses them: of the targets' shape, in the data's dtype
    (``scatter_d``: the leading block of `src`; ``put_along_axis``: `values` broadcast)."""
    targets = scatter_targets(call)
    updates = np.asarray(call.updates, dtype=call.data.dtype)
    if call.op == "scatter_d":
        updates = updates[tuple(slice(0, s) for s in targets.shape)]
    return np.broadcast_to(updates, targets.shape)


def targets_are_unique(call: ScatterCall) -> bool:
    """Whether no two updates of `call` land on one element (S9, ``unique_indices``)."""
    targets = scatter_targets(call).reshape(-1)
    landed = targets[targets >= 0]
    return bool(np.unique(landed).size == landed.size)


def targets_are_sorted(call: ScatterCall) -> bool:
    """Whether `call` keeps the promise of ``indices_are_sorted`` (S9): the targets, in
    row-major order of the updates, never decrease; for ``scatter_nd``, each index vector
    counted once, by the target of the first element of its slice."""
    targets = scatter_targets(call)
    if call.op == "scatter_nd":
        depth = np.shape(call.indices)[-1]
        b = call.kwargs.get("batch_dims", 0)
        inner = call.data.ndim - b - depth
        if 0 in targets.shape[targets.ndim - inner :]:
            return True  # slices of no elements: nothing lands anywhere
        targets = targets[(Ellipsis,) + (0,) * inner]
    landed = targets.reshape(-1)
    landed = landed[landed >= 0]
    return bool(np.all(landed[1:] >= landed[:-1]))


def _combinations(reduce: str, start: Any, updates: list[Any]) -> set[Any]:
    """Every value `start` combined by `reduce` with one or more of `updates` (Python
    numbers: exact; the reductions are commutative, so subsets, not orders, matter)."""
    combine: dict[str, Callable[[Any, Any], Any]] = {
        "add": lambda a, b: a + b, "multiply": lambda a, b: a * b, "min": min, "max": max,
    }  # fmt: skip
    made: set[Any] = set()
    for value in updates:
        made |= {combine[reduce](start, value)} | {combine[reduce](m, value) for m in made}
    return made


def check_broken_promise(
    backend: Backend, call: ScatterCall, out: Any, data: Any, promise: str
) -> None:
    """A result under a broken `promise` (docs/contract.md, S9): the data's shape, dtype,
    namespace and device; every element no update lands on keeps its value; an element
    that updates land on holds one of them under ``"update"`` (``indices_are_sorted``: or
    its own value), and under a reduction (``unique_indices``) its value combined with one
    or more of them. Data and updates are integers, so every value compares exactly."""
    assert aac.array_namespace(out) is backend.xp and out.dtype == data.dtype
    assert aac.device(out) == aac.device(data)
    assert tuple(out.shape) == call.data.shape
    got = backend.to_numpy(out).reshape(-1).tolist()
    original = call.data.reshape(-1).tolist()
    reduce = call.kwargs.get("reduce", "update")
    landing: dict[int, list[Any]] = {}
    for target, value in zip(
        scatter_targets(call).reshape(-1).tolist(),
        scatter_updates(call).reshape(-1).tolist(),
        strict=True,
    ):
        if target >= 0:
            landing.setdefault(target, []).append(value)
    for e, (value, before) in enumerate(zip(got, original, strict=True)):
        aimed = landing.get(e)
        if aimed is None:
            assert value == before, f"element {e} was written: {before} -> {value}"
        elif reduce == "update":
            allowed = set(aimed) | ({before} if promise == "indices_are_sorted" else set())
            assert value in allowed, f"element {e} holds {value}, not one of {sorted(allowed)}"
        elif promise == "unique_indices":
            allowed = _combinations(reduce, before, aimed)
            assert value in allowed, f"element {e} holds {value}, not one of {sorted(allowed)}"
