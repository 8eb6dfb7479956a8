# Independent model of docs/spec.md's "Storable text"; prints tests/vectors/storable_text.json.
# Every text a driver writes from a host (an operation's error, a send error, a lease owner) is
# made storable in every dialect: U+0000 and what is not a Unicode scalar value become U+FFFD,
# then the text is cut to its limit on a character boundary with the truncation marker.
import json
import re

MARKER = "\u2026 [truncated]"
SURROGATE_BYTES = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]")


def cut(text, max_bytes):
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    end = max_bytes - len(MARKER.encode("utf-8"))
    while end > 0 and (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end].decode("utf-8") + MARKER


def storable(text, max_bytes):
    return cut(text.replace("\x00", "\ufffd"), max_bytes)


def from_utf8(data, max_bytes):
    # An encoded surrogate (Python's surrogatepass, Java's modified UTF-8) is one U+FFFD;
    # any other invalid sequence one U+FFFD per maximal subpart (Python's "replace").
    pieces = SURROGATE_BYTES.split(data)
    return storable("\ufffd".join(p.decode("utf-8", "replace") for p in pieces), max_bytes)


def from_utf16(units_hex, max_bytes):
    text = bytes.fromhex(units_hex).decode("utf-16-be", "surrogatepass")
    return storable(re.sub("[\ud800-\udfff]", "\ufffd", text), max_bytes)


TEXTS = [
    ("plain text is kept", "card declined", "1024"),
    ("U+0000 becomes U+FFFD", "card declined\x00ref=7", "1024"),
    ("a trailing U+0000", "timeout\x00", "1024"),
    ("only U+0000, cut after replacing", "\x00" * 2000, "1024"),
    ("at the limit, kept whole", "x" * 1024, "1024"),
    ("one byte over, cut with the marker", "x" * 1025, "1024"),
    ("two-byte characters cut on a boundary", "\u00e9" * 600, "1024"),
    ("four-byte characters cut on a boundary", "\U0001F600" * 300, "1024"),
    ("an owner cut to 255 bytes", "host-\x00-" + "\u20ac" * 100, "255"),
]
BYTES = [
    ("valid multi-byte text", "c3a9e282acf09f9880", "1024"),
    ("a byte that is never UTF-8", "41ff42", "1024"),
    ("a truncated two-byte sequence at the end", "41c3", "1024"),
    ("a truncated three-byte sequence is one U+FFFD", "41e28242", "1024"),
    ("a truncated four-byte sequence is one U+FFFD", "41f09f9842", "1024"),
    ("an overlong encoding", "c0af", "1024"),
    ("above U+10FFFF", "f4908080", "1024"),
    ("a lone high surrogate (surrogatepass) is one U+FFFD", "41eda08042", "1024"),
    ("a lone low surrogate is one U+FFFD", "edb080", "1024"),
    ("a surrogate pair in six bytes is two U+FFFD", "eda0bdedb880", "1024"),
    ("U+0000 in bytes", "6f6b006f6b", "1024"),
    ("invalid bytes, then cut", "ff" * 2000, "1024"),
    ("a long text cut: the bytes past the limit are never read", "78" * 1020 + "ff" * 10, "1024"),
]
UNITS = [
    ("a lone high surrogate between letters", "0041d8000042", "1024"),
    ("a lone low surrogate", "de00", "1024"),
    ("a surrogate pair is its character", "d83dde00", "1024"),
    ("a pair in the wrong order is two U+FFFD", "de00d83d", "1024"),
    ("a high surrogate at the end", "0041d83d", "1024"),
    ("U+0000 in UTF-16", "00410000", "1024"),
    ("lone surrogates, then cut", "d800" * 700, "1024"),
]
RAISED = [
    ("a type and a message", "ValueError", "bad input"),
    ("an empty message: the type alone", "ValueError", ""),
    ("a JVM type with an empty message", "IllegalStateException", ""),
    ("an empty type: the message alone", "", "boom"),
    ("both empty", "", ""),
    ("U+0000 in the message", "Error", "a\x00b"),
    ("a long message, cut after composing", "TypeError", "x" * 1100),
]


def raised(type_name, message):
    # docs/spec.md, "The wire": a raised failure's stored text.
    if type_name and message:
        text = type_name + ": " + message
    else:
        text = type_name or message or "error"
    return storable(text, 1024)


cases = []
for name, text, max_bytes in TEXTS:
    cases.append({"name": f"text: {name}", "op": "storable_text", "text": text,
                  "max_bytes": max_bytes, "expect": storable(text, max_bytes=int(max_bytes))})
for name, data, max_bytes in BYTES:
    cases.append({"name": f"utf-8 bytes: {name}", "op": "storable_utf8", "hex": data,
                  "max_bytes": max_bytes,
                  "expect": from_utf8(bytes.fromhex(data), int(max_bytes))})
for name, units, max_bytes in UNITS:
    cases.append({"name": f"utf-16: {name}", "op": "storable_utf16", "units": units,
                  "max_bytes": max_bytes, "expect": from_utf16(units, int(max_bytes))})
for name, type_name, message in RAISED:
    cases.append({"name": f"raised: {name}", "op": "raised_text", "type_name": type_name,
                  "message": message, "expect": raised(type_name, message)})
print(json.dumps({"description": "Storable text (docs/spec.md, Store drivers, \"Storable text\"): every text a driver writes made storable in every dialect, from a host string, from bytes that may not be UTF-8, or from UTF-16 code units; and a raised failure's text composed from its type's name and message. See tests/vectors/README.md.", "cases": cases}, indent=1))
