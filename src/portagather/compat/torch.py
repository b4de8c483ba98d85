"""``torch.gather`` and ``torch.take_along_dim`` with PyTorch's signatures, on any backend.

Port by changing the import::

    from portagather.compat import torch as pgt

What differs from PyTorch:

- The result is an array of the backend of the inputs (a ``torch.Tensor`` only for tensors).
- A bad index raises :class:`IndexError` (PyTorch: ``RuntimeError``).
- ``gather`` follows PyTorch in rejecting negative indices. Where the values can be read now
  (NumPy, PyTorch, concrete JAX arrays) the message is PyTorch's; on Dask and under JAX
  tracing a negative value ``v`` is passed to the core as ``v - n``, which is out of range
  there too, so the lazy or ``checkify`` error shows that shifted value.
- ``sparse_grad`` and ``out`` are not supported.
"""

from __future__ import annotations

import math
from typing import Any

from .. import _api
from .._arrays import as_arrays
from .._dispatch import engine_for
from ._common import as_int

__all__ = ["gather", "take_along_dim"]


def gather(input: Any, dim: int, index: Any) -> Any:
    """``torch.gather``: ``out[i] = input[i_0, ..., index[i], ..., i_{n-1}]`` (at `dim`).

    ``index`` has the rank of `input` and ``index.shape[d] <= input.shape[d]`` for
    ``d != dim`` (a smaller index reads the leading block); values are valid in
    ``[0, input.shape[dim])``.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> pgt.gather(np.array([[1, 2], [3, 4]]), 1, np.array([[0, 0], [1, 0]]))
    array([[1, 1],
           [4, 3]])
    >>> pgt.gather(np.array([[1, 2], [3, 4]]), 1, np.array([[-1]]))
    Traceback (most recent call last):
    ...
    IndexError: index -1 is out of bounds for dimension 1 with size 2
    """
    xp, input, index = as_arrays(input, index, "input", "index")
    shape = tuple(input.shape)
    dim = as_int(dim)
    if isinstance(dim, int) and -len(shape) <= dim < len(shape) and _signed(xp, index):
        n = shape[dim]
        engine = engine_for(xp)
        if engine.index_access(index) == "now":
            # PyTorch's valid range is [0, n), and its message names the value it met.
            if math.prod(index.shape):
                low, high = int(xp.min(index)), int(xp.max(index))
                if low < 0 or high >= n:
                    value = low if low < 0 else high
                    msg = f"index {value} is out of bounds for dimension {dim} with size {n}"
                    raise IndexError(msg)
        else:  # checked later: a negative value is moved below -n, in a width that holds it
            index = xp.astype(index, engine.wide_index_dtype(xp))
            index = xp.where(index < 0, index - n, index)
    return _api.gather_d(input, dim, index)


def take_along_dim(input: Any, indices: Any, dim: int | None = None) -> Any:
    """``torch.take_along_dim``: ``take_along_axis`` with broadcasting; ``dim=None`` flattens.

    Values are valid in ``[-n, n)``, negatives counting from the end, as in PyTorch; with
    ``dim=None`` (the flattened input), as in PyTorch, in ``[0, n)`` only.

    Examples
    --------
    >>> import numpy as np
    >>> from portagather.compat import torch as pgt
    >>> t = np.array([[10, 30, 20], [60, 40, 50]])
    >>> pgt.take_along_dim(t, np.argsort(t, axis=1), dim=1)
    array([[10, 20, 30],
           [40, 50, 60]])
    >>> pgt.take_along_dim(t, np.array([[0], [-1]]), dim=1)
    array([[10],
           [50]])
    >>> pgt.take_along_dim(t, np.array([5, 0]))
    array([50, 10])
    """
    if dim is None:  # PyTorch gathers from the flattened input, rejecting negatives
        xp, input, indices = as_arrays(input, indices, "input", "indices")
        return gather(xp.reshape(input, (-1,)), 0, xp.reshape(indices, (-1,)))
    return _api.take_along_axis(input, indices, axis=dim)


def _signed(xp: Any, index: Any) -> bool:
    try:
        return bool(xp.isdtype(index.dtype, "signed integer"))
    except (TypeError, ValueError):
        return False
