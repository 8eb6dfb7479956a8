"""Independent generator for tests/vectors/keys.json (Python hashlib, base64, uuid)."""
import base64, hashlib, json, sys, uuid

cases = []

def text_of(kind, scope, id_):
    return kind + ":" + scope.replace("%", "%25").replace(":", "%3A") + ":" + id_

def key_ok(name, kind, scope, id_):
    cases.append({"name": name, "op": "new_key", "kind": kind, "scope": scope, "id": id_,
                  "text": text_of(kind, scope, id_)})

def key_err(name, kind, scope, id_, code, part=None, position=None):
    c = {"name": name, "op": "new_key", "kind": kind, "scope": scope, "id": id_, "error": code}
    if part:
        c["part"] = part
    if position is not None:
        c["position"] = position
    cases.append(c)

key_ok("simple", "order.create", "user:123", "20231001_001")
key_ok("longest-parts", "k" * 32, "s" * 64, "i" * 64)
key_ok("kind-charset", "a-z.0_9", "s", "i")
key_ok("quotes-and-sql-characters-are-kept", "payment.capture", "tenant'1\"", "';DROP/**/TABLE/**/keys;--")
key_ok("scope-with-colon-and-percent", "order.create", "auth0|u:1%2", "k:1")
key_ok("every-printable-ascii-in-id", "k", "s", "".join(chr(c) for c in range(0x21, 0x61)))
key_ok("every-printable-ascii-in-scope", "k", "".join(chr(c) for c in range(0x3f, 0x7f)), "i")
key_err("empty-kind", "", "s", "i", "key.empty", "kind")
key_err("empty-scope", "k", "", "i", "key.empty", "scope")
key_err("empty-id", "k", "s", "", "key.empty", "id")
key_err("kind-too-long", "k" * 33, "s", "i", "key.too_long", "kind")
key_err("scope-too-long", "k", "s" * 65, "i", "key.too_long", "scope")
key_err("id-too-long", "k", "s", "i" * 65, "key.too_long", "id")
key_err("kind-upper-case", "Order.create", "s", "i", "key.invalid_character", "kind", 0)
key_err("kind-colon", "order:create", "s", "i", "key.invalid_character", "kind", 5)
key_err("scope-space", "k", "user 1", "i", "key.invalid_character", "scope", 4)
key_err("id-tab", "k", "s", "a\tb", "key.invalid_character", "id", 1)
key_err("id-newline", "k", "s", "ab\n", "key.invalid_character", "id", 2)
key_err("id-delete", "k", "s", "a\x7f", "key.invalid_character", "id", 1)
key_err("id-nul", "k", "s", "\x00", "key.invalid_character", "id", 0)
key_err("id-non-ascii", "k", "s", "caf\u00e9", "key.invalid_character", "id", 3)
key_err("scope-emoji", "k", "\U0001F600", "i", "key.invalid_character", "scope", 0)

def header_ok(name, value, id_):
    cases.append({"name": name, "op": "parse_header", "header": value, "id": id_})

def header_err(name, value, code, position=None, raw=None):
    c = {"name": name, "op": "parse_header"}
    if raw is not None:
        c["header_hex"] = raw.hex()
    else:
        c["header"] = value
    c["error"] = code
    if position is not None:
        c["position"] = position
    cases.append(c)

header_ok("sf-string", '"8e03978e-40d5-43e8-bc93-6894a57f9324"', "8e03978e-40d5-43e8-bc93-6894a57f9324")
header_ok("bare-stripe-style", "8e03978e-40d5-43e8-bc93-6894a57f9324", "8e03978e-40d5-43e8-bc93-6894a57f9324")
header_ok("ows-trimmed", ' \t"abc"\t ', "abc")
header_ok("bare-ows-trimmed", "  abc  ", "abc")
header_ok("sf-escapes", '"a\\"b\\\\c"', 'a"b\\c')
header_ok("bare-keeps-quotes-and-backslashes", 'a"b\\c', 'a"b\\c')
header_ok("sf-longest", '"' + "x" * 64 + '"', "x" * 64)
header_err("empty", "", "key.empty")
header_err("only-whitespace", " \t ", "key.empty")
header_err("empty-sf-string", '""', "key.empty")
header_err("unterminated", '"abc', "key.invalid_header", 4)
header_err("unterminated-after-escape", ' "abc\\"', "key.invalid_header", 7)
header_err("invalid-escape", '"a\\nb"', "key.invalid_header", 2)
header_err("backslash-at-end", '"ab\\', "key.invalid_header", 3)
header_err("parameters-not-accepted", '"abc";p=1', "key.invalid_header", 5)
header_err("two-strings", '"a" "b"', "key.invalid_header", 3)
header_err("sf-space-not-allowed-in-id", '"a b"', "key.invalid_character", 1)
header_err("bare-inner-space", "a b", "key.invalid_character", 1)
header_err("sf-too-long", '"' + "x" * 65 + '"', "key.too_long")
header_err("bare-too-long-stripe-255", "x" * 255, "key.too_long")
header_err("non-ascii-utf8", None, "key.invalid_character", 3, raw='"caf\u00e9"'.encode())
header_err("not-utf8", None, "key.invalid_character", 1, raw=b"x\xff")

def fields_id(fields):
    enc = []
    for f in fields:
        enc.append("".join(chr(b) if (chr(b).isascii() and (chr(b).isalnum() or chr(b) in "._-")) else "%%%02X" % b
                           for b in f.encode()))
    joined = ":".join(enc)
    if len(joined) <= 64:
        return joined
    return "~" + base64.urlsafe_b64encode(hashlib.sha256(joined.encode()).digest()).rstrip(b"=").decode()

def fields_ok(name, fields, expected=None):
    got = fields_id(fields)
    if expected is not None:
        assert got == expected, (name, got, expected)
    cases.append({"name": name, "op": "id_from_fields", "kind": "order.create", "scope": "tenant-7",
                  "fields": fields, "id": got, "text": text_of("order.create", "tenant-7", got)})

fields_ok("fields-plain", ["user", "123", "20231001_001"], "user:123:20231001_001")
fields_ok("fields-single", ["A-1001"], "A-1001")
fields_ok("fields-separator-escaped", ["a:b", "c"], "a%3Ab:c")
fields_ok("fields-separator-escaped-other-split", ["a", "b:c"], "a:b%3Ac")
fields_ok("fields-percent-escaped", ["100%"], "100%25")
fields_ok("fields-tilde-escaped", ["~x"], "%7Ex")
fields_ok("fields-space-and-quotes", ["user 1", "o'neil \"q\""], "user%201:o%27neil%20%22q%22")
fields_ok("fields-non-ascii", ["Zo\u00eb", "\u6771\u4eac"], "Zo%C3%AB:%E6%9D%B1%E4%BA%AC")
fields_ok("fields-exactly-64", ["x" * 64], "x" * 64)
fields_ok("fields-65-hashed", ["x" * 65])
fields_ok("fields-long-after-escaping-hashed", [" " * 22])
fields_ok("fields-many", [str(i) for i in range(40)])
assert fields_id(["x" * 65]).startswith("~") and len(fields_id(["x" * 65])) == 44
cases.append({"name": "fields-none", "op": "id_from_fields", "kind": "order.create", "scope": "tenant-7",
              "fields": [], "error": "key.empty"})
cases.append({"name": "fields-empty-field", "op": "id_from_fields", "kind": "order.create", "scope": "tenant-7",
              "fields": ["a", ""], "error": "key.empty"})
cases.append({"name": "fields-bad-kind", "op": "id_from_fields", "kind": "Order", "scope": "tenant-7",
              "fields": ["a"], "error": "key.invalid_character"})

def text_ok(name, text, kind, scope, id_):
    assert text_of(kind, scope, id_) == text
    cases.append({"name": name, "op": "parse_key_text", "text": text, "kind": kind, "scope": scope, "id": id_})

def text_err(name, text, code):
    cases.append({"name": name, "op": "parse_key_text", "text": text, "error": code})

text_ok("text-simple", "order.create:tenant-7:A-1001", "order.create", "tenant-7", "A-1001")
text_ok("text-escaped-scope", "order.create:user%3A123%25:k:1", "order.create", "user:123%", "k:1")
text_ok("text-id-with-colons-and-percent", "k:s:%3A:%zz", "k", "s", "%3A:%zz")
text_err("text-no-separator", "order.create", "key.invalid_text")
text_err("text-one-separator", "order.create:tenant", "key.invalid_text")
text_err("text-lower-case-escape", "k:a%3a:i", "key.invalid_text")
text_err("text-other-escape", "k:a%41:i", "key.invalid_text")
text_err("text-truncated-escape", "k:a%3:i", "key.invalid_text")
text_err("text-empty-scope", "k::i", "key.empty")
text_err("text-empty-id", "k:s:", "key.empty")
text_err("text-empty", "", "key.invalid_text")
text_err("text-bad-kind", "Order:s:i", "key.invalid_character")
text_err("text-space-in-id", "k:s:a b", "key.invalid_character")

LABEL = b"mintid:derived-key:v1"

def derived(kind, scope, digest):
    h = hashlib.sha256(LABEL + b"\x00" + bytes([len(kind)]) + kind.encode() + bytes([len(scope)]) + scope.encode()
                       + digest).digest()
    b = bytearray(h[:16])
    b[6] = (b[6] & 0x0F) | 0x80
    b[8] = (b[8] & 0x3F) | 0x80
    u = uuid.UUID(bytes=bytes(b))
    assert u.version == 8 and u.variant == uuid.RFC_4122
    return str(u)

def fp_text(digest):
    return "sha256:" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

body = hashlib.sha256(b'{"amount":12.5,"currency":"EUR"}').digest()
for name, kind, scope, digest in [
    ("derived-order", "order.create", "user:123", body),
    ("derived-other-scope", "order.create", "user:124", body),
    ("derived-other-kind", "order.cancel", "user:123", body),
    ("derived-zero-fingerprint", "k", "s", bytes(32)),
    ("derived-length-prefix-matters-1", "ab", "c", bytes(32)),
    ("derived-length-prefix-matters-2", "a", "bc", bytes(32)),
]:
    id_ = derived(kind, scope, digest)
    cases.append({"name": name, "op": "derived_key", "kind": kind, "scope": scope,
                  "fingerprint": fp_text(digest), "id": id_, "text": text_of(kind, scope, id_)})
assert derived("ab", "c", bytes(32)) != derived("a", "bc", bytes(32))
cases.append({"name": "derived-bad-scope", "op": "derived_key", "kind": "k", "scope": "a b",
              "fingerprint": fp_text(bytes(32)), "error": "key.invalid_character"})

names = [c["name"] for c in cases]
assert len(names) == len(set(names))
doc = {
    "description": "Idempotency keys: part validation, canonical text kind:scope:id, Idempotency-Key header "
                   "values, ids from business fields, and derived UUIDv8 ids. Expected values computed with "
                   "Python's hashlib, base64 and uuid.",
    "cases": cases,
}
sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=True) + "\n")
