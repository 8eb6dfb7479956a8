#!/usr/bin/env python3
"""The release docs are tests: every command in their `sh` blocks must be real.

Checks the `sh` and `console` code blocks of docs/release.md and of the README's
"Releasing" section (part of `make test-version`):

* `make TARGET`: the target exists (`make -n TARGET` succeeds);
* `scripts/...`: the script exists and is executable; `version.py` subcommands are known;
* a publish command (`cargo publish`, `npm publish`, `twine upload`): `make dist` runs
  its dry run (the dry-run form appears in mk/dist.mk or scripts/dist/);
* `git` commands are allowed as they are; anything else fails the check.
"""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DRY_RUNS = {
    "cargo publish": "$(CARGO) publish --dry-run",
    "npm publish": "npm publish --dry-run",
    "twine upload": "twine check",
}


def blocks(text: str) -> list[str]:
    return re.findall(r"(?ms)^```(?:sh|console)\n(.*?)^```", text)


def release_section(readme: str) -> str:
    match = re.search(r"(?ms)^## Releasing\n(.*?)(?=^## |\Z)", readme)
    if not match:
        sys.exit("check-docs: README.md has no '## Releasing' section")
    return match.group(1)


def dist_sources() -> str:
    files = [ROOT / "mk/dist.mk", *sorted((ROOT / "scripts/dist").iterdir())]
    return "\n".join(
        path.read_text() for path in files if path.is_file() and path.name != Path(__file__).name
    )


@functools.cache
def make_targets() -> set[str]:
    """The Makefile's targets, from make's database (-q -p: nothing is run, not even
    recipes that call $(MAKE), which -n would run)."""
    done = subprocess.run(
        ["make", "-q", "-p", "-f", "Makefile", "help"], cwd=ROOT, capture_output=True, text=True
    )
    return set(re.findall(r"(?m)^([A-Za-z0-9][A-Za-z0-9_.-]*):(?!=)", done.stdout))


def check_line(line: str, where: str) -> str | None:
    words = shlex.split(line)
    if words[0] == "make":
        missing = [target for target in words[1:] if target not in make_targets()]
        return f"{where}: no make target {', '.join(missing)}" if missing else None
    if words[0].startswith("scripts/"):
        script = ROOT / words[0]
        if not script.is_file() or not script.stat().st_mode & 0o111:
            return f"{where}: {words[0]} is not an executable script"
        if script.name == "version.py" and words[1:2] not in (["check"], ["show"], ["set"]):
            return f"{where}: version.py has no subcommand {words[1:2]}"
        return None
    if words[0] == "git":
        return None
    for command, dry_run in DRY_RUNS.items():
        if line.startswith(command):
            return None if dry_run in dist_sources() else f"{where}: make dist never runs `{dry_run}`"
    return f"{where}: `{line}` is neither a make target, a script, git nor a publish command"


def main() -> int:
    sources = {
        "docs/release.md": (ROOT / "docs/release.md").read_text(),
        "README.md (Releasing)": release_section((ROOT / "README.md").read_text()),
    }
    problems, count = [], 0
    for where, text in sources.items():
        for block in blocks(text):
            for raw in block.splitlines():
                line = raw.removeprefix("$ ").strip()
                if not line or line.startswith("#"):
                    continue
                count += 1
                problem = check_line(line, where)
                if problem:
                    problems.append(problem)
    for problem in problems:
        print(problem)
    if not problems:
        print(f"release docs: {count} commands checked")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
