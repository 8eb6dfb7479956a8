#!/usr/bin/env python3
"""Docs are tests: every code block of the READMEs and the guide runs in `make test`.

A fenced block is one of:

* run as it is by its language's harness (``python`` blocks: python/tests/test_docs.py;
  ``js``: js/test/docs.test.mjs; ``sql <dialect>``: tests/schema/test_docs.py; ``sh`` and
  ``console``: this script);
* marked ``<!-- fragment: FILE -->`` on the line before the fence: a piece of FILE, which
  runs in `make test`. Every line of the block appears in FILE, in the same order
  (leading and trailing blanks aside), so the block cannot drift from the code that runs;
* marked ``<!-- run by: FILE -->``: FILE reads this document and runs the block itself
  (a page in a browser, a crate's doctest); FILE must name the document's file;
* an ``sh`` block marked ``<!-- not run: REASON -->``: a command that cannot run inside
  `make test` (it is `make test` or one of its targets, an install, a release), with the
  reason; its lines are still checked;
* ``text``: a picture, not code.

`python3 scripts/docs/blocks.py` checks every marker, checks ``sh`` blocks (make targets
exist, scripts are executable: scripts/dist/check-docs.py's rules; `python3 FILE` and
`pip install ./DIR` name what exists), runs each unmarked ``sh`` block in a temporary
directory (one `bash -euo pipefail`, the `mintid` command of target/release first on PATH;
it must succeed), and runs the ``console``
blocks in a temporary directory with the `mintid` command of target/release: each ``$``
line runs in one shell, must succeed unless the output shown is a ``mintid: CODE:`` error
(then it must fail with that code), and must print as many lines as shown.
Language harnesses import `blocks(lang)` from here (or run it with `--json LANG`) to find
what they run.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = (
    "README.md",
    "python/README.md",
    "js/README.md",
    "kotlin/README.md",
    "docs/guide.md",
    "schema/README.md",
    "rust/store/README.md",
    "CONTRIBUTING.md",
)
# The languages whose unmarked blocks a harness runs, and where.
HARNESSES = {
    "python": "python/tests/test_docs.py",
    "js": "js/test/docs.test.mjs",
    "sql": "tests/schema/test_docs.py",
    "sh": "scripts/docs/blocks.py",
    "console": "scripts/docs/blocks.py",
}
FENCE = re.compile(
    r"(?ms)^(?:<!-- (fragment|run by|not run): ([^\n]+?) -->\n)?```(\w*)([^\n]*)\n(.*?)^```\s*$"
)


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced code block of a document."""

    doc: str
    line: int
    lang: str
    info: str
    text: str
    marker: str | None
    target: str | None
    section: str

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"


def parse(doc: str) -> list[Block]:
    """Every fenced block of `doc` (a path relative to the repository root)."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        marker, target, lang, info, body = match.groups()
        line = text.count("\n", 0, match.start(3)) + 1
        headings = re.findall(r"(?m)^## (.*)$", text[: match.start()])
        section = headings[-1] if headings else ""
        found.append(Block(doc, line, lang, info.strip(), body, marker, target, section))
    return found


def blocks(lang: str) -> list[Block]:
    """The unmarked blocks of one language in every document: what its harness runs."""
    return [b for doc in DOCS for b in parse(doc) if b.lang == lang and b.marker is None]


def code_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def check_fragment(block: Block) -> str | None:
    path = ROOT / str(block.target)
    if not path.is_file():
        return f"{block.where}: fragment of {block.target}, which does not exist"
    haystack = code_lines(path.read_text(encoding="utf-8"))
    position = 0
    for line in code_lines(block.text):
        try:
            position = haystack.index(line, position) + 1
        except ValueError:
            return f"{block.where}: not in {block.target} (in this order): {line}"
    return None


def check_run_by(block: Block) -> str | None:
    path = ROOT / str(block.target)
    if not path.is_file():
        return f"{block.where}: run by {block.target}, which does not exist"
    if Path(block.doc).name not in path.read_text(encoding="utf-8"):
        return f"{block.where}: {block.target} never names {Path(block.doc).name}"
    return None


def release_rules():  # scripts/dist/check-docs.py: make targets, scripts, publish dry runs
    spec = importlib.util.spec_from_file_location("check_docs", ROOT / "scripts/dist/check-docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_sh(block: Block) -> list[str]:
    problems = []
    rules = release_rules()
    for raw in block.text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if words[:2] == ["pip", "install"] and words[2].startswith("./"):
            if not (ROOT / words[2] / "pyproject.toml").is_file():
                problems.append(f"{block.where}: {words[2]} has no pyproject.toml")
            continue
        if words[0] == "python3" and (ROOT / words[1]).is_file():
            continue  # a script of the repository (its output, if redirected, is the doc's point)
        problem = rules.check_line(line, block.where)
        if problem:
            problems.append(problem)
    return problems


def check_not_run(block: Block) -> list[str]:
    """A block that cannot run must be shell, say why, and still pass the shell checks."""
    if block.lang != "sh":
        return [f"{block.where}: only an sh block may be marked not run, not a `{block.lang}` one"]
    if len(str(block.target).split()) < 3:
        return [f"{block.where}: `not run` needs its reason in words, not {block.target!r}"]
    return check_sh(block)


def run_sh(block: Block) -> list[str]:
    """Runs an unmarked sh block in one bash, in a temporary directory; it must succeed."""
    env = {**os.environ, "PATH": f"{ROOT / 'target/release'}:{os.environ['PATH']}"}
    with tempfile.TemporaryDirectory() as tmp:
        command = ["bash", "-euo", "pipefail", "-c", block.text]
        done = subprocess.run(command, check=False, cwd=tmp, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return [f"{block.where}: the sh block failed ({done.returncode}): {done.stdout}{done.stderr}"]
    return []


def console_steps(text: str) -> list[tuple[str, list[str]]]:
    steps: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def run_console(block: Block) -> list[str]:
    """Runs the `$` lines in one bash, in a temporary directory, one after another."""
    problems = []
    steps = console_steps(block.text)
    env = {**os.environ, "PATH": f"{ROOT / 'target/release'}:{os.environ['PATH']}"}
    script = "".join(f"{{ {command}\n}} >out.{n} 2>err.{n}; echo $? >rc.{n}\n" for n, (command, _) in enumerate(steps))
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["bash", "-c", script], cwd=tmp, env=env, check=True)
        for n, (command, shown) in enumerate(steps):
            rc = int(Path(tmp, f"rc.{n}").read_text())
            out, err = Path(tmp, f"out.{n}").read_text(), Path(tmp, f"err.{n}").read_text()
            error = re.match(r"mintid: ([a-z_.]+):", shown[0]) if shown else None
            if error:
                if rc == 0 or not err.startswith(f"mintid: {error.group(1)}:"):
                    problems.append(f"{block.where}: `{command}` should fail with {error.group(1)}: {out}{err}")
            elif rc != 0:
                problems.append(f"{block.where}: `{command}` failed ({rc}): {out}{err}")
            elif len(out.splitlines()) != len(shown):
                problems.append(f"{block.where}: `{command}` printed {len(out.splitlines())} lines, the doc shows {len(shown)}")
    return problems


def main() -> int:
    if sys.argv[1:2] == ["--json"]:  # for the harnesses in other languages
        listed = [dict(dataclasses.asdict(b), where=b.where) for b in blocks(sys.argv[2])]
        print(json.dumps(listed))
        return 0
    problems: list[str] = []
    counts: dict[str, int] = {}
    for doc in DOCS:
        for block in parse(doc):
            kind = block.marker or block.lang
            counts[kind] = counts.get(kind, 0) + 1
            if block.marker == "fragment":
                problems += filter(None, [check_fragment(block)])
            elif block.marker == "run by":
                problems += filter(None, [check_run_by(block)])
            elif block.marker == "not run":
                problems += check_not_run(block)
            elif block.lang == "sh":
                problems += check_sh(block) or run_sh(block)
            elif block.lang == "console":
                problems += run_console(block)
            elif block.lang != "text" and block.lang not in HARNESSES:
                problems.append(f"{block.where}: a `{block.lang}` block no harness runs: mark it a fragment")
            elif block.lang in HARNESSES and not (ROOT / HARNESSES[block.lang]).is_file():
                problems.append(f"{block.where}: its harness {HARNESSES[block.lang]} is gone")
    for problem in problems:
        print(problem)
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    print(f"doc blocks: {summary}; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
