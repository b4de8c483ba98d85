"""ndonnx: arrays that are either values or inputs of an ONNX graph being built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._errors import BadIndex
from .._indices import IndexAccess
from .base import Engine


class NdonnxEngine(Engine):
    """ndonnx: ONNX's Gather takes int64; a symbolic array (a graph input) has no values."""

    int64_gathers = True

    def select_function(self, dtype: Any) -> Any:
        """ONNX Runtime has no ``Where`` for uint64; ndonnx then goes through float64 and loses
        every value above 2**53. Selecting by arithmetic (exact modulo 2**64) keeps them."""
        xp = self.xp
        if dtype != xp.uint64:
            return xp.where

        def select(condition: Any, x: Any, y: Any) -> Any:
            chosen = xp.astype(condition, xp.uint64)
            return x * chosen + y * (1 - chosen)

        return select

    def index_access(self, x: Any) -> IndexAccess:
        try:
            x.unwrap_numpy()
        except ValueError:
            return "none"
        return "now"

    def reads_cheaply(self, x: Any) -> bool:
        return False

    def enforce_lazily(
        self, bad: Any, indices: Any, report: BadIndex, result: Any,
        find_bad: Callable[[Any], Any] | None = None,
    ) -> Any:  # fmt: skip
        """A symbolic index: the values exist only when the ONNX model runs."""
        msg = (
            'bad_indices="error" cannot be enforced on symbolic arrays: ONNX has no operator '
            'that raises at run time; pass bad_indices="ignore", "clip", "wrap" or "unchecked"'
        )
        raise ValueError(msg)
