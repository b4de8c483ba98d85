"""Front ends with the exact signatures of other libraries' gathers and scatters, over
portagather's core.

Each module is a drop-in for the names a port needs, so that porting code is mostly a matter
of changing an import line:

==========================================  ===================================================
module                                      replaces
==========================================  ===================================================
:mod:`portagather.compat.tensorflow`        ``tf.gather_nd``, ``tf.gather``, ``tf.scatter_nd``,
                                            ``tf.tensor_scatter_nd_update`` / ``_add`` /
                                            ``_sub`` / ``_min`` / ``_max``,
                                            ``tf.math.unsorted_segment_sum`` / ``_mean`` /
                                            ``_max`` / ``_min`` / ``_prod`` / ``_sqrt_n``,
                                            ``tf.math.segment_sum`` / ``_mean`` / ``_max`` /
                                            ``_min`` / ``_prod``
:mod:`portagather.compat.mindspore`         ``ops.GatherD``, ``ops.gather_d``,
                                            ``ops.gather_elements``, ``ops.GatherNd``,
                                            ``ops.gather_nd``, ``ops.gather``,
                                            ``ops.TensorScatterElements``,
                                            ``ops.tensor_scatter_elements``, ``ops.ScatterNd``,
                                            ``ops.scatter_nd``, ``ops.unsorted_segment_sum`` /
                                            ``_max`` / ``_min`` / ``_prod`` (and their
                                            primitives)
:mod:`portagather.compat.onnx`              ONNX ``Gather``, ``GatherElements``, ``GatherND``,
                                            ``ScatterElements``, ``ScatterND``
:mod:`portagather.compat.torch`             ``torch.gather``, ``torch.take_along_dim``,
                                            ``torch.scatter``, ``torch.scatter_add``,
                                            ``torch.scatter_reduce``, ``torch.index_select``,
                                            ``torch.index_add``, ``torch.index_reduce``,
                                            ``torch.index_put``, ``torch.segment_reduce``
:mod:`portagather.compat.torch_scatter`     torch_scatter's ``scatter``, ``scatter_sum`` /
                                            ``_add`` / ``_mul`` / ``_mean`` / ``_min`` /
                                            ``_max``, ``segment_coo``, ``segment_csr`` (and
                                            their ``_sum`` / ``_add`` / ``_mean`` / ``_min`` /
                                            ``_max`` forms), ``gather_coo``, ``gather_csr``,
                                            ``scatter_std``, ``scatter_logsumexp``,
                                            ``scatter_softmax``, ``scatter_log_softmax``
==========================================  ===================================================

The functions take arrays of any backend portagather supports (NumPy, JAX, PyTorch, Dask,
ndonnx, array-api-strict) and return an array of the same backend; none of them imports the
library it imitates. Each function's docstring says what, if anything, differs from the
original.
"""

from . import mindspore, onnx, tensorflow, torch, torch_scatter

__all__ = ["mindspore", "onnx", "tensorflow", "torch", "torch_scatter"]
