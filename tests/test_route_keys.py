"""Every option of every public function is part of its call's key (``_routes.call_key``).

A keyed engine (NumPy, PyTorch) checks a call once per key and keeps what the checks found as
the key's route (``_routes._ROUTES``); a repeat call of the key runs that route with no
check. An option left out of a key would let a call with another value of the option run
the route of the first: a wrong answer, or no error where the checks raise one. Each entry
point's key is derived from its signature (``_routes.options_key``: the last test here), and
a public function's option reaches its key only where the function passes it on. Here, for
every parameter of every public function (``portagather.__all__`` and the compat front
ends' ``__all__``, read with ``inspect.signature``) that is not an array argument, the
route is warmed with one value of the option, then the call is made with another value, and
its outcome (values, dtype and shape, or the error's type and message) must be the cold one:
the same call with no route kept. The values come from TABLE below; a public function or an option that is not in it
fails its case, so a new one cannot go untested. Each case also asks that the two values
answer differently (SAME_ANSWER lists the few that cannot), or it could not fail; where two
valid values answer alike on any input (a promise), the other value is one the checks refuse,
which a route kept for the first would not. MindSpore's primitive classes (``GatherD()``,
``TensorScatterElements(axis, reduction)``) are left out: each call of one is a call of the
function of the same name, tested here.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pytest
import torch

import portagather as pg
from portagather import _routes
from portagather.compat import mindspore as ms_compat
from portagather.compat import onnx as onnx_compat
from portagather.compat import tensorflow as tf_compat
from portagather.compat import torch as torch_compat
from portagather.compat import torch_scatter as ts_compat

torch.set_num_threads(1)

#: The engines that key their calls, and how a NumPy array becomes one of theirs.
ENGINES = {"numpy": np.asarray, "torch": torch.as_tensor}

#: The front ends whose public functions are tested, by the prefix of their cases' names.
MODULES = {
    "pg": pg,
    "tf": tf_compat,
    "tf.math": tf_compat.math,
    "torch": torch_compat,
    "ms": ms_compat,
    "onnx": onnx_compat,
    "ts": ts_compat,
}

D = np.arange(1, 13, dtype=np.float32).reshape(
    3, 4
)  # the data of the calls (D3: of ONNX's batched GatherND)
D3 = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)


def i(*values: Any) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def f(*values: Any) -> np.ndarray:
    return np.array(values, dtype=np.float32)


#: An option whose values give one answer on these inputs, with the reason; every other
#: option's two values must give two answers (else its case could not fail).
SAME_ANSWER = {
    "torch.segment_reduce:unsafe": "skips checks that valid lengths pass",
}
IGNORED = "ignored, as TensorFlow ignores it"
SAME_ANSWER.update({f"tf.{n}:name": IGNORED for n in tf_compat.__all__ if n != "math"})
SAME_ANSWER.update({f"tf.math.{n}:name": IGNORED for n in tf_compat.math.__all__})
SAME_ANSWER["tf.gather:validate_indices"] = IGNORED


# Each function: (its array arguments by name, the values every call gives, and each
# option's (warming value, other value)). An option's value that is a NumPy array is
# given as an array of the engine. The values every call gives make each option show: a
# policy that keeps the call going past a bad index, a num_segments that keys the call.
_GATHER_POLICIES = {"bad_indices": ("ignore", "clip"), "fill_value": (0, -1)}
# A promise's other value is one the checks refuse (1 is not True to them): a route kept for
# the first value would answer, and with the indices below both values answer alike.
_PROMISES = {"unique_indices": (True, "yes"), "indices_are_sorted": (True, 1)}
# deterministic's other value is one the checks refuse (1 is not True to them), as a promise's.
_DETERMINISTIC = {"deterministic": (True, 1)}
_SCATTER_OPTIONS = {
    "reduce": ("update", "add"),
    "bad_indices": ("ignore", "clip"),
    **_PROMISES,
    **_DETERMINISTIC,
}
_SEGMENT = (
    {"data": D, "segment_ids": i(1, 2, -1)},
    {"num_segments": 3, "bad_indices": "ignore"},
    {
        "num_segments": (3, 4),
        "indices_are_sorted": _PROMISES["indices_are_sorted"],
        "bad_indices": ("ignore", "clip"),
    },
)
#: The segment functions with one value per segment: an empty segment (0) shows empty_value.
_EMPTY_VALUED = (_SEGMENT[0], _SEGMENT[1], {**_SEGMENT[2], "empty_value": (None, -1)})
#: The sum, mean and product, and the toolkit's functions that sum: deterministic too.
_ORDERED = (_SEGMENT[0], _SEGMENT[1], {**_EMPTY_VALUED[2], **_DETERMINISTIC})
#: var and std: their degrees of freedom too.
_CORRECTED = (_ORDERED[0], _ORDERED[1], {**_ORDERED[2], "correction": (0, 1)})
_UNSORTED = ({"data": D, "segment_ids": i(2, 0, 0)}, {}, {"num_segments": (3, 4)})
_TF_SCATTER = (
    {"tensor": D, "indices": i([0], [2], [0], [5]), "updates": np.full((4, 4), 10, np.float32)},
    {},
    {"bad_indices_policy": ("", "IGNORE")},
)
TABLE: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, tuple[Any, Any]]]] = {
    "pg.gather": (
        {"params": D, "indices": i([0, 2], [1, 5], [2, 3])},
        {"bad_indices": "ignore"},
        {"axis": (1, 0), "batch_dims": (0, 1), **_GATHER_POLICIES},
    ),
    "pg.gather_nd": (
        {"params": D, "indices": i([0], [2], [5])},
        {"bad_indices": "ignore"},
        {"batch_dims": (0, 1), **_GATHER_POLICIES},
    ),
    "pg.gather_d": (
        {"x": D, "index": i([0, 2], [1, 5])},
        {"bad_indices": "ignore", "dim": 0},
        {"dim": (0, 1), **_GATHER_POLICIES},
    ),
    "pg.take_along_axis": (
        {"x": D, "indices": i([0, 2, 1, 5])},
        {"bad_indices": "ignore"},
        {"axis": (-1, 0), **_GATHER_POLICIES},
    ),
    "pg.scatter_nd": (
        {"params": D, "indices": i([2], [0], [0], [5]), "updates": np.full((4, 4), 10, np.float32)},
        {"bad_indices": "ignore", "reduce": "add"},
        {"batch_dims": (0, 1), **_SCATTER_OPTIONS},
    ),
    "pg.scatter_d": (
        {"x": D, "index": i([2, 0], [0, 5], [0, 1]), "src": np.full((3, 2), 10, np.float32)},
        {"bad_indices": "ignore", "reduce": "add", "dim": 0},
        {"dim": (0, 1), **_SCATTER_OPTIONS},
    ),
    "pg.put_along_axis": (
        {"x": D, "indices": i([3, 0, 0, 5]), "values": np.full((1, 4), 10, np.float32)},
        {"bad_indices": "ignore", "reduce": "add"},
        {"axis": (-1, 0), **_SCATTER_OPTIONS},
    ),
    **{f"pg.segment_{r}": _EMPTY_VALUED for r in ("max", "min")},
    **{f"pg.segment_{r}": _ORDERED for r in ("sum", "mean", "prod")},
    # An id of 3 shows num_segments: dropped (its row 0 or -inf) where 3, kept where 4.
    **{
        f"pg.segment_{r}": (
            {**_SEGMENT[0], "segment_ids": i(1, 2, 3)},
            _SEGMENT[1],
            {**_SEGMENT[2], **_DETERMINISTIC},
        )
        for r in ("softmax", "log_softmax")
    },
    **{f"pg.segment_{r}": _EMPTY_VALUED for r in ("argmax", "argmin")},
    "pg.segment_logsumexp": _ORDERED,
    **{f"pg.segment_{r}": _CORRECTED for r in ("var", "std")},
    "pg.segment_count": (
        {"segment_ids": i(1, 2, -1)},
        {"num_segments": 3, "bad_indices": "ignore"},
        {k: v for k, v in _SEGMENT[2].items()},
    ),
    "pg.bincount": (
        {"x": i(0, 1, 1, 3), "weights": f(0.5, 1, 2, 4)},
        {},
        {"minlength": (0, 6), "length": (None, 5), **_DETERMINISTIC},
    ),
    "pg.segment_csr": (
        {"data": D, "offsets": i(0, 1, 1, 3)},
        {"reduce": "var"},
        # "clip": refused for offsets (a route kept for "error" would answer)
        {
            "reduce": ("sum", "max"),
            "bad_indices": ("error", "clip"),
            "correction": (0, 1),
            "empty_value": (None, -1),
            **_DETERMINISTIC,
        },
    ),
    # TensorFlow
    "tf.gather": (
        {"params": D, "indices": i([0, 2], [1, 3], [2, 3])},
        {},
        {
            "validate_indices": (None, True),
            "axis": (1, 0),
            "batch_dims": (0, 1),
            "name": (None, "g"),
        },
    ),
    "tf.gather_nd": (
        {"params": D, "indices": i([0], [2], [5])},
        {},
        {"batch_dims": (0, 1), "name": (None, "g"), "bad_indices_policy": ("IGNORE", "")},
    ),
    "tf.scatter_nd": (
        {"indices": i([0], [2], [0], [5]), "updates": np.full((4, 4), 10, np.float32)},
        {"shape": (3, 4)},
        {
            "shape": ((3, 4), (4, 4)),
            "bad_indices_policy": ("", "IGNORE"),
            "name": (None, "s"),
            **_DETERMINISTIC,
        },
    ),
    **{
        f"tf.tensor_scatter_nd_{r}": (*_TF_SCATTER[:2], {**_TF_SCATTER[2], "name": (None, "s")})
        for r in ("max", "min")
    },
    **{
        f"tf.tensor_scatter_nd_{r}": (
            *_TF_SCATTER[:2],
            {**_TF_SCATTER[2], "name": (None, "s"), **_DETERMINISTIC},
        )
        for r in ("add", "sub")
    },
    "tf.tensor_scatter_nd_update": (_TF_SCATTER[0], {}, {"name": (None, "s")}),
    **{
        f"tf.math.segment_{r}": (
            {"data": D, "segment_ids": i(0, 0, 2)},
            {},
            {"name": (None, "s"), **(_DETERMINISTIC if r not in ("max", "min") else {})},
        )
        for r in ("sum", "mean", "max", "min", "prod")
    },
    **{
        f"tf.math.unsorted_segment_{r}": (
            _UNSORTED[0],
            {"num_segments": 3},
            {
                **_UNSORTED[2],
                "name": (None, "s"),
                **(_DETERMINISTIC if r not in ("max", "min") else {}),
            },
        )
        for r in ("sum", "mean", "max", "min", "prod", "sqrt_n")
    },
    # PyTorch
    "torch.gather": ({"input": D, "index": i([0, 2], [1, 2])}, {"dim": 0}, {"dim": (0, 1)}),
    "torch.index_select": ({"input": D, "index": i(0, 2)}, {"dim": 0}, {"dim": (0, 1)}),
    "torch.take_along_dim": (
        {"input": D, "indices": i([0, 2, 1, 0])},
        {},
        {"dim": (1, None)},
    ),
    "torch.index_add": (
        {"input": D, "index": i(0, 2, 0), "source": np.full((3, 3), 10, np.float32)},
        {"dim": 1},
        {"dim": (1, 0), "alpha": (1, 2)},
    ),
    "torch.index_put": (
        {"input": D, "indices": (i(0, 2, 0), i(1, 1, 1)), "values": f(10, 20, 30)},
        {},
        {"accumulate": (False, True)},
    ),
    "torch.index_reduce": (
        {"input": D, "index": i(0, 2, 0), "source": np.full((3, 3), 10, np.float32)},
        {"dim": 1, "reduce": "prod"},
        {"dim": (1, 0), "reduce": ("prod", "amax"), "include_self": (True, False)},
    ),
    "torch.scatter": (
        {"input": D, "index": i([0, 2], [0, 1])},
        {"dim": 0, "src": np.full((2, 2), 10, np.float32)},
        {
            "dim": (0, 1),
            "src": (np.full((2, 2), 10, np.float32), None),
            "value": (None, 7.0),
            "reduce": (None, "add"),
        },
    ),
    "torch.scatter_add": (
        {"input": D, "index": i([0, 2], [0, 1]), "src": np.full((2, 2), 10, np.float32)},
        {"dim": 0},
        {"dim": (0, 1)},
    ),
    "torch.scatter_reduce": (
        {"input": D, "index": i([0, 2], [0, 1]), "src": np.full((2, 2), 10, np.float32)},
        {"dim": 0, "reduce": "sum"},
        {"dim": (0, 1), "reduce": ("sum", "amax"), "include_self": (True, False)},
    ),
    "torch.segment_reduce": (
        {"data": D},
        {"reduce": "sum", "lengths": i(1, 0, 2)},
        {
            "reduce": ("sum", "max"),
            "lengths": (i(1, 0, 2), i(2, 1, 0)),
            "indices": (None, i(0, 0, 2)),
            "offsets": (None, i(0, 1, 1, 3)),
            "axis": (0, 1),
            "unsafe": (False, True),
            "initial": (None, 5.0),
        },
    ),
    # MindSpore
    "ms.gather": (
        {"input_params": D, "input_indices": i([0, 2], [1, 2], [2, 0])},
        {"axis": 1},
        {"axis": (1, 0), "batch_dims": (0, 1)},
    ),
    "ms.gather_d": ({"x": D, "index": i([0, 2], [1, 2])}, {"dim": 0}, {"dim": (0, 1)}),
    "ms.gather_elements": ({"input": D, "index": i([0, 2], [1, 2])}, {"dim": 0}, {"dim": (0, 1)}),
    "ms.gather_nd": ({"input_x": D, "indices": i([0, 1], [2, 3])}, {}, {}),
    "ms.scatter_nd": (
        {"indices": i([0], [2], [0]), "updates": np.full((3, 4), 10, np.float32)},
        {"shape": (3, 4)},
        {"shape": ((3, 4), (4, 4))},
    ),
    "ms.tensor_scatter_elements": (
        {"input_x": D, "indices": i([0, 2], [0, 1]), "updates": np.full((2, 2), 10, np.float32)},
        {"reduction": "add"},
        {"axis": (0, 1), "reduction": ("none", "add")},
    ),
    "ms.unsorted_segment_sum": (
        {"input_x": D, "segment_ids": i(2, 0, 0)},
        {"num_segments": 3},
        {"num_segments": (3, 4)},
    ),
    **{
        f"ms.unsorted_segment_{r}": (
            {"x": D, "segment_ids": i(2, 0, 0)},
            {"num_segments": 3},
            {"num_segments": (3, 4)},
        )
        for r in ("max", "min", "prod")
    },
    # ONNX
    "onnx.gather": ({"data": D, "indices": i([0, 2], [1, 2])}, {}, {"axis": (0, 1)}),
    "onnx.gather_elements": ({"data": D, "indices": i([0, 2], [1, 2])}, {}, {"axis": (0, 1)}),
    "onnx.gather_nd": ({"data": D3, "indices": i([0, 2], [1, 1])}, {}, {"batch_dims": (0, 1)}),
    "onnx.scatter_elements": (
        {"data": D, "indices": i([0, 2], [0, 1]), "updates": np.full((2, 2), 10, np.float32)},
        {"reduction": "add"},
        {"axis": (0, 1), "reduction": ("none", "add")},
    ),
    "onnx.scatter_nd": (
        {"data": D, "indices": i([0], [2], [0]), "updates": np.full((3, 4), 10, np.float32)},
        {},
        {"reduction": ("add", "none")},
    ),
}


def public_functions() -> dict[str, Any]:
    """Every public function of portagather and of its compat front ends, by case name."""
    found = {}
    for prefix, module in MODULES.items():
        for name in module.__all__:
            function = getattr(module, name)
            if inspect.isfunction(function):
                found[f"{prefix}.{name}"] = function
    return found


PUBLIC = public_functions()


# torch_scatter: every call is calls of the core, whose routes these options must not confuse.
_TS_OUT = np.full((3, 3), 5, np.float32)
_TS_SCATTER = (
    {"src": D, "index": i(0, 1, 0, 2)},
    {},
    {"dim": (-1, 0), "out": (None, _TS_OUT), "dim_size": (None, 5)},
)
TABLE.update({f"ts.scatter_{r}": _TS_SCATTER for r in ("sum", "add", "mul", "mean", "min", "max")})
TABLE["ts.scatter"] = (*_TS_SCATTER[:2], {**_TS_SCATTER[2], "reduce": ("sum", "max")})
TABLE["ts.scatter_std"] = (*_TS_SCATTER[:2], {**_TS_SCATTER[2], "unbiased": (True, False)})
TABLE["ts.scatter_logsumexp"] = (*_TS_SCATTER[:2], {**_TS_SCATTER[2], "eps": (1e-12, 1.0)})
TABLE["ts.scatter_softmax"] = (_TS_SCATTER[0], {}, {"dim": (-1, 0), "dim_size": (None, 5)})
TABLE["ts.scatter_log_softmax"] = (
    _TS_SCATTER[0],
    {},
    {"dim": (-1, 0), "dim_size": (None, 5), "eps": (1e-12, 1.0)},
)
_TS_COO = (
    {"src": D, "index": i(0, 0, 1)},
    {},
    {"out": (None, np.full((2, 4), 5, np.float32)), "dim_size": (None, 4)},
)
TABLE.update({f"ts.segment_{r}_coo": _TS_COO for r in ("sum", "add", "mean", "min", "max")})
TABLE["ts.segment_coo"] = (*_TS_COO[:2], {**_TS_COO[2], "reduce": ("sum", "max")})
_TS_CSR = ({"src": D, "indptr": i(0, 1, 1, 3)}, {}, {"out": (None, np.full((3, 4), 5, np.float32))})
TABLE.update({f"ts.segment_{r}_csr": _TS_CSR for r in ("sum", "add", "mean", "min", "max")})
TABLE["ts.segment_csr"] = (*_TS_CSR[:2], {**_TS_CSR[2], "reduce": ("sum", "max")})
OVERWRITTEN = "torch_scatter writes every element of out: its values are not read"
SAME_ANSWER.update(
    {f"ts.segment_{r}_csr:out": OVERWRITTEN for r in ("sum", "add", "mean", "min", "max")}
)
SAME_ANSWER.update({"ts.segment_csr:out": OVERWRITTEN, "ts.gather_coo:out": OVERWRITTEN})
SAME_ANSWER.update(
    {
        f"ts.{f}:dim_size": "the result has src's shape: segments past the ids change no row"
        for f in ("scatter_softmax", "scatter_log_softmax")
    }
)
TABLE["ts.gather_coo"] = (
    {"src": D, "index": i(0, 2, 2, 1)},
    {},
    {"out": (None, np.full((4, 4), 5, np.float32))},
)
TABLE["ts.gather_csr"] = (
    {"src": D, "indptr": i(0, 1, 1, 4)},
    {},
    {"out": (None, np.full((5, 4), 5, np.float32))},
)


def options_of(name: str) -> list[str]:
    """The parameters of `name` that are not among its array arguments in TABLE: each of
    them an option (every parameter, where the function has no TABLE entry)."""
    arrays = TABLE[name][0] if name in TABLE else {}
    return [p for p in inspect.signature(PUBLIC[name]).parameters if p not in arrays]


CASES = [(name, option) for name in PUBLIC for option in options_of(name)]


def _given(value: Any, convert: Any) -> Any:
    if isinstance(value, np.ndarray):
        return convert(value)
    if isinstance(value, tuple) and value and isinstance(value[0], np.ndarray):
        return tuple(convert(v) for v in value)
    return value


def _outcome(name: str, convert: Any, options: dict[str, Any]) -> tuple[Any, ...]:
    """The call's result as (dtype, shape, bytes), or its error's type and message."""
    arrays, base, _ = TABLE[name]
    arguments = {k: _given(v, convert) for k, v in {**arrays, **base, **options}.items()}
    args, kwargs = [], {}
    for parameter in inspect.signature(PUBLIC[name]).parameters.values():
        if parameter.name not in arguments:
            continue
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY:
            args.append(arguments[parameter.name])
        else:
            kwargs[parameter.name] = arguments[parameter.name]
    try:
        out = PUBLIC[name](*args, **kwargs)
    except Exception as error:  # any error: the cold call's must be the same
        return type(error).__name__, str(error)
    parts = out if isinstance(out, tuple) else (out,)  # (torch_scatter's min and max: pairs)
    arrays = [p.numpy() if isinstance(p, torch.Tensor) else np.asarray(p) for p in parts]
    return tuple((str(a.dtype), a.shape, a.tobytes()) for a in arrays)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("name", "option"), CASES, ids=[f"{n}:{o}" for n, o in CASES])
def test_an_option_keys_the_route(engine, name, option):
    """Warm the route with one value of `option`, then call with the other: the answer is
    the cold call's (no route kept), and differs from the first value's."""
    assert name in TABLE, f"{name} has no TABLE entry: give its array arguments and options"
    options = TABLE[name][2]
    assert option in options, f"{name}'s option {option!r} has no (warm, other) values in TABLE"
    convert = ENGINES[engine]
    warm, other = ({option: value} for value in options[option])
    _routes._ROUTES.clear()
    first = _outcome(name, convert, warm)
    assert _outcome(name, convert, warm) == first  # the second call finds the route
    assert _routes._ROUTES, f"{name} kept no route: nothing was tested"
    after_warm = _outcome(name, convert, other)
    _routes._ROUTES.clear()
    cold = _outcome(name, convert, other)
    assert after_warm == cold, f"{option}={options[option][1]!r} after {options[option][0]!r}"
    if f"{name}:{option}" not in SAME_ANSWER:
        assert cold != first, f"{name}: both values of {option} give one answer here"


def test_every_table_entry_names_a_public_function_and_its_parameters():
    """TABLE holds no function, array argument or option that the signatures lack."""
    assert set(TABLE) <= set(PUBLIC), set(TABLE) - set(PUBLIC)
    for name, (arrays, base, options) in TABLE.items():
        parameters = set(inspect.signature(PUBLIC[name]).parameters)
        assert set(arrays) | set(base) | set(options) <= parameters, name
    assert set(SAME_ANSWER) <= {f"{n}:{o}" for n, o in CASES}, set(SAME_ANSWER) - {
        f"{n}:{o}" for n, o in CASES
    }


#: Each entry point, its key, its array arguments and the options that may be arrays.
ENTRY_POINTS = [
    (_routes.gather_call, _routes._GATHER_KEY, ("data", "indices"), ("fill_value",)),
    (_routes.scatter_call, _routes._SCATTER_KEY, ("data", "indices", "updates"), ()),
    (_routes.segment_call, _routes._SEGMENT_KEY, ("data", "segment_ids"), ("num_segments",)),
    (_routes.csr_call, _routes._CSR_KEY, ("data", "offsets"), ()),
]


@pytest.mark.parametrize(
    ("entry", "key", "arrays", "scalars"),
    ENTRY_POINTS,
    ids=[entry.__name__ for entry, *_ in ENTRY_POINTS],
)
def test_an_entry_points_key_holds_each_of_its_options(entry, key, arrays, scalars):
    """Each entry point's key takes exactly its parameters and holds every one that is not an
    array, in order, after its type: an option added to an entry point is keyed. An option
    that may be an array keys no call where it is one (a tensor hashes by identity)."""
    parameters = list(inspect.signature(entry).parameters)
    assert list(inspect.signature(key).parameters) == parameters
    given = {name: torch.zeros(1) if name in arrays else name for name in parameters}
    expected = []
    for name in parameters:
        if name not in arrays:
            expected += [str, name]
    assert key(**given) == tuple(expected)
    for name in scalars:
        assert key(**{**given, name: torch.zeros(())}) is None
        assert key(**{**given, name: np.int8(3)})[1::2] == tuple(
            np.int8(3) if option == name else option
            for option in parameters
            if option not in arrays
        )
