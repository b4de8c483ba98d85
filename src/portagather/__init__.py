"""TensorFlow's ``gather_nd`` and ``gather`` and MindSpore's ``GatherD``, written once against
the Python array API standard, for NumPy, JAX, PyTorch, Dask, CuPy, ndonnx and
array-api-strict."""

from importlib.metadata import PackageNotFoundError, version

from ._api import (
    gather,
    gather_d,
    gather_nd,
    put_along_axis,
    scatter_d,
    scatter_nd,
    take_along_axis,
)
from ._indices import POLICIES
from ._options import REDUCTIONS
from ._segment import (
    SEGMENT_REDUCTIONS,
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
)
from ._segment_csr import segment_csr
from ._segment_toolkit import (
    bincount,
    segment_argmax,
    segment_argmin,
    segment_count,
    segment_log_softmax,
    segment_logsumexp,
    segment_softmax,
    segment_std,
    segment_var,
)

__all__ = [
    "POLICIES",
    "REDUCTIONS",
    "SEGMENT_REDUCTIONS",
    "bincount",
    "gather",
    "gather_d",
    "gather_nd",
    "put_along_axis",
    "scatter_d",
    "scatter_nd",
    "segment_argmax",
    "segment_argmin",
    "segment_count",
    "segment_csr",
    "segment_log_softmax",
    "segment_logsumexp",
    "segment_max",
    "segment_mean",
    "segment_min",
    "segment_prod",
    "segment_softmax",
    "segment_std",
    "segment_sum",
    "segment_var",
    "take_along_axis",
]

try:
    __version__ = version("portagather")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"
