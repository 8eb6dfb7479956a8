#!/usr/bin/env python3
"""Seeds each fuzz target's corpus with the inputs of the shared vectors.

Usage: seed.py VECTORS_DIR CORPUS_DIR

Writes one file per distinct input into CORPUS_DIR/<target>/, named by its
SHA-1 as libFuzzer does, so re-running adds nothing twice. Corpora are built,
never committed: the vectors in tests/vectors stay the one source.
"""

import hashlib
import json
import sys
from pathlib import Path


def cases(vectors: Path, name: str):
    path = vectors / name
    if not path.exists():
        return []
    return json.loads(path.read_text(encoding="utf-8"))["cases"]


def text_fields(case, *fields):
    """The string values of `fields` in `case`, UTF-8 encoded."""
    return [case[f].encode() for f in fields if isinstance(case.get(f), str)]


def hex_or_text(case, text_field, hex_field):
    if isinstance(case.get(hex_field), str):
        return [bytes.fromhex(case[hex_field])]
    return text_fields(case, text_field)


def seeds(vectors: Path):
    """Yields (target, input bytes) pairs."""
    for case in cases(vectors, "keys.json"):
        op = case["op"]
        if op in ("new_key", "parse_key_text", "id_from_fields", "derived_key"):
            for text in text_fields(case, "text"):
                yield "key_text", text
        if op == "parse_header":
            for header in hex_or_text(case, "header", "header_hex"):
                yield "key_header", header
        for id_ in text_fields(case, "id"):
            yield "key_header", id_

    for case in cases(vectors, "fingerprint.json"):
        op = case["op"]
        if op == "fingerprint_json":
            documents = hex_or_text(case, "input", "input_hex")
            yield from (("fingerprint_json", doc) for doc in documents)
            yield from (("fingerprint_json", c) for c in text_fields(case, "canonical"))
            pointers = [p.encode() for p in case.get("include", []) + case.get("exclude", [])]
            for pointer in pointers:
                yield "fingerprint_text", b"\x01" + pointer
                for doc in documents:
                    yield "fingerprint_text", b"\x02" + pointer + b"\x00" + doc
        for text in text_fields(case, "fingerprint", "text"):
            yield "fingerprint_text", b"\x00" + text
            yield "codecs", text.removeprefix(b"sha256:")

    for case in cases(vectors, "uuid7.json"):
        for text in text_fields(case, "text", "hyphenated", "simple", "urn", "base32"):
            yield "uuid_text", text
        for field in ("bytes", "custom"):
            if isinstance(case.get(field), str):
                yield "uuid_text", bytes.fromhex(case[field])
        for text in text_fields(case, "base32"):
            yield "codecs", text

    for case in cases(vectors, "snowflake.json"):
        for text in text_fields(case, "text", "id", "base32"):
            yield "snowflake_text", text
        for text in text_fields(case, "base32"):
            yield "codecs", text

    for case in cases(vectors, "request_id.json"):
        for text in text_fields(case, "grant", "request_id", "text"):
            yield "request_id_text", text
            yield "codecs", text

    for name in ("record.json", "outbox.json"):
        for case in cases(vectors, name):
            for field in ("status", "text"):
                value = case.get(field)
                if isinstance(value, str):
                    yield "status_text", value.encode()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    vectors, corpus = Path(sys.argv[1]), Path(sys.argv[2])
    counts = {}
    for target, data in seeds(vectors):
        folder = corpus / target
        folder.mkdir(parents=True, exist_ok=True)
        (folder / hashlib.sha1(data).hexdigest()).write_bytes(data)
        counts[target] = counts.get(target, 0) + 1
    summary = ", ".join(f"{t} {n}" for t, n in sorted(counts.items()))
    print(f"seed.py: inputs from the vectors: {summary}")


if __name__ == "__main__":
    main()
