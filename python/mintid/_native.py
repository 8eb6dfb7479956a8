"""The bridge to the generated bindings: error translation and argument checks.

The generated module (``mintid._ffi``) is private; everything public goes
through the typed wrappers, which call it with :func:`call` so that a core
error surfaces as the matching :class:`~mintid.errors.MintidError` subclass.
"""

from __future__ import annotations

import sys
from array import array

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import ParamSpec, TypeVar

    from mintid._ffi import mintid_ffi as ffi
    from mintid.errors import MintidError

    P = ParamSpec("P")
    R = TypeVar("R")
else:

    class _Generated:
        """The generated module, imported on the first access of one of its names
        (a light path, :mod:`mintid._library`, may never need it); its names are
        then copied here, so later accesses are plain attribute reads.
        """  # noqa: D205

        def __getattr__(self, name: str) -> object:
            from mintid._ffi import mintid_ffi

            vars(self).update(vars(mintid_ffi))
            return getattr(mintid_ffi, name)

    ffi = _Generated()

__all__ = ["call", "check_uint", "ffi", "ids_from_bytes", "native_error"]


def call(function: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
    """Call into the native library, translating its errors to mintid's classes."""
    try:
        return function(*args, **kwargs)
    except (ffi.MintidError, ffi.InternalError) as error:
        raise native_error(error) from None


def native_error(error: Exception) -> MintidError:
    """The mintid error for an error of the generated bindings (``ffi.MintidError``
    or ``ffi.InternalError``), of the class its code names.
    """  # noqa: D205
    from mintid.errors import InternalError, error_class

    if not isinstance(error, ffi.MintidError):
        return InternalError(f"the native library failed: {error}")
    code = str(getattr(error, "code", "internal.panic"))
    detail = str(getattr(error, "detail", error))
    part: str | None = getattr(error, "part", None)
    position: int | None = getattr(error, "position", None)
    problem: str | None = getattr(error, "problem", None)
    return error_class(code)(detail, code, part=part, position=position, problem_name=problem)


def check_uint(name: str, value: int, bits: int = 64) -> int:
    """Return ``value`` if it is an int in 0..2^bits-1; else raise.

    A non-integer raises :class:`TypeError`; a negative integer
    :class:`~mintid.errors.ArgumentNegativeError`, a larger one
    :class:`~mintid.errors.ArgumentOutOfRangeError` (the core's codes, as in
    every host).
    """
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 0:
        from mintid.errors import ArgumentNegativeError

        raise ArgumentNegativeError(f"{name} must not be negative, got {value}")
    if value >= 1 << bits:
        from mintid.errors import ArgumentOutOfRangeError

        raise ArgumentOutOfRangeError(
            f"{name} must be an integer from 0 to 2^{bits}-1, got {value}"
        )
    return value


def ids_from_bytes(raw: bytes) -> list[int]:
    """64-bit IDs from the core's bulk form: 8 little-endian bytes each."""
    ids = array("Q", raw)
    if sys.byteorder == "big":
        ids.byteswap()
    return ids.tolist()
