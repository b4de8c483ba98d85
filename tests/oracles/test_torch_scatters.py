"""compat.torch's scatters against PyTorch itself: ``torch.scatter`` (a `src` tensor or a
`value`, with and without ``reduce``), ``torch.scatter_add`` and ``torch.scatter_reduce``
(every reduction, with and without ``include_self``), on NumPy, PyTorch and JAX inputs.

PyTorch leaves the order of duplicate indices under ``torch.scatter`` without ``reduce``
unspecified; such calls are compared with the plain-loop reference.
"""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from portagather.compat import torch as torch_compat
from portagather.conformance.reference import ref_scatter_d

from .oracle_settings import ORACLE
from .scatter_draws import (
    backend_names,
    check_compat,
    element_scatters,
    element_targets,
    on,
    repeats,
)

CALLS = st.one_of(element_scatters(False), element_scatters(True))
DTYPES = st.sampled_from([np.int32, np.float32])

pytestmark = pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")


def _torch(f, *args, **kwargs):
    """PyTorch's result as NumPy, or None where it refuses the indices."""
    try:
        return f(*args, **kwargs).numpy()
    except RuntimeError as err:
        if "out of bounds" in str(err):
            return None
        raise


def _check(name, compat_call, want):
    check_compat(name, compat_call, want, match="is out of bounds for dimension")


def _tensors(*arrays):
    return [torch.asarray(a) for a in arrays]


def _valid(data, dim, index):
    return bool(((index >= 0) & (index < data.shape[dim])).all())


@ORACLE
@given(CALLS, st.sampled_from([None, "add", "multiply"]), st.booleans(), DTYPES, backend_names)
def test_scatter(call, reduce, use_value, dtype, name):
    data, dim, index, src = call
    data, src = data.astype(dtype), src.astype(dtype)
    kwargs = {} if reduce is None else {"reduce": reduce}
    value = 3 if dtype == np.int32 else 2.5
    t_data, t_index, t_src = _tensors(data, index, src)
    data_b, index_b, src_b = on(name, data, index, src)
    if use_value:
        want_call = lambda: torch.scatter(t_data, dim, t_index, value=value, **kwargs)  # noqa: E731
        got_call = lambda: torch_compat.scatter(data_b, dim, index_b, value=value, **kwargs)  # noqa: E731
    else:
        want_call = lambda: torch.scatter(t_data, dim, t_index, t_src, **kwargs)  # noqa: E731
        got_call = lambda: torch_compat.scatter(data_b, dim, index_b, src_b, **kwargs)  # noqa: E731
    if reduce is None and repeats(element_targets(data.shape, dim, index)) and not use_value:
        want = ref_scatter_d(data, dim, index, src) if _valid(data, dim, index) else None
    else:
        want = _torch(want_call)
    _check(name, got_call, want)


@ORACLE
@given(CALLS, DTYPES, backend_names)
def test_scatter_add(call, dtype, name):
    data, dim, index, src = call
    data, src = data.astype(dtype), src.astype(dtype)
    want = _torch(torch.scatter_add, *_tensors(data), dim, *_tensors(index, src))
    data_b, index_b, src_b = on(name, data, index, src)
    _check(name, lambda: torch_compat.scatter_add(data_b, dim, index_b, src_b), want)


@ORACLE
@given(CALLS, st.sampled_from(["sum", "prod", "amax", "amin"]), st.booleans(), backend_names)
def test_scatter_add_and_reduce_of_bools(call, reduce, include_self, name):
    """PyTorch combines bools with a logical OR (sum, amax) or AND (prod, amin)."""
    data, dim, index, src = call
    data, src = data % 2 > 0, src % 3 > 0
    t_data, t_index, t_src = _tensors(data, index, src)
    want = _torch(
        torch.scatter_reduce, t_data, dim, t_index, t_src, reduce, include_self=include_self
    )
    data_b, index_b, src_b = on(name, data, index, src)
    compat_call = lambda: torch_compat.scatter_reduce(  # noqa: E731
        data_b, dim, index_b, src_b, reduce, include_self=include_self
    )
    _check(name, compat_call, want)
    if reduce == "sum" and include_self:
        want = _torch(torch.scatter_add, t_data, dim, t_index, t_src)
        _check(name, lambda: torch_compat.scatter_add(data_b, dim, index_b, src_b), want)


@ORACLE
@given(
    CALLS,
    st.sampled_from(["sum", "prod", "amax", "amin", "mean"]),
    st.booleans(),
    DTYPES,
    backend_names,
)
def test_scatter_reduce(call, reduce, include_self, dtype, name):
    data, dim, index, src = call
    data, src = data.astype(dtype), src.astype(dtype)
    t_data, t_index, t_src = _tensors(data, index, src)
    want = _torch(
        torch.scatter_reduce, t_data, dim, t_index, t_src, reduce, include_self=include_self
    )
    data_b, index_b, src_b = on(name, data, index, src)
    compat_call = lambda: torch_compat.scatter_reduce(  # noqa: E731
        data_b, dim, index_b, src_b, reduce, include_self=include_self
    )
    _check(name, compat_call, want)
