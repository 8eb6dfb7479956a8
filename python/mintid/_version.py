"""The version of this package and of the Rust core inside its native library."""

from __future__ import annotations

__all__ = ["core_version", "package_version"]


def core_version() -> str:
    """The version of the Rust core (crate ``mintid``) inside this package's native library."""
    from mintid._native import ffi

    return str(ffi.core_version())


def package_version() -> str:
    """The version of the installed distribution ``mintid`` (``mintid.__version__``)."""
    import importlib.metadata

    return importlib.metadata.version("mintid")
