"""ID generation in Python: mintid beside its peers, in one pyperf run.

Run by ``make bench-python`` (which installs the peers' pinned versions):
every benchmark is one call per loop iteration, reported in ns per call
(median and minimum over pyperf's values).
The plain FFI calls show what a call into the native library costs without
the buffer, which is why IDs cross in bulk.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pyperf
import uuid6
import uuid_utils
import uuid_utils.compat
from snowflake import SnowflakeGenerator

import mintid
from mintid._native import ffi

Loop = Callable[[int], float]


def calls(make: Callable[[], object]) -> Loop:
    """A pyperf time function calling ``make`` once per loop."""

    def run(loops: int) -> float:
        started = time.perf_counter()
        for _ in range(loops):
            make()
        return time.perf_counter() - started

    return run


def main() -> None:
    runner = pyperf.Runner()
    # 16 sequence bits: 65536 IDs per ms, so the per-call cost shows, not
    # the classic layout's cap of 4096 IDs per ms (244 ns per ID sustained).
    roomy = mintid.Snowflake(1, mintid.SnowflakeLayout(worker_bits=6, sequence_bits=16))
    classic = mintid.Snowflake(2)
    peer_snowflake = SnowflakeGenerator(42)
    core_uuid7 = ffi.Uuid7Generator()
    benchmarks: list[tuple[str, Callable[[], object]]] = [
        ("mintid Snowflake.next_id (16 sequence bits)", roomy.next_id),
        ("mintid Snowflake.next_id (classic, 4096/ms cap)", classic.next_id),
        ("snowflake-id next(SnowflakeGenerator)", lambda: next(peer_snowflake)),
        ("mintid uuid7_str()", mintid.uuid7_str),
        ("str(uuid_utils.uuid7())", lambda: str(uuid_utils.uuid7())),
        ("mintid uuid7() -> uuid.UUID", mintid.uuid7),
        ("uuid_utils.compat.uuid7() -> uuid.UUID", uuid_utils.compat.uuid7),
        ("uuid_utils.uuid7() (own type)", uuid_utils.uuid7),
        ("uuid6.uuid7()", uuid6.uuid7),
        ("uuid.uuid4()", uuid.uuid4),
        ("str(uuid.uuid4())", lambda: str(uuid.uuid4())),
        ("plain FFI call (max_batch)", ffi.max_batch),
        ("FFI call for one UUIDv7 (next_bytes(1))", lambda: core_uuid7.next_bytes(1)),
    ]
    results = [(name, runner.bench_time_func(name, calls(make))) for name, make in benchmarks]
    if runner.args.worker:
        return
    # The machine is shared: the median shows what a loaded run costs, the
    # minimum what the code costs; peers are measured the same way.
    print(f"\n{'benchmark':<50} {'median ns':>10} {'min ns':>10}")
    for name, result in results:
        if result is not None:
            median, fastest = result.median() * 1e9, min(result.get_values()) * 1e9
            print(f"{name:<50} {median:>10,.0f} {fastest:>10,.0f}")


if __name__ == "__main__":
    main()
