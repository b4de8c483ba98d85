"""compat.mindspore's scatters against MindSpore itself: ``ops.TensorScatterElements``,
``ops.tensor_scatter_elements`` and ``ops.ScatterNd``, on NumPy, PyTorch and JAX inputs.

Where MindSpore leaves the order of duplicates unspecified (``reduction="none"``) or differs on
purpose (an out-of-range index: MindSpore 2.10 silently drops every update; portagather
raises, see the module's notes), the compat result is compared with the plain-loop
reference.
"""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from mindspore import Tensor, ops

from portagather.compat import mindspore as ms_compat
from portagather.conformance.reference import ref_scatter_d

from .oracle_settings import ORACLE
from .scatter_draws import (
    backend_names,
    element_scatters,
    element_targets,
    nd_scatters,
    on,
    repeats,
    same,
    to_numpy,
)


def _warm_up():
    # MindSpore 2.10's first ScatterNd call in a process fails while it imports a helper
    # built for NumPy 1.x (a SystemError); the calls after it work.
    try:
        ops.ScatterNd()(Tensor(np.array([[0]], np.int32)), Tensor(np.ones(1, np.float32)), (1,))
    except Exception:  # only the first call's import failure
        pass


_warm_up()


def _mindspore(op, *args):
    """MindSpore's result as NumPy, or None where it refuses the indices."""
    try:
        return op(*args).asnumpy()
    except RuntimeError:
        return None


def _valid(data, dim, index):
    n = data.shape[dim]
    return bool(((index >= -n) & (index < n)).all())


@ORACLE
@given(
    st.one_of(element_scatters(False), element_scatters(True)),
    st.sampled_from(["none", "add"]),
    st.booleans(),
    backend_names,
)
def test_tensor_scatter_elements(call, reduction, primitive, name):
    data, dim, index, src = call
    assume(index.size > 0)  # MindSpore refuses empty tensors
    args = on(name, data, index, src)
    if primitive:
        compat_call = lambda: ms_compat.TensorScatterElements(dim, reduction)(*args)  # noqa: E731
    else:
        compat_call = lambda: ms_compat.tensor_scatter_elements(*args, dim, reduction)  # noqa: E731
    if not _valid(data, dim, index):
        with pytest.raises(IndexError):
            compat_call()
        return
    if reduction == "none" and repeats(element_targets(data.shape, dim, index)):
        want = ref_scatter_d(data, dim, index, src)
    else:
        op = ops.TensorScatterElements(dim, reduction)
        want = op(Tensor(data), Tensor(index), Tensor(src)).asnumpy()
    same(to_numpy(name, compat_call()), want)


@ORACLE
@given(
    st.one_of(nd_scatters(False), nd_scatters(True)),
    st.sampled_from([np.int32, np.float32]),
    backend_names,
)
def test_scatter_nd(call, dtype, name):
    data, indices, updates = call
    assume(indices.size > 0)  # MindSpore refuses empty tensors
    updates = updates.astype(dtype)
    want = _mindspore(ops.ScatterNd(), Tensor(indices), Tensor(updates), data.shape)
    indices_b, updates_b = on(name, indices, updates)
    if want is None:
        with pytest.raises(IndexError):
            ms_compat.ScatterNd()(indices_b, updates_b, data.shape)
        return
    same(to_numpy(name, ms_compat.ScatterNd()(indices_b, updates_b, data.shape)), want)


def test_out_of_range_differs_on_purpose():
    """MindSpore 2.10 (CPU) drops every update of a call with an out-of-range index, although
    its page says only that index's update is skipped; the compat function raises."""
    x = np.zeros((2, 3), np.int32)
    index = np.array([[0, 5], [2, 1]], np.int32)
    src = np.array([[1, 2], [3, 4]], np.int32)
    got = ops.tensor_scatter_elements(Tensor(x), Tensor(index), Tensor(src), 1, "add").asnumpy()
    np.testing.assert_array_equal(got, [[1, 0, 0], [0, 0, 0]])  # only the first update landed
    with pytest.raises(IndexError, match=r"indices\[0, 1\] = 5 is out of range \[-3, 3\)"):
        ms_compat.tensor_scatter_elements(x, index, src, 1, "add")
