"""The updates of a scatter: an array of the data's library, or Python values the data's
dtype holds exactly; of a shape that fits the gather the scatter inverts, in the data's
dtype (docs/contract.md, S5 and S8)."""

from __future__ import annotations

from typing import Any

import array_api_compat as aac

from ._arrays import device_for_new, dtype_name
from ._python_values import casts_safely, check_exact_values, is_array, python_values, shown


class Updates:
    """The updates of a scatter: an array of the data's namespace, or checked Python values."""

    __slots__ = ("data_name", "given", "name", "values", "xp")

    def __init__(self, xp: Any, data: Any, data_name: str, updates: Any, name: str) -> None:
        self.xp, self.name, self.data_name = xp, name, data_name
        self.given = updates
        if is_array(updates):
            # `data` as the caller gave it: data given as Python values takes the index's
            # library, whose arrays the updates must then be (not NumPy's, which holds them).
            if type(updates) is not type(data) and aac.array_namespace(updates) is not xp:
                library = (
                    f"{type(data).__module__}.{type(data).__name__}"
                    if is_array(data)
                    else f"the index's library, {getattr(xp, '__name__', xp)}"
                )
                msg = (
                    f"{name} must be an array of the same library as {data_name}; got "
                    f"{type(updates).__module__}.{type(updates).__name__} and {library}"
                )
                raise TypeError(msg)
            self.values: Any = None
        else:
            self.values = python_values(updates, name, text=True)

    @property
    def shape(self) -> tuple[int, ...]:
        source = self.given if self.values is None else self.values
        return tuple(source.shape)

    def check_shape(self, shape: tuple[int, ...], mode: str) -> None:
        given = self.shape
        if mode == "block":
            fits = len(given) == len(shape) and all(
                g >= s for g, s in zip(given, shape, strict=True)
            )
            wanted = f"at least {shape} on every axis (index.shape)"
        elif mode == "broadcast":
            fits = len(given) <= len(shape) and all(
                g in (1, s) for g, s in zip(given[::-1], shape[::-1], strict=False)
            )
            wanted = f"broadcastable to {shape}"
        else:
            fits = given == shape
            wanted = f"{shape}"
        if not fits:
            msg = f"{self.name}.shape must be {wanted}; got {given}"
            raise ValueError(msg)

    def check_dtype(self, dtype: Any) -> None:
        if self.values is not None:
            return
        xp, updates = self.xp, self.given
        if updates.dtype != dtype and not casts_safely(xp, updates.dtype, dtype):
            msg = (
                f"{self.name} must have a dtype that casts safely to {self.data_name}.dtype = "
                f"{dtype_name(dtype)}; got {dtype_name(updates.dtype)}"
            )
            raise TypeError(msg)

    def array(self, data: Any, shape: tuple[int, ...], mode: str) -> Any:
        """The updates as an array of data's namespace and dtype, of the gather's result
        `shape` (Python values checked to be held exactly by data's dtype first)."""
        xp = self.xp
        if self.values is None:
            updates = self.given
        else:
            check_exact_values(self.values, data.dtype, self.name, self.data_name, self.given)
            values = self.values
            if values.dtype == object:  # huge ints into a floating dtype: as Python floats
                values = values.astype(float)
            try:
                updates = xp.asarray(values, dtype=data.dtype, device=device_for_new(data))
            except (TypeError, ValueError, OverflowError) as err:
                wanted = dtype_name(data.dtype)
                msg = (
                    f"{self.name} must be values that {self.data_name}.dtype = {wanted} holds "
                    f"exactly, or an array; got {shown(self.given)} ({err})"
                )
                raise TypeError(msg) from None
        if updates.dtype != data.dtype:
            updates = xp.astype(updates, data.dtype)
        if tuple(updates.shape) != shape:
            if mode == "block":
                updates = updates[tuple(slice(0, s) for s in shape)]
            else:
                updates = xp.broadcast_to(updates, shape)
        return updates


def updates_array(xp: Any, updates: Any, data: Any, name: str, data_name: str) -> Any:
    """`updates` as an array of data's namespace and dtype, of any shape: the kinds, dtype and
    value checks of a scatter's updates (for front ends and the segment reductions, which
    check shapes their own way)."""
    given = Updates(xp, data, data_name, updates, name)
    given.check_dtype(data.dtype)
    return given.array(data, given.shape, "exact")
