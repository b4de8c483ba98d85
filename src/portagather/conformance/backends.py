"""Backends of the conformance suite, named as on the command line.

A backend is any importable module (or ``module:attribute`` object) that
``array_api_compat.array_namespace`` understands. Six are known by a short name and get small
conveniences (Dask arrays in small chunks, so every gather crosses chunk boundaries; the pip
extra that installs them); any other name is imported as it is, e.g. ``mylib.array_api``. A
module whose arrays are a known backend's (``array_api_compat.numpy`` makes NumPy arrays) is
checked as that backend, under the name it was given.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

# name: (module to import, the portagather extra that installs it)
KNOWN = {
    "numpy": ("numpy", None),
    "array_api_strict": ("array_api_strict", "strict"),
    "jax": ("jax.numpy", "jax"),
    "torch": ("torch", "torch"),
    "dask": ("dask.array", "dask"),
    "ndonnx": ("ndonnx", "ndonnx"),
}

ALL_DTYPES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip
INDEX_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


ANY_MODULE = "any other module that array-api-compat understands, e.g. array_api_compat.numpy"


def install_hint(name: str) -> str:
    extra = KNOWN.get(name, (None, None))[1]
    return f'pip install "portagather[{extra}]"' if extra else f"pip install {name}"


def needs(name: str) -> str:
    """What a known backend needs: ``pip install "portagather[jax]"``; NumPy comes along."""
    return install_hint(name) if KNOWN[name][1] else "installed with portagather"


def is_installed(name: str) -> bool:
    module = KNOWN.get(name, (name, None))[0].split(":")[0]
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing; "" or ".x" is no module
        return False


def unknown_backends(names: list[str]) -> list[str]:
    """The names that are neither a known backend nor an importable module: typos, mostly."""
    return [name for name in names if name not in KNOWN and not is_installed(name)]


def unknown_backend_message(name: str) -> str:
    """Why `name` is no backend, what it may have meant and which names are known."""
    close = difflib.get_close_matches(name, KNOWN, n=1)
    guess = f" (did you mean {close[0]!r}?)" if close else ""
    return (
        f"unknown backend {name!r}{guess}: it is not a known backend and no module of that "
        f"name can be imported. Known backends: {', '.join(KNOWN)}; or {ANY_MODULE}"
    )


def library_version(name: str) -> str | None:
    """The version of the array library behind backend `name`, if it says: JAX's for ``jax``
    (whose module is ``jax.numpy``), NumPy's for a loaded ``array_api_compat.numpy``."""
    library = _LOADED[name].name if name in _LOADED else name
    top = KNOWN.get(library, (library, None))[0].split(":")[0].split(".")[0]
    try:
        version = getattr(importlib.import_module(top), "__version__", None)
        return str(version) if version is not None else importlib.metadata.version(top)
    except (ImportError, importlib.metadata.PackageNotFoundError):
        return None


def installed_backends() -> tuple[list[str], list[str]]:
    """The known backends that can be imported here, and those that cannot."""
    found = [n for n in KNOWN if is_installed(n)]
    return found, [n for n in KNOWN if n not in found]


@dataclass
class Backend:
    """One backend: turns NumPy data into its arrays and back, and says what it holds.

    `name` is the known backend whose arrays these are (``numpy`` for a backend given as
    ``array_api_compat.numpy``), else the module's name as given.
    """

    name: str
    xp: Any = field(repr=False)
    dtypes: tuple[str, ...] = ()
    index_dtypes: tuple[str, ...] = ()
    strings: bool = False

    @property
    def lazy(self) -> bool:
        return self.name == "dask"

    def asarray(self, values: Any, dtype: Any = None, chunks: Any = None) -> Any:
        """A backend array holding `values` (NumPy data or nested lists).

        On Dask, `chunks` (Dask's explicit form, one tuple of sizes per axis) lays it out;
        by default every axis is split in two, so that every gather crosses chunks.
        """
        values = np.array(values, dtype=dtype)  # always a fresh copy
        if self.name == "dask":
            import dask.array as da

            if chunks is None:
                chunks = tuple(max(1, (s + 1) // 2) for s in values.shape)
            return da.from_array(values, chunks=chunks)
        if self.name == "torch":
            import torch

            return torch.asarray(values)
        return self.xp.asarray(values)

    def to_numpy(self, array: Any) -> npt.NDArray[Any]:
        if self.name == "dask":
            return np.asarray(array.compute())
        if self.name == "ndonnx":
            return np.asarray(array.unwrap_numpy())
        if self.name == "torch":
            return np.asarray(array.detach().cpu().numpy())
        if isinstance(array, np.ndarray):
            return array
        try:
            return np.asarray(np.from_dlpack(array))
        except (TypeError, RuntimeError, BufferError, AttributeError):
            return np.asarray(array)


def _holds(backend: Backend, dtype: str) -> bool:
    """Whether the backend keeps `dtype` as it is (JAX without x64 turns int64 into int32;
    array-api-strict refuses float16, ndonnx complex numbers)."""
    try:
        array = backend.asarray(np.zeros(2, dtype=dtype))
        # A namespace may leave out a dtype its arrays hold: Dask's has no float16.
        return bool(array.dtype == getattr(backend.xp, dtype, np.dtype(dtype)))
    except Exception:  # a backend may refuse a dtype in many ways
        return False


def _holds_strings(backend: Backend) -> bool:
    try:
        array = backend.asarray(np.array(["a", "b"]))
        return bool(backend.to_numpy(array).dtype.kind == "U")
    except Exception:
        return False


def _library(name: str, xp: object) -> str:
    """The known backend whose arrays namespace `xp` makes, else `name`."""
    if name in KNOWN:
        return name
    import array_api_compat as aac

    makes: dict[str, Callable[[Any], bool]] = {
        "numpy": aac.is_numpy_namespace,
        "array_api_strict": aac.is_array_api_strict_namespace,
        "jax": aac.is_jax_namespace,
        "torch": aac.is_torch_namespace,
        "dask": aac.is_dask_namespace,
        "ndonnx": aac.is_ndonnx_namespace,
    }
    return next((known for known, test in makes.items() if test(xp)), name)


_LOADED: dict[str, Backend] = {}


def load_backend(name: str) -> Backend:
    """Import backend `name` (raises ImportError naming the pip command when it is missing)."""
    if name in _LOADED:
        return _LOADED[name]
    target = KNOWN.get(name, (name, None))[0]
    module_name, _, attribute = target.partition(":")
    try:
        obj = importlib.import_module(module_name)
    except ImportError as err:
        msg = f"backend {name!r} cannot be imported ({err}); {install_hint(name)}"
        raise ImportError(msg) from err
    if attribute:
        obj = getattr(obj, attribute)
    import array_api_compat

    xp = array_api_compat.array_namespace(obj.asarray(np.zeros(1, dtype=np.float32)))
    backend = Backend(_library(name, xp), xp)
    backend.dtypes = tuple(d for d in ALL_DTYPES if _holds(backend, d))
    backend.index_dtypes = tuple(d for d in INDEX_DTYPES if d in backend.dtypes)
    backend.strings = _holds_strings(backend)
    _LOADED[name] = backend
    return backend


def known_backends() -> list[Backend]:
    """Every known backend, loaded; a missing one raises ImportError naming its pip command."""
    return [load_backend(name) for name in KNOWN]
