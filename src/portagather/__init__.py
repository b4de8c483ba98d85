"""TensorFlow's ``gather_nd`` and ``gather`` and MindSpore's ``GatherD``, written once against
the Python array API standard, for NumPy, JAX, PyTorch, Dask, CuPy, ndonnx and
array-api-strict."""

from ._ops import gather, gather_d, gather_nd, take_along_axis
from ._policy import POLICIES

__all__ = ["POLICIES", "gather", "gather_d", "gather_nd", "take_along_axis"]
__version__ = "0.1.0"
