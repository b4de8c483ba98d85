"""Front ends with the exact signatures of other libraries' gathers, over portagather's core.

Each module is a drop-in for the names a port needs, so that porting code is mostly a matter
of changing an import line:

=====================================  ==================================================
module                                 replaces
=====================================  ==================================================
:mod:`portagather.compat.tensorflow`   ``tf.gather_nd``, ``tf.gather``
:mod:`portagather.compat.mindspore`    ``ops.GatherD``, ``ops.gather_d``,
                                       ``ops.gather_elements``, ``ops.GatherNd``,
                                       ``ops.gather_nd``, ``ops.gather``
:mod:`portagather.compat.onnx`         ONNX ``Gather``, ``GatherElements``, ``GatherND``
:mod:`portagather.compat.torch`        ``torch.gather``, ``torch.take_along_dim``
=====================================  ==================================================

The functions take arrays of any backend portagather supports (NumPy, JAX, PyTorch, Dask,
ndonnx, array-api-strict) and return an array of the same backend; none of them imports the
library it imitates. Each function's docstring says what, if anything, differs from the
original.
"""

from . import mindspore, onnx, tensorflow, torch

__all__ = ["mindspore", "onnx", "tensorflow", "torch"]
