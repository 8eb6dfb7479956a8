"""The Snowflake generator: :class:`Snowflake`.

Apart from :mod:`mintid._snowflake` (layouts, parts, text forms) so that a
program's first ID loads this module, :mod:`mintid._buffer` and the light
loader (:mod:`mintid._library`) and nothing else: a generator in a preset layout
with the core's default policies calls the light entry points
(``mintid_light_snowflake_*``); one with a layout object, a policy of its own,
``starting_after_unix_millis`` or a test clock, the generated bindings. Both
are the core's generator, with its rules and errors.
"""

from __future__ import annotations

import _thread
import ctypes
import time

from mintid._buffer import Buffer, register_for_fork
from mintid._library import Answers, entry
from mintid._native import call, check_uint, ffi, ids_from_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from mintid._policy import RollbackPolicy, SequencePolicy
    from mintid._snowflake import SnowflakeLayout, SnowflakeParts
    from mintid.testing import ManualClock

__all__ = ["Snowflake"]

_time_ns = time.time_ns

_HANDLE = ctypes.c_void_p
_U32 = ctypes.c_uint32
_U64 = ctypes.c_uint64
_SIZE = ctypes.c_size_t
_NEW = entry(
    "mintid_light_snowflake_new",
    _HANDLE,
    ctypes.c_char_p,
    _SIZE,
    _U64,
    ctypes.c_uint8,
    _U64,
    _HANDLE,
    _SIZE,
    ctypes.POINTER(_SIZE),
)
_BATCH = entry("mintid_light_snowflake_batch", _SIZE, _HANDLE, _U32, _HANDLE, _SIZE)
_IDS = entry("mintid_light_snowflake_ids", _SIZE, _HANDLE, _U32, _HANDLE, _SIZE)
_WORKER = entry("mintid_light_snowflake_worker", _U64, _HANDLE)
_HIGH_WATER = entry("mintid_light_snowflake_high_water", ctypes.c_uint8, _HANDLE, ctypes.c_void_p)
_FREE = entry("mintid_light_snowflake_free", None, _HANDLE)


class _LightCore:
    """The core's generator in a preset layout with its default policies, through
    the light entry points.
    """  # noqa: D205

    __slots__ = ("_answers", "_handle")

    def __init__(self, preset: str, worker: int, after_id: int | None) -> None:
        self._answers = Answers()
        name = preset.encode("utf-8", "surrogatepass")
        length = _SIZE()
        cap = 256
        while True:
            out = ctypes.create_string_buffer(cap)
            handle = _NEW(
                name, len(name), worker, after_id is not None, after_id or 0, out, cap, length
            )
            if handle or length.value <= cap:
                break
            cap = length.value  # a refusal longer than the buffer: nothing was made
        if not handle:
            from mintid._library import refusal

            raise refusal(ctypes.string_at(out, length.value))
        self._handle = handle

    def batch(self, handed_out: int) -> tuple[list[int], int]:
        raw = self._answers.take(_BATCH, self._handle, handed_out)
        return ids_from_bytes(raw[8:]), int.from_bytes(raw[:8], "little")

    def next_ids(self, count: int) -> list[int]:
        self._answers.reserve(9 + 8 * count)
        return ids_from_bytes(self._answers.take(_IDS, self._handle, count)[8:])

    def worker(self) -> int:
        return int(_WORKER(self._handle))

    def high_water(self) -> int | None:
        value = _U64()
        return value.value if _HIGH_WATER(self._handle, ctypes.byref(value)) else None

    def __del__(self) -> None:
        if getattr(self, "_handle", None):
            _FREE(self._handle)


class _GeneratedCore:
    """The core's generator through the generated bindings."""

    __slots__ = ("_core",)

    def __init__(self, core: ffi.Snowflake) -> None:
        self._core = core

    def batch(self, handed_out: int) -> tuple[list[int], int]:
        ids = ids_from_bytes(call(self._core.next_batch, handed_out))
        fresh_until = ids[0]
        del ids[0]
        return ids, fresh_until

    def next_ids(self, count: int) -> list[int]:
        return ids_from_bytes(call(self._core.next_bytes, count))

    def worker(self) -> int:
        return self._core.worker()

    def high_water(self) -> int | None:
        return self._core.high_water()


_Core = _LightCore | _GeneratedCore


class _IdBuffer(Buffer[int]):
    __slots__ = ("_core",)

    def __init__(self, core: _Core, unbuffered: bool) -> None:
        super().__init__(_thread.allocate_lock(), unbuffered)
        self._core = core

    def _fetch(self, handed_out: int) -> tuple[list[int], int]:
        return self._core.batch(handed_out)

    def _fetch_one(self) -> int:
        return self._core.next_ids(1)[0]


class Snowflake:
    """A Snowflake ID generator for one worker.

    Every ID it hands out is unique and greater than the one before, also
    when threads share it, and its tick is the clock's current one (IDs are
    fetched from the core in batches; a batch whose tick has passed is
    dropped, not served). After ``os.fork()`` the child's copy refuses to
    generate (:class:`~mintid.SnowflakeForkedError`) until
    :meth:`set_worker` gives it a worker id of its own.

    ``layout`` is a :class:`SnowflakeLayout` or a preset name. ``rollback``
    defaults to waiting out a clock rollback of up to 5 ms, ``sequence`` to
    waiting for the next tick when one is used up. ``starting_after`` (an ID)
    and ``starting_after_unix_millis`` make a restarted worker continue above
    what it issued before. ``clock`` (a :class:`mintid.testing.ManualClock`)
    makes the generator deterministic and unbuffered, for tests.
    """

    __slots__ = (
        "__weakref__",
        "_buffer",
        "_core",
        "_forked",
        "_layout",
        "_options",
    )

    def __init__(
        self,
        worker: int,
        layout: SnowflakeLayout | str = "classic",
        *,
        rollback: RollbackPolicy | None = None,
        sequence: SequencePolicy | None = None,
        starting_after: int | None = None,
        starting_after_unix_millis: int | None = None,
        clock: ManualClock | None = None,
    ) -> None:
        """Create a generator for ``worker`` (see the class documentation)."""
        if not isinstance(layout, str):
            from mintid._snowflake import SnowflakeLayout

            if not isinstance(layout, SnowflakeLayout):
                raise TypeError(
                    f"layout must be a SnowflakeLayout or str, got {type(layout).__name__}"
                )
        if rollback is not None or sequence is not None:
            from mintid._policy import RollbackPolicy, SequencePolicy

            if rollback is not None and not isinstance(rollback, RollbackPolicy):
                raise TypeError(f"rollback must be a RollbackPolicy, got {type(rollback).__name__}")
            if sequence is not None and not isinstance(sequence, SequencePolicy):
                raise TypeError(f"sequence must be a SequencePolicy, got {type(sequence).__name__}")
        if clock is not None:
            from mintid.testing import ManualClock

            if not isinstance(clock, ManualClock):
                raise TypeError(f"clock must be a ManualClock, got {type(clock).__name__}")
        # A preset's name until the layout object is needed (the light path needs none).
        self._layout: SnowflakeLayout | str = layout
        self._options = (rollback, sequence, clock)
        self._forked = False
        self._start(
            check_uint("worker", worker),
            None if starting_after is None else check_uint("starting_after", starting_after),
            None
            if starting_after_unix_millis is None
            else check_uint("starting_after_unix_millis", starting_after_unix_millis),
        )
        register_for_fork(self)

    def _start(self, worker: int, after_id: int | None, after_unix_millis: int | None) -> None:
        rollback, sequence, clock = self._options
        core: _Core
        if (
            isinstance(self._layout, str)
            and rollback is None
            and sequence is None
            and clock is None
            and after_unix_millis is None
        ):
            core = _LightCore(self._layout, worker, after_id)
        else:
            core = _GeneratedCore(
                call(
                    ffi.Snowflake,
                    self.layout._core,
                    worker,
                    None if rollback is None else rollback._to_ffi(),
                    None if sequence is None else sequence._to_ffi(),
                    after_id,
                    after_unix_millis,
                    None if clock is None else clock._core,
                )
            )
        self._core = core
        self._buffer = _IdBuffer(core, unbuffered=clock is not None)

    def next_id(self) -> int:
        """The next ID."""
        batch, deadline = self._buffer._batch
        try:
            value = next(batch)
        except StopIteration:
            return self._next_slow()
        if _time_ns() < deadline:
            return value
        return self._next_slow()

    def _next_slow(self) -> int:
        self._check_not_forked()
        return self._buffer.take_slow()

    def _check_not_forked(self) -> None:
        if self._forked:
            from mintid.errors import SnowflakeForkedError

            raise SnowflakeForkedError(
                f"this generator (worker {self.worker}) was inherited across fork() and the "
                "parent still uses its worker id; call set_worker() with another one"
            )

    def next_ids(self, count: int) -> list[int]:
        """``count`` new consecutive IDs in one call (at most 65536)."""
        count = check_uint("count", count, 32)
        self._check_not_forked()
        with self._buffer._lock:
            self._buffer.drop()
            return self._core.next_ids(count)

    def decode(self, snowflake_id: int) -> SnowflakeParts:
        """The fields of an ID of this generator's layout."""
        return self.layout.decode(snowflake_id)

    def set_worker(self, worker: int) -> None:
        """Continue with another worker id, above every ID issued so far.

        A generator inherited across ``fork()`` must be given one (other than
        the parent's) before it generates again.
        """
        worker = check_uint("worker", worker)
        if self._forked and worker == self.worker:
            from mintid.errors import SnowflakeForkedError

            raise SnowflakeForkedError(
                f"worker {worker} is the parent process's; give the child another worker id"
            )
        with self._buffer._lock:
            self._buffer.drop()
            self._start(worker, self._core.high_water(), None)
            self._forked = False

    @property
    def worker(self) -> int:
        """The worker id in every ID."""
        return self._core.worker()

    @property
    def layout(self) -> SnowflakeLayout:
        """The layout of the IDs."""
        if isinstance(self._layout, str):
            from mintid._snowflake import SnowflakeLayout

            self._layout = SnowflakeLayout.preset(self._layout)
        return self._layout

    @property
    def high_water(self) -> int | None:
        """The highest ID the core generator issued (including buffered ones), if any.

        Save it and pass it as ``starting_after`` when the worker restarts.
        """
        return self._core.high_water()

    def _after_fork_in_child(self) -> None:
        self._forked = True
        self._buffer.reset_after_fork(_thread.allocate_lock())

    def __repr__(self) -> str:
        """Show worker and layout."""
        return f"Snowflake(worker={self.worker}, layout={self.layout!r})"
