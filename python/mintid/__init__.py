"""mintid: unique IDs and exactly-once request rules, on one Rust core."""

import importlib.metadata

from mintid._ffi import base32_encode_u64 as _base32_encode_u64

__all__ = ["__version__", "base32_encode_u64"]

__version__ = importlib.metadata.version("mintid")


def base32_encode_u64(value: int) -> str:
    """Encode a 64-bit unsigned integer as 13 Crockford base32 digits."""
    return _base32_encode_u64(value)
