"""Cold start: ``import mintid`` (and its first ID) beside ``uuid_utils``, in fresh interpreters.

Each case runs as a new ``python -I -c CODE`` process; rounds interleave the
cases, so a change of load hits them alike. For each case: the median wall time
of the whole process less that of an empty interpreter (``pass``), the import
time that ``-X importtime`` reports for the case's top-level modules (the
issue's measure, median of the rounds), and the peak RSS added over the empty
interpreter.

Run it (also part of ``make bench-python``) with the benchmark venv that
``make bench-python`` makes, from the repository root:

    .venv/python-bench/bin/python python/bench/bench_import.py --rounds 20

A smoke run: ``--rounds 2``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

#: The code each process runs (an empty interpreter first, the baseline) and the
#: packages whose imports ``-X importtime`` counts.
CASES: list[tuple[str, tuple[str, ...]]] = [
    ("pass", ()),
    ("import mintid", ("mintid",)),
    ("import mintid; mintid.uuid7_str()", ("mintid",)),
    ("from mintid import Snowflake; Snowflake(worker=1).next_id()", ("mintid",)),
    ("import mintid; mintid.uuid7()", ("mintid",)),
    ("import uuid_utils", ("uuid_utils",)),
    ("import uuid_utils; str(uuid_utils.uuid7())", ("uuid_utils",)),
]
RSS = (
    "import resource, sys; "
    "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))"
)


def run(code: str, tops: tuple[str, ...]) -> tuple[float, float, int]:
    """Wall seconds, ``-X importtime`` microseconds of ``tops``, peak RSS (KiB): one process."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-I", "-X", "importtime", "-c", f"{code}\n{RSS}"],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    imported = 0
    for line in done.stderr.splitlines():
        # "import time: self [us] | cumulative | imported package"; a top level is unindented.
        # Submodules a lazy name imports later are top-level lines of their own.
        fields = line.split("|")
        top_level = len(fields) == 3 and not fields[2][1:].startswith(" ")
        if top_level and fields[2].strip().split(".")[0] in tops:
            imported += int(fields[1])
    return wall, imported, int(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20, help="processes per case")
    args = parser.parse_args()
    results: list[list[tuple[float, float, int]]] = [[] for _ in CASES]
    for _round in range(args.rounds):
        for index, (code, tops) in enumerate(CASES):
            results[index].append(run(code, tops))
    base_wall = statistics.median(wall for wall, _, _ in results[0])
    base_rss = statistics.median(rss for _, _, rss in results[0])
    print("| case | wall ms over an empty interpreter | -X importtime ms | RSS MiB added |")
    print("|---|---:|---:|---:|")
    for (code, _tops), measured in zip(CASES[1:], results[1:], strict=True):
        wall = (statistics.median(wall for wall, _, _ in measured) - base_wall) * 1e3
        imported = statistics.median(imported for _, imported, _ in measured) / 1e3
        rss = (statistics.median(rss for _, _, rss in measured) - base_rss) / 1024
        print(f"| `{code}` | {wall:.1f} | {imported:.1f} | {rss:.1f} |")


if __name__ == "__main__":
    main()
