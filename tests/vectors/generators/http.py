"""Independent model of docs/spec.md's "HTTP integrations" section (hashlib, base64, json); writes tests/vectors/http.json."""
import base64, hashlib, json, re

CASES = []

def case(name, op, **fields):
    CASES.append({"name": name, "op": op, **fields})

# --- default key kind: http.<method lower>.<10 hex of SHA-256(normalised full path)> -------
def normalise(path):
    # Cut at the first '?' or '#', then decode %XX (two hex digits, either case); other bytes stay.
    raw = re.split(r"[?#]", path, maxsplit=1)[0].encode()
    return re.sub(rb"%([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), raw)

def kind(method, path):
    return f"http.{method.lower()}.{hashlib.sha256(normalise(path)).hexdigest()[:10]}"

for method, path in [("POST", "/orders"), ("PATCH", "/orders"), ("post", "/orders"), ("POST", "/orders/"),
                     ("POST", "/"), ("POST", ""), ("PUT", "/caf\u00e9/\u2603"), ("M-SEARCH", "/x"),
                     ("ABCDEFGHIJKLMNOP", "/long-method"),
                     # The full path: a mount prefix is part of it.
                     ("POST", "/shop/orders"), ("POST", "/api/v1/orders"),
                     # A query or fragment is cut off.
                     ("POST", "/orders?amount=1"), ("POST", "/orders?"), ("POST", "/orders#x"), ("POST", "?a=1"),
                     # Escapes are decoded, so raw and decoded paths agree.
                     ("PUT", "/caf%C3%A9/%E2%98%83"), ("PUT", "/caf%c3%a9/%e2%98%83"), ("POST", "/%6Frders"),
                     ("POST", "/a%20b"), ("POST", "/a b"),
                     # Not escapes: kept as they are.
                     ("POST", "/100%"), ("POST", "/a%2"), ("POST", "/a%zz%41"), ("POST", "/a%ff")]:
    case(f"kind {method} {path!r}", "default_kind", method=method, path=path, kind=kind(method, path))
for method in ["", "GET POST", "ABCDEFGHIJKLMNOPQ", "P\u00d6ST", "PO/ST", "POST\n"]:
    case(f"kind refuses method {method!r}", "default_kind", method=method, path="/orders", error="http.invalid_method")

# --- JSON content types ----------------------------------------------------
def is_json(ct):
    if ct is None:
        return False
    essence = ct.split(";")[0].strip(" \t").lower()
    if not essence.startswith("application/"):
        return False
    sub = essence[len("application/"):]
    return sub == "json" or (len(sub) > 5 and sub.endswith("+json"))

for ct in ["application/json", "APPLICATION/JSON", "application/json; charset=utf-8", " application/json ",
           "application/problem+json", "application/vnd.api+json;v=1", "\tapplication/json",
           "text/plain", "text/json", "application/jsonx", "application/+json", "application/x-json-stream",
           "application", "", None]:
    case(f"json content type {ct!r}", "is_json_content_type", content_type=ct, expect=is_json(ct))

# --- body fingerprints -----------------------------------------------------
def fp_text(digest):
    return "sha256:" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

def fp_bytes(body):
    return fp_text(hashlib.sha256(b"\x00" + body).digest())

def fp_json(value):
    # JCS of objects with ASCII member names, small integers and ASCII strings.
    return fp_text(hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).digest())

order = {"item": "book", "qty": 2}
for ct, body, fp in [
    ("application/json", b'{ "qty": 2, "item": "book" }', fp_json(order)),
    ("application/merge-patch+json", b'{"item":"book","qty":2}', fp_json(order)),
    ("Application/JSON; charset=utf-8", b'{"qty":2,\n"item":"book"}', fp_json(order)),
    ("text/plain", b'{"item":"book","qty":2}', fp_bytes(b'{"item":"book","qty":2}')),
    ("text/plain", b'{"item":', fp_bytes(b'{"item":')),
    # JSON the canonicaliser refuses (I-JSON), though it is JSON: raw bytes.
    ("application/json", b'{"a":1,"a":2}', fp_bytes(b'{"a":1,"a":2}')),
    ("application/json", b'[9007199254740993]', fp_bytes(b'[9007199254740993]')),
    ("application/json", b'"\\ud800"', fp_bytes(b'"\\ud800"')),
    # An empty body is no body, whatever its content type.
    ("application/json", b"", fp_bytes(b"")),
    (None, b"", fp_bytes(b"")),
    ("application/octet-stream", bytes(range(256)), fp_bytes(bytes(range(256)))),
]:
    case(f"fingerprint {ct!r} {body[:24]!r}", "fingerprint_body", content_type=ct, body=body.hex(), fingerprint=fp)

# A JSON content type with a body that is not JSON (not UTF-8, or not JSON text): refused.
NOT_JSON = [b'{"item":', b"{bad}", b"[1] [2]", b"'x'", b'{"a":\xff}', b"\xef\xbb\xbf{}", b" "]
for body in NOT_JSON:
    case(f"fingerprint refuses {body!r}", "fingerprint_body", content_type="application/json", body=body.hex(),
         error="http.malformed_body")

# --- request fingerprints: the body's, and the raw query string --------------
def fp_request(body_fp, query):
    if query == "":
        return body_fp
    digest = base64.urlsafe_b64decode(body_fp[len("sha256:"):] + "=")
    return fp_text(hashlib.sha256(b"\x01" + digest + query.encode()).digest())

order_json = b'{"item":"book","qty":2}'
for ct, query, body, body_fp in [
    ("application/json", "", order_json, fp_json(order)),
    ("application/json", "amount=1", order_json, fp_json(order)),
    ("application/json", "amount=9999", order_json, fp_json(order)),
    ("application/json", "amount=1", b'{ "qty": 2, "item": "book" }', fp_json(order)),
    ("application/json", "b=2&a=1", order_json, fp_json(order)),
    ("application/json", "a=1&b=2", order_json, fp_json(order)),
    ("text/plain", "amount=1", b"hi", fp_bytes(b"hi")),
    (None, "amount=1", b"", fp_bytes(b"")),
    (None, "q=caf%C3%A9", b"", fp_bytes(b"")),
    (None, "caf\u00e9", b"", fp_bytes(b"")),
]:
    case(f"request {ct!r} {query!r} {body[:16]!r}", "fingerprint_request", content_type=ct, query=query,
         body=body.hex(), fingerprint=fp_request(body_fp, query))
case("request refuses a body that is not JSON", "fingerprint_request", content_type="application/json",
     query="amount=1", body=b"{bad}".hex(), error="http.malformed_body")

# --- problem documents (titles and types from the spec's table) -------------
PROBLEMS = {
    "missing_key": (400, "Idempotency key missing"),
    "malformed_key": (400, "Idempotency key malformed"),
    "invalid_request_id": (400, "Request ID not valid"),
    "grant_expired": (400, "Request ID grant expired"),
    "in_progress": (409, "Request already in progress"),
    "fingerprint_mismatch": (422, "Idempotency key reused with a different payload"),
    "key_too_old": (400, "Idempotency key older than retention"),
    "storage_unavailable": (503, "Idempotency storage unavailable"),
    "malformed_body": (400, "Request body malformed"),
}

def doc(type_uri, title, status, detail):
    d = {"type": type_uri, "title": title, "status": status}
    if detail is not None:
        d["detail"] = detail
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False)

for name, (status, title) in PROBLEMS.items():
    uri = "https://mintid.dev/problems/" + name.replace("_", "-")
    case(f"problem {name}", "problem_document", problem=name, body=doc(uri, title, status, None))
for detail in ["the key is \"bad\"", "line\nbreak\ttab\u0001\u001f\\", "caf\u00e9 \u2603 \U0001f600", ""]:
    uri = "https://mintid.dev/problems/malformed-key"
    case(f"problem detail {detail!r}", "problem_document", problem="malformed_key", detail=detail,
         body=doc(uri, "Idempotency key malformed", 400, detail))

for status, title in [(401, "Unauthorized"), (413, "Content Too Large"), (500, "Internal Server Error")]:
    case(f"status {status}", "status_document", status=status, body=doc("about:blank", title, status, None))
    case(f"status {status} with detail", "status_document", status=status, detail="why",
         body=doc("about:blank", title, status, "why"))
for status in [200, 400, 404, 503, 0]:
    case(f"status {status} has no plain problem", "status_document", status=status, error="http.invalid_status")

for grant, expires in [("AAAAAQAAAZOVXKgAn1Ym0m9Zq4XzYk8Q2a9PcFi7XJqGQ3w0zBP3mR3wKxw", 1734567890123), ("g", 0),
                       ("x", 18446744073709551615)]:
    case(f"grant {grant[:8]} {expires}", "grant_document", grant=grant, expires=str(expires),
         body='{"grant":' + json.dumps(grant) + ',"expiresMillis":' + str(expires) + "}")

# --- envelopes ---------------------------------------------------------------
def encode(status, headers, keep, body):
    keep = {k.lower() for k in keep}
    ct = ""
    head = f"mintid-http/1 {status}\r\n"
    for n, v in headers:
        if n.lower() == "content-type":
            ct = v
        elif n.lower() in keep:
            head += f"{n.lower()}: {v}\r\n"
    return ct, head.encode() + b"\r\n" + body

DEFAULT_KEEP = ["location", "etag", "last-modified", "cache-control", "content-language", "content-location"]
for name, status, headers, keep, body in [
    ("created with location", 201, [["content-type", "application/json"], ["location", "/orders/7"]], DEFAULT_KEEP, b'{"order":7}'),
    ("set-cookie is dropped", 200, [["set-cookie", "s=1"], ["content-type", "text/plain"], ["etag", "\"v1\""]], DEFAULT_KEEP, b"ok"),
    ("names compared case-insensitively, written lower case", 200, [["Location", "/a"], ["X-Trace", "t"]], ["LOCATION", "x-trace"], b""),
    ("repeated names repeat", 204, [["vary", "a"], ["vary", "b"]], ["vary"], b""),
    ("the last content type wins", 200, [["Content-Type", "a/b"], ["content-type", "c/d"]], [], b"x"),
    ("no content type", 500, [], DEFAULT_KEEP, b"\x00\xff\r\n\r\n"),
    ("non-ASCII value as UTF-8", 200, [["content-language", "caf\u00e9"]], DEFAULT_KEEP, b""),
    ("empty value", 200, [["etag", ""]], DEFAULT_KEEP, b""),
    ("a header not stored is not checked", 200, [["x bad", "a\r\nb"]], DEFAULT_KEEP, b""),
    ("status 100", 100, [], [], b""),
    ("status 599", 599, [], [], b""),
]:
    ct, env = encode(status, headers, keep, body)
    case(f"encode {name}", "encode_envelope", status=status, headers=headers, stored_headers=keep, body=body.hex(),
         content_type=ct, envelope=env.hex())
for name, status, headers, keep in [
    ("status 99", 99, [], []),
    ("status 600", 600, [], []),
    ("CRLF in a stored value", 200, [["location", "/a\r\nset-cookie: s=1"]], ["location"]),
    ("LF in a stored value", 200, [["location", "/a\nb"]], ["location"]),
    ("NUL in a stored value", 200, [["location", "/a\u0000"]], ["location"]),
    ("a stored name that is no token", 200, [["x trace", "1"]], ["x trace"]),
    ("an empty stored name", 200, [["", "1"]], [""]),
]:
    case(f"encode refuses {name}", "encode_envelope", status=status, headers=headers, stored_headers=keep, body="",
         error="http.invalid_status" if name.startswith("status") else "http.invalid_header")

def decode_ok(name, ct, env, status, headers, body):
    case(f"decode {name}", "decode_envelope", content_type=ct, envelope=env.hex(), status=status,
         headers=([["content-type", ct]] if ct else []) + headers, body=body.hex())

decode_ok("created", "application/json", b"mintid-http/1 201\r\nlocation: /orders/7\r\n\r\n{}", 201, [["location", "/orders/7"]], b"{}")
decode_ok("no headers, empty body", "", b"mintid-http/1 204\r\n\r\n", 204, [], b"")
decode_ok("the body holds blank lines", "", b"mintid-http/1 500\r\n\r\n\r\n\r\nx", 500, [], b"\r\n\r\nx")
decode_ok("a value with colons", "text/plain", b"mintid-http/1 200\r\nx-a: b: c\r\nx-a: \r\n\r\n", 200, [["x-a", "b: c"], ["x-a", ""]], b"")
decode_ok("UTF-8 value", "", "mintid-http/1 200\r\ncontent-language: caf\u00e9\r\n\r\n".encode(), 200, [["content-language", "caf\u00e9"]], b"")

def decode_bad(name, env, position):
    case(f"decode refuses {name}", "decode_envelope", content_type="", envelope=env.hex(),
         error="http.bad_stored_response", position=position)

decode_bad("empty bytes", b"", 0)
decode_bad("no blank line", b"mintid-http/1 200\r\n", 19)
decode_bad("a raw body", b'{"order":7}', 11)
decode_bad("another version", b"mintid-http/2 200\r\n\r\n", 0)
decode_bad("a two-digit status", b"mintid-http/1 20\r\n\r\n", 14)
decode_bad("a signed status", b"mintid-http/1 +20\r\n\r\n", 14)
decode_bad("status 600", b"mintid-http/1 600\r\n\r\n", 14)
decode_bad("status 099", b"mintid-http/1 099\r\n\r\n", 14)
decode_bad("a line without colon-space", b"mintid-http/1 200\r\nlocation:/x\r\n\r\n", 19)
decode_bad("an upper-case name", b"mintid-http/1 200\r\nLocation: /x\r\n\r\n", 19)
decode_bad("content-type in the head", b"mintid-http/1 200\r\ncontent-type: a/b\r\n\r\n", 19)
decode_bad("an empty name", b"mintid-http/1 200\r\na: 1\r\n: 2\r\n\r\n", 25)
decode_bad("a lone LF in a value", b"mintid-http/1 200\r\na: 1\n2\r\n\r\n", 22)
decode_bad("a head that is not UTF-8", b"mintid-http/1 200\r\na: \xff\r\n\r\n", 22)

case("defaults", "defaults", idempotency_key_header="Idempotency-Key", request_id_header="Mintid-Request-Id",
     body_limit="1048576", methods=["POST", "PATCH"], stored_headers=DEFAULT_KEEP, grant_ttl_millis="3600000",
     envelope_magic="mintid-http/1 ", about_blank="about:blank", grant_content_type="application/json")

print(json.dumps({"description": "The HTTP integrations' shared rules: default key kind, JSON content types, body "
                  "and request fingerprints, problem and grant documents, the stored response envelope, defaults "
                  "(docs/spec.md, \"HTTP integrations\"). Generated by generators/http.py.",
                  "cases": CASES}, indent=1, ensure_ascii=False))
