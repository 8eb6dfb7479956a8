"""Request IDs that a client mints and a server verifies.

* Unsigned: any UUIDv7, checked for freshness (:meth:`RequestId.verify_unsigned`).
* Signed: a server :class:`KeyRing` issues a :class:`Grant` for a scope and
  an expiry; the client mints IDs from it offline (:meth:`RequestId.mint`),
  each a UUIDv7 with an HMAC-SHA256 tag; the server verifies them against the
  caller's scope (:meth:`RequestId.verify`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from uuid import UUID

from mintid._native import call, check_uint, ffi
from mintid._uuid_generator import uuid7

__all__ = ["Grant", "KeyRing", "RequestId"]


def _now_ms(now_millis: int | None) -> int:
    return (
        time.time_ns() // 1_000_000 if now_millis is None else check_uint("now_millis", now_millis)
    )


def _optional(name: str, value: int | None) -> int | None:
    return None if value is None else check_uint(name, value)


def _str(name: str, value: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def _secret(secret: bytes) -> bytes:
    if not isinstance(secret, bytes | bytearray | memoryview):
        raise TypeError(f"secret must be bytes, got {type(secret).__name__}")
    return bytes(secret)


@dataclass(frozen=True)
class Grant:
    """The right to mint request IDs for one scope until an expiry.

    ``text`` is what the server sends the client; the grant is a bearer
    secret of its scope until it expires.
    """

    #: The 58-character text.
    text: str
    #: The id of the server key it was derived from.
    key_id: int
    #: When it expires, in Unix milliseconds.
    expires_millis: int
    #: The 32-byte key its request IDs are tagged with.
    grant_key: bytes

    @classmethod
    def _of(cls, grant: ffi.Grant) -> Grant:
        return cls(grant.text, grant.key_id, grant.expires_millis, grant.grant_key)

    @classmethod
    def parse(cls, text: str) -> Grant:
        """Read the text of a grant."""
        return cls._of(call(ffi.grant_parse, _str("text", text)))

    def mint(self, value: UUID | None = None) -> RequestId:
        """A signed request ID for ``value`` (a UUIDv7; a new one by default)."""
        return RequestId.mint(self, value)

    def __str__(self) -> str:
        """The text of the grant."""
        return self.text

    def __repr__(self) -> str:
        """Show key id and expiry, never the key."""
        return f"Grant(key_id={self.key_id}, expires_millis={self.expires_millis})"


@dataclass(frozen=True)
class RequestId:
    """A signed request ID: a UUIDv7 with a tag from its grant's key."""

    #: The 58-character text.
    text: str
    #: The id of the server key of its grant.
    key_id: int
    #: When its grant expires, in Unix milliseconds.
    expires_millis: int
    #: The UUIDv7 it carries (not verified by reading).
    uuid: UUID
    #: The 16-byte tag.
    tag: bytes

    @classmethod
    def _of(cls, signed: ffi.SignedRequestId) -> RequestId:
        return cls(
            signed.text,
            signed.key_id,
            signed.expires_millis,
            UUID(bytes=signed.uuid),
            signed.tag,
        )

    @classmethod
    def mint(cls, grant: Grant | str, value: UUID | None = None) -> RequestId:
        """A signed request ID minted from ``grant`` (or its text) for
        ``value``, a UUIDv7 (by default a new one from :func:`mintid.uuid7`).
        """  # noqa: D205
        text = grant.text if isinstance(grant, Grant) else _str("grant", grant)
        made = uuid7() if value is None else value
        if not isinstance(made, UUID):
            raise TypeError(f"value must be a UUID, got {type(made).__name__}")
        return cls._of(call(ffi.grant_mint, text, made.bytes))

    @classmethod
    def parse(cls, text: str) -> RequestId:
        """Read a signed request ID without verifying it."""
        return cls._of(call(ffi.request_id_parse, _str("text", text)))

    @staticmethod
    def verify(
        text: str,
        ring: KeyRing,
        scope: str,
        *,
        now_millis: int | None = None,
        max_age_millis: int | None = None,
        max_skew_millis: int | None = None,
    ) -> UUID:
        """Verify a signed request ID for the caller's ``scope``; return its UUIDv7.

        Checks, in order: scope, form, key id, tag (constant time), grant
        expiry, freshness (``max_age_millis``, default one day; ``max_skew_millis``,
        default five minutes, both at ``now_millis``, default now). The first
        failure raises its :class:`~mintid.RequestIdError` subclass.
        """
        return ring.verify(
            text,
            scope,
            now_millis=now_millis,
            max_age_millis=max_age_millis,
            max_skew_millis=max_skew_millis,
        )

    @staticmethod
    def verify_unsigned(
        text: str,
        *,
        now_millis: int | None = None,
        max_age_millis: int | None = None,
        max_skew_millis: int | None = None,
    ) -> UUID:
        """Check an unsigned request ID (a UUIDv7 in any text form) for freshness."""
        raw = call(
            ffi.request_id_verify_unsigned,
            _str("text", text),
            _now_ms(now_millis),
            _optional("max_age_millis", max_age_millis),
            _optional("max_skew_millis", max_skew_millis),
        )
        return UUID(bytes=raw)

    def __str__(self) -> str:
        """The text of the ID."""
        return self.text


class KeyRing:
    """A server's secrets: the current key issues grants, every key verifies.

    Secrets are at least 32 random bytes, each with a numeric key id (0 to
    2^32-1). Rotate by adding a new current key; retire the old one once its
    grants have expired.
    """

    __slots__ = ("_core",)

    def __init__(self, key_id: int, secret: bytes) -> None:
        """A ring whose current key is ``secret`` with id ``key_id``."""
        self._core = call(ffi.KeyRing, check_uint("key_id", key_id, 32), _secret(secret))

    def add(self, key_id: int, secret: bytes) -> None:
        """Add a key that verifies but does not issue."""
        call(self._core.add, check_uint("key_id", key_id, 32), _secret(secret))

    def rotate(self, key_id: int, secret: bytes) -> None:
        """Make a new key current; the previous one verifies until retired."""
        call(self._core.rotate, check_uint("key_id", key_id, 32), _secret(secret))

    def retire(self, key_id: int) -> None:
        """Remove a key that is not current."""
        call(self._core.retire, check_uint("key_id", key_id, 32))

    @property
    def current_id(self) -> int:
        """The id of the current key."""
        return call(self._core.current_id)

    @property
    def key_ids(self) -> list[int]:
        """The ids of every key, the current one first."""
        return list(call(self._core.key_ids))

    def issue_grant(self, scope: str, expires_millis: int) -> Grant:
        """A grant for ``scope`` (1 to 64 bytes) until ``expires_millis`` (Unix ms)."""
        return Grant._of(
            call(
                self._core.issue_grant,
                _str("scope", scope),
                check_uint("expires_millis", expires_millis),
            )
        )

    def verify(
        self,
        text: str,
        scope: str,
        *,
        now_millis: int | None = None,
        max_age_millis: int | None = None,
        max_skew_millis: int | None = None,
    ) -> UUID:
        """Verify a signed request ID (see :meth:`RequestId.verify`)."""
        raw = call(
            self._core.verify,
            _str("text", text),
            _str("scope", scope),
            _now_ms(now_millis),
            _optional("max_age_millis", max_age_millis),
            _optional("max_skew_millis", max_skew_millis),
        )
        return UUID(bytes=raw)

    def __repr__(self) -> str:
        """Show the key ids, never the secrets."""
        return f"KeyRing(current_id={self.current_id}, key_ids={self.key_ids})"
