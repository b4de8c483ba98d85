"""compat.mindspore's ``unsorted_segment_sum`` / ``_max`` / ``_min`` / ``_prod`` (and their
primitives) against MindSpore itself, on NumPy and PyTorch inputs: empty segments, all-equal,
sorted and unsorted ids of one or two dimensions, negative ids (dropped) and too-large ones
(refused), infinities for the max and the min.

NaN is left out: MindSpore 2.10 on CPU passes over it in the max and the min (portagather
propagates it, see the module's notes). So is empty data, which MindSpore 2.10 refuses
("loop_size_ should be greater than 0").
"""

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from mindspore import Tensor, ops

from portagather.compat import mindspore as ms_compat

from .scatter_draws import on, to_numpy
from .segment_draws import SEGMENTS, compat_backends, same, segment_cases

DTYPES = ("int32", "int64", "float16", "float32", "float64")


def _mindspore(op, data, ids, n):
    """MindSpore's result as NumPy, or None where it refuses an id past the end."""
    try:
        return op(Tensor(data), Tensor(ids.astype(np.int32)), n).asnumpy()
    except RuntimeError:
        return None


@SEGMENTS
@given(st.sampled_from(["sum", "max", "min", "prod"]), st.booleans(), st.data(), compat_backends)
def test_unsorted_segment(op, primitive, draw, name):
    data, ids, n = draw.draw(segment_cases(DTYPES, specials=op in ("max", "min"),
                                           small=op == "prod"))  # fmt: skip
    assume(data.size)
    if data.dtype.kind == "f" and op in ("max", "min"):
        data = np.where(np.isnan(data), 0, data).astype(data.dtype)
    want = _mindspore(getattr(ops, f"unsorted_segment_{op}"), data, ids, n)
    data_b, ids_b = on(name, data, ids)
    compat_op = (getattr(ms_compat, f"UnsortedSegment{op.capitalize()}")() if primitive
                 else getattr(ms_compat, f"unsorted_segment_{op}"))  # fmt: skip
    if want is None:
        with pytest.raises(IndexError, match="is out of range"):
            compat_op(data_b, ids_b, n)
        return
    same(to_numpy(name, compat_op(data_b, ids_b, n)), want)
