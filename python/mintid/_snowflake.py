"""Snowflake IDs: 64-bit, time-ordered, unique per worker (the generator: _snowflake_generator)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import ClassVar, Final

from mintid._native import call, check_uint, ffi

__all__ = [
    "SnowflakeLayout",
    "SnowflakeParts",
    "snowflake_from_base32",
    "snowflake_from_decimal",
    "snowflake_to_base32",
]

_UNIX_EPOCH: Final = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: The most IDs one refill asks for.

_time_ns = time.time_ns


def _datetime_of(unix_millis: int) -> datetime:
    return _UNIX_EPOCH + timedelta(milliseconds=unix_millis)


@dataclass(frozen=True)
class SnowflakeParts:
    """The fields of a decoded Snowflake ID."""

    #: The start of the ID's tick, in Unix milliseconds.
    unix_millis: int
    #: Ticks since the layout's epoch.
    tick: int
    #: The whole worker field (datacenter and worker together, if split).
    worker: int
    #: The sequence number within the tick.
    sequence: int

    @property
    def datetime(self) -> datetime:
        """The start of the ID's tick, in UTC."""
        return _datetime_of(self.unix_millis)


class SnowflakeLayout:
    """How the 63 usable bits of an ID are split, its epoch and its tick.

    From the most significant end: a zero sign bit, ``time_bits`` of ticks
    since the epoch, ``worker_bits`` of worker id (the top
    ``datacenter_bits`` of which may name a datacenter) and
    ``sequence_bits`` of sequence within the tick. Take a preset
    (:attr:`CLASSIC`, :attr:`TWITTER`, :attr:`DATACENTER_WORKER`,
    :attr:`SONYFLAKE_LIKE`, :attr:`JS_SAFE`, or :meth:`preset` by name) or
    build one; invalid widths raise
    :class:`~mintid.SnowflakeInvalidLayoutError`.
    """

    __slots__ = (
        "_core",
        "datacenter_bits",
        "epoch_millis",
        "max_id",
        "max_sequence",
        "max_worker",
        "sequence_bits",
        "tick_millis",
        "time_bits",
        "worker_bits",
    )

    #: The epoch of mintid's presets, 2025-01-01T00:00:00Z, in Unix milliseconds.
    MINTID_EPOCH_MILLIS: ClassVar[int] = 1_735_689_600_000
    #: 41 bits of 1 ms, 10 worker bits, 12 sequence bits from the mintid epoch.
    CLASSIC: ClassVar[SnowflakeLayout]
    #: Twitter's layout: 41/5+5/12 from Twitter's epoch.
    TWITTER: ClassVar[SnowflakeLayout]
    #: Hutool's 41/5+5/12 split from the mintid epoch.
    DATACENTER_WORKER: ClassVar[SnowflakeLayout]
    #: 39 bits of 10 ms ticks, 16 worker bits, 8 sequence bits.
    SONYFLAKE_LIKE: ClassVar[SnowflakeLayout]
    #: IDs below 2^53: 41 bits of 1 ms, 6 worker bits, 6 sequence bits.
    JS_SAFE: ClassVar[SnowflakeLayout]

    time_bits: int
    worker_bits: int
    sequence_bits: int
    datacenter_bits: int
    epoch_millis: int
    tick_millis: int
    max_worker: int
    max_sequence: int
    max_id: int

    def __init__(
        self,
        *,
        time_bits: int = 41,
        worker_bits: int = 10,
        sequence_bits: int = 12,
        epoch_millis: int = MINTID_EPOCH_MILLIS,
        tick_millis: int = 1,
        datacenter_bits: int = 0,
    ) -> None:
        """Build a layout (the defaults are the classic one)."""
        core = call(
            ffi.SnowflakeLayout,
            check_uint("time_bits", time_bits, 8),
            check_uint("worker_bits", worker_bits, 8),
            check_uint("sequence_bits", sequence_bits, 8),
            check_uint("epoch_millis", epoch_millis),
            check_uint("tick_millis", tick_millis),
        )
        if datacenter_bits:
            core = call(
                core.with_datacenter_bits, check_uint("datacenter_bits", datacenter_bits, 8)
            )
        self._load(core)

    def _load(self, core: ffi.SnowflakeLayout) -> None:
        self._core = core
        self.time_bits = core.time_bits()
        self.worker_bits = core.worker_bits()
        self.sequence_bits = core.sequence_bits()
        self.datacenter_bits = core.datacenter_bits()
        self.epoch_millis = core.epoch_millis()
        self.tick_millis = core.tick_millis()
        self.max_worker = core.max_worker()
        self.max_sequence = core.max_sequence()
        self.max_id = core.max_id()

    @classmethod
    def _from_core(cls, core: ffi.SnowflakeLayout) -> SnowflakeLayout:
        layout = cls.__new__(cls)
        layout._load(core)
        return layout

    @classmethod
    def preset(cls, name: str) -> SnowflakeLayout:
        """The preset called ``name`` (``classic``, ``twitter``, ``datacenter-worker``,
        ``sonyflake-like``, ``js-safe``; case and ``_`` for ``-`` ignored).
        """  # noqa: D205
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {type(name).__name__}")
        return cls._from_core(call(ffi.SnowflakeLayout.preset, name))

    @staticmethod
    def preset_names() -> list[str]:
        """The names of the presets."""
        return list(call(ffi.snowflake_preset_names))

    def with_datacenter_bits(self, datacenter_bits: int) -> SnowflakeLayout:
        """The same layout with the top ``datacenter_bits`` of the worker field as a datacenter."""
        bits = check_uint("datacenter_bits", datacenter_bits, 8)
        return self._from_core(call(self._core.with_datacenter_bits, bits))

    def with_epoch_millis(self, epoch_millis: int) -> SnowflakeLayout:
        """The same layout with another epoch (Unix milliseconds)."""
        return self._from_core(
            call(self._core.with_epoch_millis, check_uint("epoch_millis", epoch_millis))
        )

    @property
    def ids_per_tick(self) -> int:
        """How many IDs one worker can make per tick."""
        return self.max_sequence + 1

    @property
    def is_js_safe(self) -> bool:
        """Whether every ID is below 2^53 (exact in a JavaScript number)."""
        return bool(call(self._core.is_js_safe))

    @property
    def lifetime_millis(self) -> int:
        """How long the time field lasts from the epoch, in milliseconds."""
        return call(self._core.lifetime_millis)

    @property
    def expires_at_unix_millis(self) -> int:
        """The Unix millisecond at which the time field runs out."""
        return call(self._core.expires_at_unix_millis)

    @property
    def expires_at(self) -> datetime:
        """When the time field runs out, in UTC."""
        return _datetime_of(self.expires_at_unix_millis)

    def remaining_millis(self, now_unix_millis: int | None = None) -> int:
        """Milliseconds left (at ``now_unix_millis``, default now) until the time field runs out."""
        now = time.time_ns() // 1_000_000 if now_unix_millis is None else now_unix_millis
        return call(self._core.remaining_millis, check_uint("now_unix_millis", now))

    def worker_id(self, datacenter: int, worker: int) -> int:
        """The whole worker field for ``worker`` within ``datacenter``."""
        return call(
            self._core.worker_id,
            check_uint("datacenter", datacenter),
            check_uint("worker", worker),
        )

    def split_worker_id(self, worker_id: int) -> tuple[int, int]:
        """Split a whole worker field into ``(datacenter, worker)``."""
        split = call(self._core.split_worker_id, check_uint("worker_id", worker_id))
        return split.datacenter, split.worker

    def compose(self, unix_millis: int, worker: int, sequence: int) -> int:
        """The ID of ``sequence`` from ``worker`` in the tick containing ``unix_millis``."""
        return call(
            self._core.compose,
            check_uint("unix_millis", unix_millis),
            check_uint("worker", worker),
            check_uint("sequence", sequence),
        )

    def compose_tick(self, tick: int, worker: int, sequence: int) -> int:
        """The ID of ``sequence`` from ``worker`` in tick ``tick`` since the epoch."""
        return call(
            self._core.compose_tick,
            check_uint("tick", tick),
            check_uint("worker", worker),
            check_uint("sequence", sequence),
        )

    def decode(self, snowflake_id: int) -> SnowflakeParts:
        """The fields of an ID."""
        parts = call(self._core.decode, check_uint("snowflake_id", snowflake_id))
        return SnowflakeParts(parts.unix_millis, parts.tick, parts.worker, parts.sequence)

    def _fields(self) -> tuple[int, ...]:
        return (
            self.time_bits,
            self.worker_bits,
            self.sequence_bits,
            self.datacenter_bits,
            self.epoch_millis,
            self.tick_millis,
        )

    def __eq__(self, other: object) -> bool:
        """Layouts are equal when all their fields are."""
        if not isinstance(other, SnowflakeLayout):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        """Hash of the fields."""
        return hash(self._fields())

    def __repr__(self) -> str:
        """Show the fields."""
        return (
            f"SnowflakeLayout(time_bits={self.time_bits}, worker_bits={self.worker_bits}, "
            f"sequence_bits={self.sequence_bits}, epoch_millis={self.epoch_millis}, "
            f"tick_millis={self.tick_millis}, datacenter_bits={self.datacenter_bits})"
        )


SnowflakeLayout.CLASSIC = SnowflakeLayout.preset("classic")
SnowflakeLayout.TWITTER = SnowflakeLayout.preset("twitter")
SnowflakeLayout.DATACENTER_WORKER = SnowflakeLayout.preset("datacenter-worker")
SnowflakeLayout.SONYFLAKE_LIKE = SnowflakeLayout.preset("sonyflake-like")
SnowflakeLayout.JS_SAFE = SnowflakeLayout.preset("js-safe")


def snowflake_from_decimal(text: str) -> int:
    """Read an ID written in decimal digits (no sign, no spaces)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return call(ffi.snowflake_id_from_decimal, text)


def snowflake_from_base32(text: str) -> int:
    """Read an ID written as 13 Crockford base32 digits."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return call(ffi.snowflake_id_from_base32, text)


def snowflake_to_base32(snowflake_id: int) -> str:
    """Write an ID as 13 Crockford base32 digits (sortable like the IDs)."""
    return call(ffi.snowflake_id_to_base32, check_uint("snowflake_id", snowflake_id))
