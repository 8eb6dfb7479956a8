#!/usr/bin/env python3
"""One version for every mintid package, set in one place.

The one place is ``[workspace.package] version`` in the root Cargo.toml. The
crates inherit it, and so does the Python wheel (maturin reads the version of
bindings/ffi). The jar, the npm package and a few references to them carry a
copy, listed in COPIES below.

    scripts/dist/version.py check        # every copy equals Cargo.toml's (make test-version)
    scripts/dist/version.py set 0.2.0    # write a new version into Cargo.toml and every copy
    scripts/dist/version.py show         # print the version

``check`` also wants a CHANGELOG.md section for the version or ``[Unreleased]``.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEMVER = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?")
V = r"(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)"

# (file, pattern): group 1 of each pattern is a copy of the version. Every
# pattern must match at least once.
COPIES: list[tuple[str, str]] = [
    ("Cargo.toml", r'(?m)^mintid = \{ path = "core", version = "' + V + '"'),
    ("Cargo.lock", r'(?m)^name = "mintid(?:-cli|-ffi|-wasm|-bench)?"\nversion = "' + V + '"'),
    ("core/fuzz/Cargo.lock", r'(?m)^name = "mintid"\nversion = "' + V + '"'),
    ("kotlin/pom.xml", r"<artifactId>mintid</artifactId>\s*<version>" + V + "</version>"),
    ("kotlin/README.md", r"<artifactId>mintid</artifactId>\s*<version>" + V + "</version>"),
    ("examples/jvm-consumer/pom.xml", r"<artifactId>mintid</artifactId>\s*<version>" + V + "</version>"),
    ("examples/spring-consumer/pom.xml", r"<artifactId>mintid-spring-boot-starter</artifactId>\s*<version>" + V + "</version>"),
    ("kotlin/spring-boot/pom.xml", r"<artifactId>mintid-spring-boot-starter</artifactId>\s*<version>" + V + "</version>"),
    ("kotlin/spring-boot/pom.xml", r"<mintid.version>" + V + "</mintid.version>"),
    ("kotlin/bench/pom.xml", r"<artifactId>mintid</artifactId>\s*<version>" + V + "</version>"),
    ("kotlin/bench/store/pom.xml", r"<artifactId>mintid</artifactId>\s*<version>" + V + "</version>"),
    ("tests/cross/parties/kotlin.mjs", r'jar\("io\.mintid", "mintid", "' + V + '"\)'),
    ("tests/cross/parties/kotlin.mjs", r"io/mintid/mintid/" + V + "/mintid-"),
    ("js/package.json", r'(?s)^\{\s*"name": "mintid",\s*"version": "' + V + '"'),
    ("js/package-lock.json", r'(?s)^\{\s*"name": "mintid",\s*"version": "' + V + '"'),
    ("js/package-lock.json", r'"": \{\s*"name": "mintid",\s*"version": "' + V + '"'),
    ("js/src/version.ts", r'export const version = "' + V + '";'),
]


def workspace_version() -> str:
    with (ROOT / "Cargo.toml").open("rb") as file:
        return str(tomllib.load(file)["workspace"]["package"]["version"])


def copies() -> list[tuple[str, str]]:
    """Every (file, version) pair found; fails when a pattern matches nothing."""
    found = []
    for path, pattern in COPIES:
        text = (ROOT / path).read_text()
        matches = re.findall(pattern, text)
        if not matches:
            sys.exit(f"version.py: no version found in {path} (pattern {pattern!r}): update COPIES")
        found += [(path, match) for match in matches]
    return found


def check() -> int:
    version = workspace_version()
    wrong = [(path, found) for path, found in copies() if found != version]
    for path, found in wrong:
        print(f"{path}: {found}, but Cargo.toml's [workspace.package] version is {version}")
    changelog = (ROOT / "CHANGELOG.md").read_text()
    if not re.search(r"(?m)^## \[(Unreleased|" + re.escape(version) + r")\]", changelog):
        print(f"CHANGELOG.md: no '## [Unreleased]' or '## [{version}]' section")
        wrong.append(("CHANGELOG.md", ""))
    if wrong:
        print("Run `scripts/dist/version.py set VERSION` to write one version everywhere.")
        return 1
    print(f"version {version}: Cargo.toml and {len(copies())} copies agree")
    return 0


def set_version(new: str) -> int:
    if not SEMVER.fullmatch(new):
        sys.exit(f"version.py: {new!r} is not a semantic version")
    cargo = ROOT / "Cargo.toml"
    text = cargo.read_text()
    text, count = re.subn(
        r'(?m)^(\[workspace\.package\][^\[]*?^version = ")[^"]+(")', rf"\g<1>{new}\g<2>", text
    )
    if count != 1:
        sys.exit("version.py: no [workspace.package] version in Cargo.toml")
    cargo.write_text(text)
    for path, pattern in dict.fromkeys(COPIES):
        file = ROOT / path
        text = file.read_text()

        def replace(match: re.Match[str]) -> str:
            start, end = match.span(1)
            offset = match.start()
            whole = match.group(0)
            return whole[: start - offset] + new + whole[end - offset :]

        file.write_text(re.sub(pattern, replace, text))
    print(f"version {new} written")
    return check()


def main(argv: list[str]) -> int:
    match argv:
        case ["check"]:
            return check()
        case ["show"]:
            print(workspace_version())
            return 0
        case ["set", new]:
            return set_version(new)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
