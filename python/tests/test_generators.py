"""The buffered generators: order, uniqueness, freshness, threads and fork."""

from __future__ import annotations

import copy
import itertools
import os
import pickle
import random
import threading
import time
import uuid
from collections.abc import Callable

import pytest

import mintid

ROOMY = mintid.SnowflakeLayout(time_bits=41, worker_bits=6, sequence_bits=16)


def snowflake_millis(generator: mintid.Snowflake) -> Callable[[int], int]:
    return lambda snowflake_id: generator.decode(snowflake_id).unix_millis


def uuid_millis(value: uuid.UUID | str) -> int:
    return mintid.Uuid7.parse(str(value)).unix_millis


def test_snowflake_ids_increase_and_carry_the_worker() -> None:
    generator = mintid.Snowflake(worker=7)
    ids = [generator.next_id() for _ in range(20_000)]
    assert ids == sorted(set(ids))
    assert {generator.decode(i).worker for i in ids[::500]} == {7}


def test_uuid7_values_and_text_increase() -> None:
    values = [mintid.uuid7() for _ in range(20_000)]
    assert values == sorted(set(values))
    assert all(type(value) is uuid.UUID and value.version == 7 for value in values[::100])
    texts = [mintid.uuid7_str() for _ in range(20_000)]
    assert texts == sorted(set(texts))
    assert all(uuid.UUID(text).version == 7 for text in texts[::100])


def test_every_uuid7_entry_point_draws_from_one_sequence() -> None:
    # uuid7(), uuid7_str() and a request ID's UUID, alternated: strictly increasing.
    made: list[str] = []
    for index in range(20_000):
        if index % 3 == 0:
            made.append(str(mintid.uuid7()))
        elif index % 3 == 1:
            made.append(mintid.uuid7_str())
        else:
            made.append(str(mintid.Uuid7.from_uuid(mintid.uuid7()).uuid))
    backwards = sum(1 for a, b in itertools.pairwise(made) if b <= a)
    assert backwards == 0


def test_every_snowflake_entry_point_of_a_generator_draws_from_one_sequence() -> None:
    generator = mintid.Snowflake(worker=9)
    made: list[int] = []
    for index in range(5_000):
        if index % 2:
            made.append(generator.next_id())
        else:
            made.extend(generator.next_ids(3))
    backwards = sum(1 for a, b in itertools.pairwise(made) if b <= a)
    assert backwards == 0


def test_one_generator_mixing_forms_stays_in_order() -> None:
    generator = mintid.Uuid7Generator()
    made = []
    for index in range(3_000):
        made.append(str(generator.next_uuid()) if index % 7 else generator.next_str())
    assert made == sorted(set(made))


@pytest.mark.parametrize("kind", ["snowflake", "uuid", "str"])
def test_an_id_is_never_handed_out_more_than_1_ms_behind_the_clock(kind: str) -> None:
    generator = mintid.Snowflake(worker=3, layout=ROOMY)
    uuids = mintid.Uuid7Generator()
    make: Callable[[], object]
    millis: Callable[[object], int]
    if kind == "snowflake":
        make, millis = generator.next_id, lambda i: generator.decode(int(str(i))).unix_millis
    elif kind == "uuid":
        make, millis = uuids.next_uuid, lambda u: uuid_millis(str(u))
    else:
        make, millis = uuids.next_str, lambda u: uuid_millis(str(u))
    rng = random.Random(7)
    checked = []
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        for _ in range(rng.randrange(1, 400)):
            before = time.time_ns()
            made = make()
            checked.append((before, made))
        time.sleep(rng.choice([0, 0, 0.0002, 0.0007, 0.0013]))
    for before, made in checked:
        # Handed out at some moment after `before`, while the clock's millisecond
        # was at most the one after the ID's (the core's ID buffer rule).
        assert (millis(made) + 2) * 1_000_000 > before


def test_sonyflake_like_ticks_keep_ids_within_a_tick_of_the_clock() -> None:
    generator = mintid.Snowflake(worker=1, layout="sonyflake-like")
    for _ in range(300):
        before = time.time_ns()
        parts = generator.decode(generator.next_id())
        # At most the millisecond after the ID's 10 ms tick (the core's ID buffer rule).
        assert (parts.unix_millis + 10 + 1) * 1_000_000 > before


def run_threads(
    make: Callable[[], object], threads: int = 8, each: int = 5_000
) -> list[list[object]]:
    results: list[list[object]] = [[] for _ in range(threads)]
    start = threading.Barrier(threads)

    def work(index: int) -> None:
        start.wait()
        results[index] = [make() for _ in range(each)]

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


@pytest.mark.parametrize("kind", ["snowflake", "uuid", "str"])
def test_eight_threads_share_one_generator(kind: str) -> None:
    uuids = mintid.Uuid7Generator()
    make: Callable[[], object] = {
        "snowflake": mintid.Snowflake(worker=2, layout=ROOMY).next_id,
        "uuid": uuids.next_uuid,
        "str": uuids.next_str,
    }[kind]
    results = run_threads(make)
    every = [value for result in results for value in result]
    assert len(set(map(str, every))) == len(every), "duplicates across threads"
    for result in results:
        assert result == sorted(result), "not increasing within a thread"  # type: ignore[type-var]


needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")


def in_child(work: Callable[[int], bytes]) -> bytes:
    """Run ``work(write_fd)`` in a forked child; return what it wrote."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        code = 1
        try:
            os.close(read_end)
            os.write(write_end, work(write_end))
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 65536):
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return b"".join(chunks)


@needs_fork
def test_a_forked_child_never_repeats_the_parents_uuids() -> None:
    generator = mintid.Uuid7Generator()
    generator.next_uuid()
    generator.next_str()

    def child(_: int) -> bytes:
        made = [str(generator.next_uuid()) for _ in range(2_000)]
        made += [generator.next_str() for _ in range(2_000)]
        made += [str(mintid.uuid7()) for _ in range(2_000)]
        return "\n".join(made).encode()

    children = set(in_child(child).decode().split("\n"))
    parents = {str(generator.next_uuid()) for _ in range(2_000)}
    parents |= {generator.next_str() for _ in range(2_000)}
    parents |= {str(mintid.uuid7()) for _ in range(2_000)}
    assert len(children) == 6_000
    assert not children & parents


@needs_fork
def test_a_forked_snowflake_refuses_until_it_gets_its_own_worker() -> None:
    generator = mintid.Snowflake(worker=5)
    last_in_parent = generator.next_id()

    def child(_: int) -> bytes:
        outcome = []
        for attempt in (generator.next_id, lambda: generator.next_ids(3)):
            try:
                attempt()
                outcome.append("generated")
            except mintid.SnowflakeForkedError as error:
                outcome.append(error.code)
        try:
            generator.set_worker(5)
            outcome.append("reused")
        except mintid.SnowflakeForkedError:
            outcome.append("refused")
        generator.set_worker(6)
        after = generator.next_id()
        outcome.append(str(generator.decode(after).worker))
        outcome.append(str(after > last_in_parent))
        return ",".join(outcome).encode()

    assert in_child(child).decode() == "snowflake.forked,snowflake.forked,refused,6,True"
    assert generator.decode(generator.next_id()).worker == 5


@needs_fork
def test_a_forked_segment_allocator_forgets_the_parents_segments() -> None:
    allocator = mintid.SegmentAllocator(mintid.SegmentPolicy(10, 10, 10))
    step = allocator.fetch_due(0)
    assert step == 10
    allocator.fetched(10, step, 0)
    assert allocator.next_id() == 1

    def child(_: int) -> bytes:
        held = (allocator.remaining, allocator.next_id(), allocator.fill(5))
        return repr((*held, allocator.fetch_due(0))).encode()

    assert in_child(child).decode() == "(0, None, [], 10)"
    assert allocator.next_id() == 2, "the parent keeps its segment"


def test_set_worker_continues_above_every_id_issued() -> None:
    generator = mintid.Snowflake(worker=1)
    before = [generator.next_id() for _ in range(100)]
    generator.set_worker(2)
    after = generator.next_id()
    assert after > max(before)
    assert generator.worker == 2 and generator.decode(after).worker == 2


def test_bulk_calls_continue_the_order() -> None:
    generator = mintid.Snowflake(worker=4)
    first = generator.next_id()
    batch = generator.next_ids(1000)
    assert batch == sorted(batch) and batch[0] > first and generator.next_id() > batch[-1]
    uuids = mintid.Uuid7Generator()
    one = uuids.next_uuid()
    raw = uuids.next_bytes(10)
    made = [uuid.UUID(bytes=raw[i : i + 16]) for i in range(0, len(raw), 16)]
    assert one < made[0] and made == sorted(made) and uuids.next_uuid() > made[-1]


def test_uuid7_objects_behave_as_the_standard_librarys() -> None:
    made = mintid.uuid7()
    rebuilt = uuid.UUID(str(made))
    assert type(made) is uuid.UUID
    assert made == rebuilt and hash(made) == hash(rebuilt) and made.bytes == rebuilt.bytes
    assert made.is_safe is uuid.SafeUUID.unknown
    assert pickle.loads(pickle.dumps(made)) == made and copy.deepcopy(made) == made
    with pytest.raises(TypeError):
        made.int = 5  # type: ignore[misc]
