"""Times and durations are ``_millis`` in every public name (the other hosts' ``millis``).

The old ``_ms`` names still work, each with a DeprecationWarning, through the one mechanism of
``mintid._renamed``; nothing public is still spelled ``_ms``.
"""

from __future__ import annotations

import asyncio
import inspect
import types
import warnings
from collections.abc import Iterator

import pytest

import mintid
import mintid.http
import mintid.store
import mintid.store.aio
from mintid._renamed import RENAMED, _OldName, millis_renamed

FP = mintid.fingerprint({"a": 1})
MODULES = (mintid, mintid.http, mintid.store, mintid.store.aio)


def public_members() -> Iterator[tuple[str, object]]:
    """Every public function, class and class member of the package."""
    for module in MODULES:
        for name in module.__all__:
            value = getattr(module, name)
            yield f"{module.__name__}.{name}", value
            if isinstance(value, type):
                for member, attribute in vars(value).items():
                    if not member.startswith("_") or member == "__init__":
                        yield f"{module.__name__}.{name}.{member}", attribute


def parameters(value: object) -> list[str]:
    function = value.__func__ if isinstance(value, (classmethod, staticmethod)) else value
    if not isinstance(function, types.FunctionType):
        return []
    return list(inspect.signature(function).parameters)


def test_an_old_keyword_still_works_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="lease_ms of RecordPolicy.__init__"):
        old = mintid.RecordPolicy(lease_ms=30_000)  # type: ignore[call-arg]
    assert old == mintid.RecordPolicy(lease_millis=30_000)
    policy = mintid.RecordPolicy()
    with pytest.warns(DeprecationWarning, match="now_ms of decide"):
        decision = mintid.decide(None, mintid.Incoming(FP), now_ms=5_000, policy=policy)  # type: ignore[call-arg]
    assert decision == mintid.decide(None, mintid.Incoming(FP), 5_000, policy)


def test_an_old_keyword_of_a_method_and_a_classmethod() -> None:
    ring = mintid.KeyRing(1, bytes(32))
    with pytest.warns(DeprecationWarning, match="expires_ms"):
        grant = ring.issue_grant("user:1", expires_ms=2_000_000_000_000)  # type: ignore[call-arg]
    assert grant.expires_millis == 2_000_000_000_000
    with pytest.warns(DeprecationWarning, match="unix_ms"):
        made = mintid.Uuid7.from_fields(unix_ms=5, rand_a=0, rand_b=0)  # type: ignore[call-arg]
    assert made.unix_millis == 5


def test_an_old_attribute_property_method_and_constant_still_read_with_a_warning() -> None:
    policy = mintid.RecordPolicy(lease_millis=30_000)
    with pytest.warns(
        DeprecationWarning, match="RecordPolicy.lease_ms is deprecated, use lease_millis"
    ):
        assert policy.lease_ms == 30_000  # type: ignore[attr-defined]
    layout = mintid.SnowflakeLayout()
    with pytest.warns(DeprecationWarning, match="expires_at_unix_ms"):
        assert layout.expires_at_unix_ms == layout.expires_at_unix_millis  # type: ignore[attr-defined]
    with pytest.warns(DeprecationWarning, match="with_epoch_ms"):
        assert layout.with_epoch_ms(0).epoch_millis == 0  # type: ignore[attr-defined]
    with pytest.warns(DeprecationWarning, match="MINTID_EPOCH_MS"):
        assert mintid.SnowflakeLayout.MINTID_EPOCH_MS == mintid.SnowflakeLayout.MINTID_EPOCH_MILLIS  # type: ignore[attr-defined]
    with pytest.warns(DeprecationWarning, match="DEFAULT_GRANT_TTL_MS"):
        assert mintid.http.DEFAULT_GRANT_TTL_MS == mintid.http.DEFAULT_GRANT_TTL_MILLIS
    with pytest.raises(AttributeError):
        _ = mintid.http.NO_SUCH_MS


def test_an_old_and_a_new_keyword_together_are_refused() -> None:
    with pytest.raises(TypeError, match="both lease_ms and lease_millis"):
        mintid.RecordPolicy(lease_ms=1, lease_millis=2)  # type: ignore[call-arg]


def test_the_new_names_give_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        policy = mintid.RecordPolicy(lease_millis=30_000, retention_millis=60_000)
        mintid.decide(None, mintid.Incoming(FP), 5_000, policy)
        assert policy.lease_millis == 30_000


def test_no_public_name_is_spelled_ms_and_every_renamed_one_exists() -> None:
    spelled_ms: list[str] = []
    found: set[str] = set()
    for where, value in public_members():
        if isinstance(value, _OldName):
            continue  # an old name kept for one release
        names = [where.rsplit(".", 1)[1], *parameters(value)]
        if isinstance(value, type):
            names += list(vars(value).get("__annotations__", {}))
        found.update(name for name in names if name in RENAMED)
        spelled_ms += [f"{where}: {name}" for name in names if name.lower().endswith("_ms")]
    assert spelled_ms == []
    assert sorted(RENAMED - found) == []


def test_an_async_function_stays_a_coroutine_function() -> None:
    @millis_renamed
    async def wait(pause_millis: int) -> int:
        return pause_millis

    assert inspect.iscoroutinefunction(wait)
    with pytest.warns(DeprecationWarning, match="pause_ms"):
        assert asyncio.run(wait(pause_ms=3)) == 3  # type: ignore[call-arg]
    assert asyncio.run(wait(3)) == 3
