r"""Cold start: a program's first ID in fresh processes, beside the empty runtime and a peer.

Each case is one short program run as a new process, ``--rounds`` times; rounds
interleave the cases, so a change of load hits them alike. For each case the
table shows, over the empty runtime of its language (``pass``, an empty Node
module, an empty Java ``main``), the median and 90th percentile of

* **wall** time: what a user waits for, from ``fork`` to exit;
* **CPU** time (user + system, of the process and its threads): less sensitive
  to other processes on a busy machine, the figure to compare on one.

Figures only: nothing here checks a time. Run it with ``make bench-cold``, or
by hand with what each language needs (a language whose option is missing is
skipped, and the line saying so is printed):

    python3 scripts/bench/cold.py --rounds 20 \
        --python .venv/python-bench/bin/python \
        --node-package js \
        --java-classpath "kotlin/target/mintid-0.1.0.jar:$(cat kotlin/target/cold-classpath.txt)"

``--python`` is an interpreter with ``mintid`` and ``uuid_utils`` installed;
``--node-package`` the npm package's folder after ``make js-build`` (its
``node_modules`` holds the peer, ``uuid``); ``--java-classpath`` the mintid jar
with kotlin-stdlib and JNA.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Case:
    """One program, run as ``argv`` in ``cwd``; ``baseline`` is its language's empty program."""

    language: str
    label: str
    argv: list[str]
    cwd: str | None = None
    baseline: bool = False
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def run(self) -> None:
        """One fresh process: record its wall and CPU seconds."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(self.argv, cwd=self.cwd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.wall.append(wall)
        self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def python_cases(python: str) -> list[Case]:
    """The Python cases: ``python -I -c CODE``."""
    codes = [
        ("empty interpreter (`pass`)", "pass"),
        ("`import mintid; mintid.uuid7_str()`", "import mintid; mintid.uuid7_str()"),
        (
            "`from mintid import Snowflake; Snowflake(worker=1).next_id()`",
            "from mintid import Snowflake; Snowflake(worker=1).next_id()",
        ),
        ("`import mintid; mintid.uuid7()`", "import mintid; mintid.uuid7()"),
        (
            "peer: `import uuid_utils; str(uuid_utils.uuid7())`",
            "import uuid_utils; str(uuid_utils.uuid7())",
        ),
    ]
    return [
        Case("Python", label, [python, "-I", "-c", code], baseline=index == 0)
        for index, (label, code) in enumerate(codes)
    ]


def node_cases(package: str) -> list[Case]:
    """The Node cases: an ES module given with ``-e``, run in the package's folder
    (so ``import "mintid"`` resolves to the package itself, its Node build).
    """  # noqa: D205
    codes = [
        ("empty module", ""),
        (
            '`import { uuid7 } from "mintid"; uuid7().toString()`',
            'import { uuid7 } from "mintid"; uuid7().toString();',
        ),
        (
            '`import { Snowflake } from "mintid"; new Snowflake({ worker: 1 }).nextId()`',
            'import { Snowflake } from "mintid"; new Snowflake({ worker: 1 }).nextId();',
        ),
        ('peer: `import { v7 } from "uuid"; v7()`', 'import { v7 } from "uuid"; v7();'),
    ]
    return [
        Case(
            "Node",
            label,
            ["node", "--input-type=module", "-e", code],
            cwd=package,
            baseline=index == 0,
        )
        for index, (label, code) in enumerate(codes)
    ]


#: The JVM's program: its argument names the case.
JAVA_MAIN = """
public final class Cold {
    public static void main(String[] args) {
        switch (args[0]) {
            case "empty": break;
            case "uuid7": io.mintid.Mintid.uuid7(); break;
            case "snowflake":
                var layout = io.mintid.SnowflakeLayout.classic();
                io.mintid.Snowflake.builder(layout, 1L).build().nextId();
                break;
            case "peer": java.util.UUID.randomUUID(); break;
            default: throw new IllegalArgumentException(args[0]);
        }
    }
}
"""


def java_cases(classpath: str, scratch: Path) -> list[Case]:
    """The JVM cases: one compiled ``main`` (in ``scratch``), its argument naming the case."""
    source = scratch / "Cold.java"
    source.write_text(JAVA_MAIN)
    subprocess.run(["javac", "-cp", classpath, "-d", str(scratch), str(source)], check=True)
    full = f"{scratch}{os.pathsep}{classpath}"
    cases = [
        ("empty `main`", "empty"),
        ("`Mintid.uuid7()`", "uuid7"),
        ("`Snowflake.builder(SnowflakeLayout.classic(), 1L).build().nextId()`", "snowflake"),
        ("JDK: `UUID.randomUUID()` (a UUIDv4)", "peer"),
    ]
    return [
        Case("JVM", label, ["java", "-cp", full, "Cold", name], baseline=index == 0)
        for index, (label, name) in enumerate(cases)
    ]


def p90(values: list[float]) -> float:
    """The 90th percentile (inclusive method)."""
    return statistics.quantiles(values, n=10, method="inclusive")[-1]


def report(cases: list[Case]) -> None:
    """One Markdown table: each case over its language's empty program, in ms."""
    print("| language | case | wall ms median | wall ms p90 | CPU ms median | CPU ms p90 |")
    print("|---|---|---:|---:|---:|---:|")
    base: Case | None = None
    for case in cases:
        if case.baseline:
            base = case
            print(
                f"| {case.language} | {case.label} (absolute) "
                f"| {statistics.median(case.wall) * 1e3:.1f} | {p90(case.wall) * 1e3:.1f} "
                f"| {statistics.median(case.cpu) * 1e3:.1f} | {p90(case.cpu) * 1e3:.1f} |"
            )
            continue
        assert base is not None
        wall = [value - statistics.median(base.wall) for value in case.wall]
        cpu = [value - statistics.median(base.cpu) for value in case.cpu]
        print(
            f"| {case.language} | {case.label} "
            f"| {statistics.median(wall) * 1e3:+.1f} | {p90(wall) * 1e3:+.1f} "
            f"| {statistics.median(cpu) * 1e3:+.1f} | {p90(cpu) * 1e3:+.1f} |"
        )


def main() -> None:
    """Run every case of the languages given, then print the table."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=20, help="processes per case (at least 2)")
    parser.add_argument("--python", help="an interpreter with mintid and uuid_utils")
    parser.add_argument("--node-package", help="the npm package's folder, built")
    parser.add_argument("--java-classpath", help="the mintid jar, kotlin-stdlib and JNA")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        cases: list[Case] = []
        if args.python:
            cases += python_cases(args.python)
        else:
            print("Python: skipped (no --python)")
        if args.node_package:
            cases += node_cases(os.path.abspath(args.node_package))
        else:
            print("Node: skipped (no --node-package)")
        if args.java_classpath and shutil.which("javac"):
            cases += java_cases(args.java_classpath, Path(scratch))
        else:
            print("JVM: skipped (no --java-classpath, or no javac)")
        load = os.getloadavg()[0]
        for case in cases:  # warm the page cache: the first run of each is not counted
            case.run()
            case.wall.clear()
            case.cpu.clear()
        for _round in range(args.rounds):
            for case in cases:
                case.run()
        print(
            f"{args.rounds} processes per case, interleaved; 1-minute load average "
            f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end; {os.cpu_count()} CPUs."
        )
        report(cases)


if __name__ == "__main__":
    main()
