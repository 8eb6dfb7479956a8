"""Independent model of docs/spec.md's request-ID section (Python's hmac, hashlib, base64, uuid); writes tests/vectors/request_id.json."""
import base64, hashlib, hmac, json, sys, uuid

def b64(data): return base64.urlsafe_b64encode(data).rstrip(b"=").decode()
def noncanonical(text):
    # 43 bytes end in a character whose low 4 bits are unused: A, Q, g or w.
    assert text[-1] in "AQgw"
    return text[:-1] + chr(ord(text[-1]) + 1)
def unb64(text): return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))

LABEL = b"mintid-grant-v1"
GRANT_V1, ID_V1 = 0x02, 0x01
SECRET1 = bytes(range(32))                                  # key id 1
SECRET2 = hashlib.sha256(b"mintid test key 2").digest()     # key id 2
SECRET3 = bytes(range(64, 64 + 48))                         # key id 4000000000, 48 bytes

def grant_key(secret, key_id, expires, scope):
    info = LABEL + key_id.to_bytes(4, "big") + expires.to_bytes(6, "big") + scope.encode()
    return hmac.new(secret, info, hashlib.sha256).digest()

def grant_bytes(secret, key_id, expires, scope):
    return bytes([GRANT_V1]) + key_id.to_bytes(4, "big") + expires.to_bytes(6, "big") + \
        grant_key(secret, key_id, expires, scope)

def uuid7(ms, rand_a, rand_b):
    value = (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return value.to_bytes(16, "big")

def mint(grant, uid):
    assert grant[0] == GRANT_V1
    body = bytes([ID_V1]) + grant[1:11] + uid
    tag = hmac.new(grant[11:43], body, hashlib.sha256).digest()[:16]
    return body + tag

def text_uuid(raw): return str(uuid.UUID(bytes=raw))

T = 0x017F22E279B0                       # the RFC 9562 example's timestamp, 1645557742000
U1 = uuid7(T, 0xCC3, 0x18C4DC0C0C07398F)  # RFC 9562 appendix A.6
assert text_uuid(U1) == "017f22e2-79b0-7cc3-98c4-dc0c0c07398f"
U2 = uuid7(T + 250, 0x001, 0x0123456789ABCDEF)
EXP = T + 3_600_000
SCOPE = "user:42"
G1 = grant_bytes(SECRET1, 1, EXP, SCOPE)
G2 = grant_bytes(SECRET2, 2, EXP, SCOPE)
R1 = mint(G1, U1)
assert len(b64(G1)) == 58 and len(b64(R1)) == 58

def key(key_id, secret): return {"id": str(key_id), "secret": secret.hex()}
K1, K2, K3 = key(1, SECRET1), key(2, SECRET2), key(4000000000, SECRET3)

cases = []
def add(name, op, **fields):
    cases.append({"name": name, "op": op, **fields})

# Grants.
for name, k, secret, kid, exp, scope in [
    ("grant for user:42, key 1", K1, SECRET1, 1, EXP, SCOPE),
    ("grant for user:42, key 2", K2, SECRET2, 2, EXP, SCOPE),
    ("grant for user:43 differs", K1, SECRET1, 1, EXP, "user:43"),
    ("grant one millisecond later differs", K1, SECRET1, 1, EXP + 1, SCOPE),
    ("grant with a 48-byte secret and a large key id", K3, SECRET3, 4000000000, EXP, SCOPE),
    ("grant with a non-ASCII scope", K1, SECRET1, 1, EXP, "tenant/Zürich/用户"),
    ("grant with a 64-byte scope", K1, SECRET1, 1, EXP, "s" * 64),
    ("grant expiring at the largest 48-bit time", K1, SECRET1, 1, 2**48 - 1, SCOPE),
    ("grant expiring at zero", K1, SECRET1, 1, 0, SCOPE),
]:
    g = grant_bytes(secret, kid, exp, scope)
    add(name, "issue_grant", key=k, scope=scope, expires=str(exp),
        grant_key=g[11:].hex(), grant=b64(g))
add("grant for an empty scope", "issue_grant", key=K1, scope="", expires=str(EXP),
    error="request_id.invalid_scope")
add("grant for a 65-byte scope", "issue_grant", key=K1, scope="s" * 65, expires=str(EXP),
    error="request_id.invalid_scope")
add("grant expiring beyond 48 bits", "issue_grant", key=K1, scope=SCOPE, expires=str(2**48),
    error="request_id.expiry_out_of_range")
add("a 31-byte secret is too weak", "issue_grant", key=key(1, bytes(31)), scope=SCOPE,
    expires=str(EXP), error="request_id.weak_secret")

# Grant texts.
add("grant text read back", "parse_grant", text=b64(G1), key_id="1", expires=str(EXP),
    grant_key=G1[11:].hex())
for name, text in [
    ("grant text one character short", b64(G1)[:-1]),
    ("grant text with padding", b64(G1) + "=="),
    ("grant text with a character outside base64url", "+" + b64(G1)[1:]),
    ("grant text with non-zero unused bits", noncanonical(b64(G1))),
    ("a request ID is not a grant", b64(R1)),
    ("empty grant text", ""),
]:
    assert text != b64(G1)
    add(name, "parse_grant", text=text, error="request_id.malformed_grant")

# Minting.
for name, g, uid in [
    ("mint the RFC 9562 example UUID", G1, U1),
    ("mint a second UUID from the same grant", G1, U2),
    ("mint under key 2", G2, U1),
]:
    r = mint(g, uid)
    add(name, "mint", grant=b64(g), uuid=text_uuid(uid), tag=r[27:].hex(), request_id=b64(r))

# Verifying.
FRESH = {"max_age": "60000", "max_skew": "5000"}
def verify(name, rid, now, expect=None, error=None, scope=SCOPE, keys=(K1, K2), current="1",
           fresh=FRESH):
    case = {"keys": list(keys), "current": current, "request_id": rid, "scope": scope,
            "now": str(now), **fresh}
    if error:
        case["error"] = error
    else:
        case["expect"] = expect
    add(name, "verify", **case)

OK = text_uuid(U1)
verify("a fresh signed ID verifies", b64(R1), T + 1000, OK)
verify("an ID minted under key 2 verifies in the same ring", b64(mint(G2, U1)), T + 1000, OK)
verify("a key of the ring that is not current still verifies", b64(R1), T + 1000, OK, current="2")
verify("an ID from a grant with a non-ASCII scope", b64(mint(grant_bytes(SECRET1, 1, EXP, "tenant/Zürich/用户"), U1)),
       T, OK, scope="tenant/Zürich/用户")
verify("another user's scope fails as a bad tag", b64(R1), T + 1000, error="request_id.bad_tag",
       scope="user:43")
verify("a scope differing only in case fails", b64(R1), T + 1000, error="request_id.bad_tag",
       scope="USER:42")
tampered_tag = R1[:42] + bytes([R1[42] ^ 1])
verify("a flipped tag bit", b64(tampered_tag), T + 1000, error="request_id.bad_tag")
later = R1[:5] + (EXP + 86_400_000).to_bytes(6, "big") + R1[11:]
verify("an expiry pushed later", b64(later), T + 1000, error="request_id.bad_tag")
other_key = R1[:1] + (2).to_bytes(4, "big") + R1[5:]
verify("a key id switched to another known key", b64(other_key), T + 1000, error="request_id.bad_tag")
swapped = R1[:11] + U2 + R1[27:]
verify("a UUID swapped for another", b64(swapped), T + 1000, error="request_id.bad_tag")
unknown = R1[:1] + (9).to_bytes(4, "big") + R1[5:]
verify("an unknown key id", b64(unknown), T + 1000, error="request_id.unknown_key")
verify("a key retired from the ring", b64(R1), T + 1000, error="request_id.unknown_key",
       keys=(K2,), current="2")
verify("the grant expires at its expiry", b64(R1), EXP, error="request_id.grant_expired",
       fresh={"max_age": "86400000", "max_skew": "5000"})
verify("one millisecond before expiry", b64(R1), EXP - 1, OK,
       fresh={"max_age": "86400000", "max_skew": "5000"})
verify("a forged ID with an expired grant is a bad tag first", b64(tampered_tag), EXP,
       error="request_id.bad_tag")
verify("an expired grant is reported before the ID's age", b64(R1), EXP,
       error="request_id.grant_expired")
verify("exactly max_age old", b64(R1), T + 60000, OK)
verify("one millisecond older than max_age", b64(R1), T + 60001, error="request_id.too_old")
verify("exactly max_skew ahead", b64(R1), T - 5000, OK)
verify("one millisecond beyond max_skew", b64(R1), T - 5001, error="request_id.in_future")
verify("an empty scope", b64(R1), T, error="request_id.invalid_scope", scope="")
verify("a 65-byte scope", b64(R1), T, error="request_id.invalid_scope", scope="s" * 65)
verify("empty text", "", T, error="request_id.malformed")
verify("one character short", b64(R1)[:-1], T, error="request_id.malformed")
verify("one character long", b64(R1) + "A", T, error="request_id.malformed")
verify("a character outside base64url", b64(R1)[:10] + "/" + b64(R1)[11:], T,
       error="request_id.malformed")
verify("non-zero unused bits in the last character",
       noncanonical(b64(R1)), T, error="request_id.malformed")
verify("an unsigned UUID where a signed ID is expected", OK, T, error="request_id.malformed")
not_v7 = bytearray(R1); not_v7[11 + 6] = (not_v7[11 + 6] & 0x0F) | 0x40
verify("an embedded UUID of version 4", b64(bytes(not_v7)), T, error="request_id.malformed")
bad_variant = bytearray(R1); bad_variant[11 + 8] = (bad_variant[11 + 8] & 0x3F) | 0xC0
verify("an embedded UUID with the wrong variant", b64(bytes(bad_variant)), T,
       error="request_id.malformed")
v2 = bytes([0x03]) + R1[1:]
verify("an unknown format byte", b64(v2), T, error="request_id.unsupported_version")
verify("a grant sent as a request ID", b64(G1), T, error="request_id.unsupported_version")

# Unsigned request IDs.
def unsigned(name, text, now, expect=None, error=None, fresh=FRESH):
    name = "unsigned: " + name
    case = {"text": text, "now": str(now), **fresh}
    if error:
        case["error"] = error
    else:
        case["expect"] = expect
    add(name, "verify_unsigned", **case)

unsigned("a fresh UUIDv7", OK, T + 1000, OK)
unsigned("exactly max_age old", OK, T + 60000, OK)
unsigned("older than max_age", OK, T + 60001, error="request_id.too_old")
unsigned("exactly max_skew ahead", OK, T - 5000, OK)
unsigned("beyond max_skew", OK, T - 5001, error="request_id.in_future")
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
def base32(raw):
    value = int.from_bytes(raw, "big")
    return "".join(CROCKFORD[(value >> (5 * (25 - i))) & 31] for i in range(26))
unsigned("upper-case hyphenated text", OK.upper(), T, OK)
unsigned("simple hex text", uuid.UUID(bytes=U1).hex, T, OK)
unsigned("URN text", uuid.UUID(bytes=U1).urn, T, OK)
unsigned("Crockford base32 text", base32(U1), T, OK)
unsigned("a UUIDv4 is not a request ID", "9f0c3d0e-5b4a-4c1e-9d2f-3a6b7c8d9e0f", T,
         error="request_id.malformed")
unsigned("not a UUID", "order-123", T, error="request_id.malformed")
unsigned("a signed ID is not an unsigned one", b64(R1), T, error="request_id.malformed")
unsigned("an old timestamp against a large window", OK, T + 86_400_000, OK,
         fresh={"max_age": "86400000", "max_skew": "0"})

# Key rings.
def ring(name, steps):
    add(name, "key_ring", steps=steps)
ring("rotation keeps the old key for verification until it is retired", [
    {"do": "new", "key": K1, "expect": "ok", "current": "1"},
    {"do": "rotate", "key": K2, "expect": "ok", "current": "2"},
    {"do": "retire", "id": "2", "error": "request_id.current_key", "current": "2"},
    {"do": "retire", "id": "1", "expect": "ok", "current": "2"},
    {"do": "retire", "id": "1", "error": "request_id.unknown_key", "current": "2"},
])
ring("a key id is held once", [
    {"do": "new", "key": K1, "expect": "ok", "current": "1"},
    {"do": "add", "key": key(1, SECRET2), "error": "request_id.duplicate_key_id", "current": "1"},
    {"do": "rotate", "key": key(1, SECRET2), "error": "request_id.duplicate_key_id", "current": "1"},
    {"do": "add", "key": K2, "expect": "ok", "current": "1"},
])
ring("a weak secret is refused", [
    {"do": "new", "key": key(1, bytes(31)), "error": "request_id.weak_secret"},
])

names = [c["name"] for c in cases]
assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
doc = {"description": "Request IDs and grants: grant derivation, grant and request-ID texts, "
       "minting, every way verification fails, unsigned request IDs and key rings. "
       "See tests/vectors/README.md, section request-id.", "cases": cases}
json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
