"""The ``_ms`` names that became ``_millis`` (the snake case of the other hosts' ``millis``).

One mechanism for the whole package: :func:`millis_renamed` on a public function or class keeps
each old keyword argument, attribute, property and method name of :data:`RENAMED` working with a
:class:`DeprecationWarning`; :func:`module_getattr` does the same for a module's constants.
The old names go in the next release after this one.
"""

from __future__ import annotations

import functools
import sys
import warnings
from types import FunctionType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final, TypeVar

    _T = TypeVar("_T")

__all__ = ["RENAMED", "millis_renamed", "module_getattr"]

#: The code flag of an ``async def`` (``inspect.CO_COROUTINE``, without importing ``inspect``).
_CO_COROUTINE: Final = 0x80

#: Every public name whose old spelling (``…_ms``, ``…_MS``) still works.
RENAMED: Final = frozenset(
    {
        "DEFAULT_GRANT_TTL_MILLIS",
        "MINTID_EPOCH_MILLIS",
        "acquired_millis",
        "backoff_millis",
        "base_backoff_millis",
        "claim_millis",
        "claimed_until_millis",
        "created_millis",
        "epoch_millis",
        "expires_at_unix_millis",
        "expires_millis",
        "grow_below_millis",
        "high_water_millis",
        "key_created_millis",
        "lasted_millis",
        "lease_deadline_millis",
        "lease_millis",
        "lifetime_millis",
        "max_age_millis",
        "max_backoff_millis",
        "max_skew_millis",
        "max_start_wait_millis",
        "max_wait_millis",
        "next_attempt_millis",
        "next_renewal_at_millis",
        "now_millis",
        "now_unix_millis",
        "pause_millis",
        "poll_millis",
        "ready_at_millis",
        "remaining_millis",
        "renew_interval_millis",
        "renew_retry_millis",
        "retention_millis",
        "retry_after_millis",
        "safety_margin_millis",
        "sent_before_millis",
        "shrink_above_millis",
        "start_after_millis",
        "starting_after_unix_millis",
        "stop_at_millis",
        "tick_millis",
        "timeout_millis",
        "ttl_millis",
        "unix_millis",
        "waited_millis",
        "with_epoch_millis",
    }
)


def old_name(new: str) -> str:
    """The spelling ``new`` had before: ``lease_millis`` was ``lease_ms``."""
    if new.endswith("_MILLIS"):
        return new.removesuffix("_MILLIS") + "_MS"
    return new.removesuffix("_millis") + "_ms"


_NEW_BY_OLD: Final = {old_name(new): new for new in RENAMED}


def _warn(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated, use {new}", DeprecationWarning, stacklevel=3)


def _keyword_renames(function: Callable[..., Any]) -> dict[str, str]:
    code = getattr(function, "__code__", None)
    if code is None:
        return {}
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    return {old_name(name): name for name in names if name in RENAMED}


def _renamed_keywords(
    function: Callable[..., Any], renames: dict[str, str], kwargs: dict[str, Any]
) -> dict[str, Any]:
    for old, new in renames.items():
        if old in kwargs:
            if new in kwargs:
                raise TypeError(f"{function.__qualname__}() got both {old} and {new}")
            warnings.warn(
                f"the keyword {old} of {function.__qualname__}() is deprecated, use {new}",
                DeprecationWarning,
                stacklevel=4,
            )
            kwargs[new] = kwargs.pop(old)
    return kwargs


def _accepting_old_keywords(function: Callable[..., Any]) -> Callable[..., Any]:
    renames = _keyword_renames(function)
    if not renames:
        return function
    old = renames.keys()

    if function.__code__.co_flags & _CO_COROUTINE:

        @functools.wraps(function)
        async def awaited(*args: Any, **kwargs: Any) -> Any:
            if kwargs and not old.isdisjoint(kwargs):
                kwargs = _renamed_keywords(function, renames, kwargs)
            return await function(*args, **kwargs)

        return awaited

    @functools.wraps(function)
    def called(*args: Any, **kwargs: Any) -> Any:
        if kwargs and not old.isdisjoint(kwargs):
            kwargs = _renamed_keywords(function, renames, kwargs)
        return function(*args, **kwargs)

    return called


class _OldName:
    """A class attribute reading the renamed one, with a warning."""

    def __init__(self, old: str, new: str) -> None:
        self._old = old
        self._new = new

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        cls = type(instance) if owner is None else owner
        _warn(f"{cls.__name__}.{self._old}", self._new)
        return getattr(cls if instance is None else instance, self._new)


def millis_renamed(target: _T) -> _T:
    """Keep the old ``_ms`` names of ``target`` (a function or a class) working, with a warning.

    A function accepts each renamed keyword argument by its old name too. A class gets the
    same for each of its methods (``__init__`` included), and an attribute under each old
    name of its renamed attributes, properties, methods and constants. Put it above
    ``@dataclass``, which makes the ``__init__`` it wraps.
    """
    if not isinstance(target, type):
        return _accepting_old_keywords(target)  # type: ignore[arg-type, return-value]
    members = vars(target)
    for name, member in list(members.items()):
        if isinstance(member, (staticmethod, classmethod)):
            wrapped = _accepting_old_keywords(member.__func__)
            if wrapped is not member.__func__:
                setattr(target, name, type(member)(wrapped))
        elif isinstance(member, FunctionType):
            wrapped = _accepting_old_keywords(member)
            if wrapped is not member:
                setattr(target, name, wrapped)
    names = set(members) | set(members.get("__annotations__", {}))
    for new in names & RENAMED:
        old = old_name(new)
        if old not in members:
            setattr(target, old, _OldName(old, new))
    return target


def module_getattr(module: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` reading each renamed constant by its old name, with a warning."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (the module hook's own name)
        new = _NEW_BY_OLD.get(name)
        namespace = vars(sys.modules[module])
        if new is None or new not in namespace:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        _warn(f"{module}.{name}", new)
        return namespace[new]

    return __getattr__
