"""NumPy views as data (transposed, strided, broadcast): right values, and never a copy.

NumPy's ``take`` makes its input C-contiguous first, so a gather from a view of a large
array would copy all of it; portagather indexes views along their original axes instead.
Values are compared with the plain-loop reference on a contiguous copy.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import portagather as pg
from portagather.conformance.cases import Call

BASE = np.arange(6 * 8 * 4, dtype=np.int32).reshape(6, 8, 4)
VIEWS = {
    "transposed": BASE.transpose(2, 1, 0),
    "strided": BASE[::2, ::3, ::-1],
    "broadcast": np.broadcast_to(BASE[:1], (5, 8, 4)),
}
# (operation, indices as a function of the view's shape, options)
CALLS = [
    ("gather_nd", lambda s: np.array([[0, 1], [s[0] - 1, 2], [s[0], 0]]), {}),
    ("gather_nd", lambda s: np.array([[[1], [0]]] * s[0]), {"batch_dims": 1}),
    ("gather", lambda s: np.array([2, 0, s[1]]), {"axis": 1}),
    ("gather", lambda s: np.array([[1, 0]] * s[0]), {"axis": 2, "batch_dims": 1}),
    ("gather_d", lambda s: np.array([[[1], [-1]]] * s[0]), {"dim": 2}),
    ("take_along_axis", lambda _: np.array([[[0, -1, 9]]]), {"axis": 2}),
]


@pytest.mark.parametrize("policy", ["error", "ignore", "clip", "wrap"])
@pytest.mark.parametrize("view", VIEWS, ids=list(VIEWS))
@pytest.mark.parametrize("case", range(len(CALLS)))
def test_views_read_right(view, case, policy):
    op, make_indices, kwargs = CALLS[case]
    data = VIEWS[view]
    indices = make_indices(data.shape)
    call = Call(op, np.ascontiguousarray(data), indices, {**kwargs, "bad_indices": policy})
    try:
        expected = call.expected()
    except IndexError:
        with pytest.raises(IndexError):
            Call(op, data, indices, call.kwargs).run_numpy()
        return
    got = Call(op, data, indices, call.kwargs).run_numpy()
    np.testing.assert_array_equal(got, expected, strict=True)


@pytest.mark.parametrize(
    "view",
    [lambda a: a.T, lambda a: a[::2, ::2], lambda a: np.broadcast_to(a[0], a.shape)],
    ids=["transposed", "strided", "broadcast"],
)
def test_two_rows_of_a_large_view_copy_nothing(view):
    """The issue's case: two rows of a 4000 x 4000 float32 view (64 MB) in under 8 MB."""
    big = view(np.zeros((4000, 4000), dtype=np.float32))
    pg.gather(big, [3, 7], axis=0)  # warm up imports and caches
    for call in (
        lambda: pg.gather(big, [3, 7], axis=0),
        lambda: pg.gather_nd(big, [[3], [7]]),
        lambda: pg.gather_nd(big, [[3, 1], [7, 2]], bad_indices="clip"),
    ):
        tracemalloc.start()
        call()
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 8e6, peak
