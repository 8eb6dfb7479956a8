"""Payload fingerprints: the same SHA-256 in every language.

One input rule per call, the same in every host: :func:`fingerprint` takes a
parsed value, :func:`fingerprint_json` a JSON text (str or UTF-8 bytes),
:func:`fingerprint_bytes` a raw body. No call guesses from the argument's type.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Iterable

from mintid._native import call, ffi
from mintid.errors import FingerprintInvalidJsonError

__all__ = [
    "Fingerprint",
    "canonical_json",
    "fingerprint",
    "fingerprint_bytes",
    "fingerprint_json",
]


class Fingerprint:
    """The SHA-256 fingerprint of a request payload; ``str()`` gives its text
    form ``sha256:`` + 43 base64url characters, which :meth:`parse` reads.
    """  # noqa: D205

    __slots__ = ("digest",)

    #: The 32 digest bytes.
    digest: builtins.bytes

    def __init__(self, digest: builtins.bytes) -> None:
        """Wrap 32 digest bytes."""
        if not isinstance(digest, builtins.bytes | bytearray | memoryview):
            raise TypeError(f"digest must be bytes, got {type(digest).__name__}")
        # Checked by the core, which reports a wrong length.
        call(ffi.fingerprint_to_text, builtins.bytes(digest))
        self.digest = builtins.bytes(digest)

    @classmethod
    def _of_core(cls, digest: builtins.bytes) -> Fingerprint:
        """Wrap a digest the core made or returned, which it already checked."""
        made = cls.__new__(cls)
        made.digest = digest
        return made

    @classmethod
    def parse(cls, text: str | builtins.bytes) -> Fingerprint:
        """Read the text form ``sha256:...``."""
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        if not isinstance(raw, builtins.bytes | bytearray | memoryview):
            raise TypeError(f"text must be str or bytes, got {type(text).__name__}")
        return cls._of_core(call(ffi.fingerprint_parse, builtins.bytes(raw)))

    def __str__(self) -> str:
        """The text form ``sha256:...``."""
        return call(ffi.fingerprint_to_text, self.digest)

    @property
    def text(self) -> str:
        """The text form ``sha256:...`` (as ``str()``; ``text`` in Kotlin and JS too)."""
        return str(self)

    def __repr__(self) -> str:
        """Show the text form."""
        return f"Fingerprint({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        """Fingerprints are equal when their digests are."""
        if not isinstance(other, Fingerprint):
            return NotImplemented
        return self.digest == other.digest

    def __hash__(self) -> int:
        """Hash of the digest."""
        return hash(self.digest)


def _pointers(name: str, pointers: Iterable[str]) -> list[str]:
    if isinstance(pointers, str):
        raise TypeError(f"{name} must be a list of JSON Pointers, not one str")
    listed = list(pointers)
    for pointer in listed:
        if not isinstance(pointer, str):
            raise TypeError(f"{name} must hold str JSON Pointers, got {type(pointer).__name__}")
    return listed


def _text_bytes(text: str | builtins.bytes) -> builtins.bytes:
    """The UTF-8 bytes of a JSON text given as str or bytes."""
    if isinstance(text, str):
        return text.encode("utf-8", "surrogatepass")
    if isinstance(text, builtins.bytes | bytearray | memoryview):
        return builtins.bytes(text)
    raise TypeError(f"text must be str or bytes, got {type(text).__name__}")


def fingerprint(
    value: object, *, include: Iterable[str] = (), exclude: Iterable[str] = ()
) -> Fingerprint:
    """The fingerprint of a parsed value (``dict``, ``list``, numbers, ...).

    The value is written with ``json.dumps(..., allow_nan=False)`` (every
    non-ASCII character escaped, so a lone surrogate reaches the core, which
    refuses it as in every language) and canonicalised by the core (RFC 8785) before
    hashing, so the same document hashes the same in every language,
    whatever its key order or spacing. JSON text is never parsed here: a
    value that is one ``str`` raises :class:`~mintid.FingerprintStringValueError`
    (it could be meant as JSON text, which :func:`fingerprint_json` takes),
    and ``bytes`` raise :class:`~mintid.FingerprintInvalidJsonError` (use
    :func:`fingerprint_json` or :func:`fingerprint_bytes`). ``include`` and
    ``exclude`` are JSON Pointers (``/meta/trace_id``) selecting the fields
    that count.
    """
    if isinstance(value, builtins.bytes | bytearray | memoryview):
        raise FingerprintInvalidJsonError(
            "the value is bytes; pass JSON text to fingerprint_json or a raw body "
            "to fingerprint_bytes"
        )
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise FingerprintInvalidJsonError(f"the value cannot be written as JSON: {error}") from None
    digest = call(
        ffi.fingerprint_value,
        text.encode("ascii"),
        _pointers("include", include),
        _pointers("exclude", exclude),
    )
    return Fingerprint._of_core(digest)


def fingerprint_json(
    text: str | builtins.bytes, *, include: Iterable[str] = (), exclude: Iterable[str] = ()
) -> Fingerprint:
    """The fingerprint of a JSON text (str, or UTF-8 bytes such as a request body)."""
    digest = call(
        ffi.fingerprint_json,
        _text_bytes(text),
        _pointers("include", include),
        _pointers("exclude", exclude),
    )
    return Fingerprint._of_core(digest)


def fingerprint_bytes(raw: builtins.bytes) -> Fingerprint:
    """The fingerprint of a raw, non-JSON body (SHA-256 of a domain tag and the bytes)."""
    if not isinstance(raw, builtins.bytes | bytearray | memoryview):
        raise TypeError(f"raw must be bytes, got {type(raw).__name__}")
    return Fingerprint._of_core(call(ffi.fingerprint_bytes, builtins.bytes(raw)))


def canonical_json(
    text: str | builtins.bytes, *, include: Iterable[str] = (), exclude: Iterable[str] = ()
) -> str:
    """The RFC 8785 canonical JSON that :func:`fingerprint_json` hashes for a JSON text."""
    return call(
        ffi.fingerprint_canonical_json,
        _text_bytes(text),
        _pointers("include", include),
        _pointers("exclude", exclude),
    )
