"""Type names shared by the public API: the array type, the policy names, the fill scalar."""

from __future__ import annotations

from typing import Any, Literal, TypeAlias, TypeVar

#: Any array of a namespace that follows the array API standard; a call returns the caller's type.
Array = TypeVar("Array")

#: The bad-index policies, with TensorFlow's spellings.
Policy: TypeAlias = Literal[
    "error", "ignore", "clip", "wrap", "unchecked", "ERROR", "IGNORE", "DEFAULT", ""
]

#: How a scatter combines an update with the element it lands on.
Reduction: TypeAlias = Literal["update", "add", "multiply", "min", "max"]

#: A fill value: a Python scalar, or a 0-d array (typed loosely: each library has its own).
Scalar: TypeAlias = bool | int | float | complex | str | Any

#: Index arguments that are not arrays yet: nested lists or tuples of ints, or one int.
IndexLike: TypeAlias = Any
