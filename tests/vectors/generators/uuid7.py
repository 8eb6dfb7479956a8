"""Independent model of docs/spec.md's UUIDv7 section; writes tests/vectors/uuid7.json."""
import json, sys, uuid

MAX_MS = (1 << 48) - 1
B32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

def b32(v):
    return "".join(B32[(v >> (5 * (25 - i))) & 31] for i in range(26))

def forms(v):
    u = uuid.UUID(int=v)
    return {"bytes": u.bytes.hex(), "hyphenated": str(u), "simple": u.hex, "urn": u.urn, "base32": b32(v)}

def pack(ms, a, b):
    return (ms << 80) | (0x7 << 76) | (a << 64) | (0b10 << 62) | b

def fields(v):
    ms = v >> 80; a = (v >> 64) & 0xFFF; b = v & ((1 << 62) - 1)
    return {"unix_millis": str(ms), "rand_a": a, "rand_b": str(b), "counter": (a << 4) | (b >> 58)}

cases = []
def case(**kw):
    cases.append(kw)

# ---------- from_fields ----------
def from_fields(name, ms, a, b, error=None):
    c = {"name": name, "op": "from_fields", "unix_millis": str(ms), "rand_a": a, "rand_b": str(b)}
    if error:
        c["error"] = error
    else:
        v = pack(ms, a, b)
        c.update(forms(v)); c["counter"] = fields(v)["counter"]
    cases.append(c)

from_fields("rfc9562_appendix_a", 0x017F22E279B0, 0xCC3, 0x18C4DC0C0C07398F)
from_fields("all_fields_zero", 0, 0, 0)
from_fields("all_fields_max", MAX_MS, 0xFFF, (1 << 62) - 1)
from_fields("unix_ms_too_large", MAX_MS + 1, 0, 0, "uuid7.timestamp_out_of_range")
from_fields("unix_ms_u64_max", (1 << 64) - 1, 0, 0, "uuid7.timestamp_out_of_range")
from_fields("rand_a_too_large", 0, 0x1000, 0, "uuid7.rand_a_out_of_range")
from_fields("rand_b_too_large", 0, 0, 1 << 62, "uuid7.rand_b_out_of_range")

# ---------- parse (as UUIDv7) ----------
RFC = pack(0x017F22E279B0, 0xCC3, 0x18C4DC0C0C07398F)
def parse(name, text, error=None):
    c = {"name": name, "op": "parse", "text": text}
    if error:
        c["error"] = error
    else:
        hex_text = text[9:] if text.lower().startswith("urn:uuid:") else text
        v = int(uuid.UUID(hex_text).hex, 16) if not (len(text) == 26) else None
        if v is None:
            v = 0
            for ch in text.upper().replace("O", "0").replace("I", "1").replace("L", "1"):
                v = v * 32 + B32.index(ch)
        assert (v >> 76) & 0xF == 7 and (v >> 62) & 0b11 == 0b10
        c["bytes"] = uuid.UUID(int=v).bytes.hex(); c.update(fields(v))
    cases.append(c)

f = forms(RFC)
parse("rfc_example_hyphenated", f["hyphenated"])
parse("rfc_example_hyphenated_upper", f["hyphenated"].upper())
parse("rfc_example_simple", f["simple"])
parse("rfc_example_simple_mixed_case", "017F22e279B07cC398c4DC0c0c07398F")
parse("rfc_example_urn", f["urn"])
parse("rfc_example_urn_upper", f["urn"].upper())
parse("rfc_example_base32", f["base32"])
parse("rfc_example_base32_lower", f["base32"].lower())
parse("rfc_example_base32_crockford_aliases", f["base32"].replace("0", "O").replace("1", "l"))
parse("version_4", "f81d4fae-7dec-41d0-a765-00a0c91e6bf6", "uuid7.wrong_version")
parse("nil", "00000000-0000-0000-0000-000000000000", "uuid7.wrong_version")
parse("max", "ffffffff-ffff-ffff-ffff-ffffffffffff", "uuid7.wrong_version")
parse("version_8", "017f22e2-79b0-8cc3-98c4-dc0c0c07398f", "uuid7.wrong_version")
parse("version_7_ncs_variant", "017f22e2-79b0-7cc3-18c4-dc0c0c07398f", "uuid7.wrong_variant")
parse("version_7_microsoft_variant", "017f22e2-79b0-7cc3-d8c4-dc0c0c07398f", "uuid7.wrong_variant")
parse("version_7_future_variant", "017f22e279b07cc3f8c4dc0c0c07398f", "uuid7.wrong_variant")
parse("too_short", "017f22e2-79b0-7cc3-98c4-dc0c0c07398", "uuid7.invalid_text")
parse("not_hex", "017f22e2-79b0-7cc3-98c4-dc0c0c07398g", "uuid7.invalid_text")
parse("braced", "{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}", "uuid7.invalid_text")
parse("empty", "", "uuid7.invalid_text")

# ---------- parse_uuid (any version) ----------
def parse_uuid(name, text, error=None, value=None):
    c = {"name": name, "op": "parse_uuid", "text": text}
    if error:
        c["error"] = error
    else:
        u = uuid.UUID(int=value)
        variant = {uuid.RESERVED_NCS: "ncs", uuid.RFC_4122: "rfc9562",
                   uuid.RESERVED_MICROSOFT: "microsoft", uuid.RESERVED_FUTURE: "future"}[u.variant]
        c.update({"bytes": u.bytes.hex(), "version": (value >> 76) & 0xF, "variant": variant})
    cases.append(c)

v4 = uuid.UUID("f81d4fae-7dec-41d0-a765-00a0c91e6bf6").int
parse_uuid("version_4_hyphenated", "f81d4fae-7dec-41d0-a765-00a0c91e6bf6", value=v4)
parse_uuid("version_4_urn_upper", "URN:UUID:F81D4FAE-7DEC-41D0-A765-00A0C91E6BF6", value=v4)
parse_uuid("nil_simple", "0" * 32, value=0)
parse_uuid("max_base32", "7" + "Z" * 25, value=(1 << 128) - 1)
parse_uuid("microsoft_variant", "00000000-0000-1000-c000-000000000000", value=uuid.UUID("00000000-0000-1000-c000-000000000000").int)
parse_uuid("length_35", "f81d4fae-7dec-41d0-a765-00a0c91e6bf", "uuid.invalid_length")
parse_uuid("length_37", "f81d4fae-7dec-41d0-a765-00a0c91e6bf6a", "uuid.invalid_length")
parse_uuid("empty", "", "uuid.invalid_length")
parse_uuid("hyphen_missing", "f81d4fae07dec-41d0-a765-00a0c91e6bf6", "uuid.invalid_character")
parse_uuid("hyphen_misplaced", "f81d4fa-e7dec-41d0-a765-00a0c91e6bf6", "uuid.invalid_character")
parse_uuid("simple_with_non_hex", "f81d4fae7dec41d0a76500a0c91e6bfz", "uuid.invalid_character")
parse_uuid("urn_wrong_prefix", "urn:uid::f81d4fae-7dec-41d0-a765-00a0c91e6bf6", "uuid.invalid_character")
parse_uuid("base32_letter_u", "01FWHE4YDGFK1SHH6W1G60EECU", "uuid.invalid_character")
parse_uuid("base32_first_digit_8", "81FWHE4YDGFK1SHH6W1G60EECF", "uuid.base32_overflow")
parse_uuid("non_ascii_36_characters", "f81d4fae-7dec-41d0-a765-00a0c91e6bf\u00e9", "uuid.invalid_character")

# ---------- from_bytes ----------
def from_bytes(name, value, error=None):
    c = {"name": name, "op": "from_bytes", "bytes": uuid.UUID(int=value).bytes.hex()}
    if error:
        c["error"] = error
    else:
        c.update(fields(value)); c["hyphenated"] = str(uuid.UUID(int=value))
    cases.append(c)

from_bytes("rfc_example", RFC)
from_bytes("version_4", v4, "uuid7.wrong_version")
from_bytes("version_7_microsoft_variant", RFC | (0b110 << 61), "uuid7.wrong_variant")

# ---------- new_v8 ----------
for name, custom in [("v8_from_sha256_prefix", bytes.fromhex("e3b0c44298fc1c149afbf4c8996fb924")),
                     ("v8_all_ones", b"\xff" * 16), ("v8_all_zeros", b"\x00" * 16)]:
    v = int.from_bytes(custom, "big")
    v = (v & ~(0xF << 76)) | (0x8 << 76)
    v = (v & ~(0b11 << 62)) | (0b10 << 62)
    u = uuid.UUID(int=v)
    assert u.version == 8 and u.variant == uuid.RFC_4122
    cases.append({"name": name, "op": "new_v8", "custom": custom.hex(), "bytes": u.bytes.hex(), "hyphenated": str(u)})

# ---------- generate ----------
class Model:
    """The generator of docs/spec.md, written from the text."""
    def __init__(self, policy, entropy):
        self.policy, self.entropy, self.pos = policy, entropy, 0
        self.last, self.high = 0, 0
    def draw(self, n):
        out = bytes(self.entropy[(self.pos + i) % len(self.entropy)] for i in range(n))
        self.pos += n
        return out
    def read(self, clock):
        if clock >= self.high:
            return clock, None
        behind = self.high - clock
        kind, mx = self.policy["kind"], int(self.policy.get("max_millis", "0"))
        if kind == "logical" and behind <= mx:
            return clock, None
        # fail; wait beyond bound; wait on a clock that never moves (vectors' clock is stuck)
        return None, "uuid7.clock_rollback"
    def one(self, clock):
        now, err = self.read(clock)
        if err:
            return None, err
        if now > MAX_MS:
            return None, "uuid7.timestamp_overflow"
        if now > (self.last >> 16):
            seed = int.from_bytes(self.draw(2), "big") & 0x7FFF
            state = (now << 16) | seed
        else:
            if self.last == (1 << 64) - 1:
                return None, "uuid7.timestamp_overflow"
            state = self.last + 1
        self.last, self.high = state, max(self.high, now)
        tail = int.from_bytes(self.draw(8), "big") & ((1 << 58) - 1)
        counter = state & 0xFFFF
        v = pack(state >> 16, counter >> 4, ((counter & 0xF) << 58) | tail)
        return str(uuid.UUID(int=v)), None

def generate(name, policy, entropy, steps, description):
    m = Model(policy, entropy)
    out = []
    for clock, skip, count, expect_error in steps:
        step = {"clock_millis": str(clock)}
        if expect_error:
            got, err = m.one(clock)
            assert err == expect_error, (name, clock, got, err)
            step["error"] = err
        else:
            if skip:
                step["skip"] = skip
                for _ in range(skip):
                    got, err = m.one(clock); assert err is None
            ids = []
            for _ in range(count):
                got, err = m.one(clock); assert err is None, (name, err)
                ids.append(got)
            step["expect"] = ids
        out.append(step)
    cases.append({"name": name, "op": "generate", "description": description, "policy": policy,
                  "entropy": entropy.hex(), "steps": out})

T = 1_700_000_000_000
E1 = bytes.fromhex("a1b2c3d4e5f60718293a4b5c6d7e8f90" "0f1e2d3c4b5a69788796a5b4c3d2e1f0" "123456")
FAIL = {"kind": "fail"}
L5 = {"kind": "logical", "max_millis": "5"}
W5 = {"kind": "wait", "max_millis": "5"}
generate("seed_then_count", FAIL, E1,
         [(T, 0, 3, None), (T + 1, 0, 2, None), (T + 1, 0, 1, None), (T + 7, 0, 1, None)],
         "a new millisecond seeds the counter from 2 entropy bytes; the same millisecond counts on")
for policy, pname in [(FAIL, "fail"), (W5, "wait_5"), (L5, "logical_5")]:
    for back in [1, 5, 2000]:
        ok = pname == "logical_5" and back <= 5
        steps = [(T, 0, 2, None)]
        steps.append((T - back, 0, 2, None) if ok else (T - back, 0, 0, "uuid7.clock_rollback"))
        steps.append((T, 0, 1, None))
        steps.append((T + 1, 0, 1, None))
        generate(f"rollback_{back}ms_{pname}", policy, E1, steps,
                 f"the clock goes back {back} ms under {pname}" + (" (the clock never moves while the generator waits)" if pname == "wait_5" else ""))
EFF = bytes.fromhex("ffff" "0123456789abcdef")
generate("rollover_carries_into_the_timestamp", FAIL, EFF,
         [(T, 32767, 3, None), (T, 0, 1, None), (T + 1, 0, 1, None), (T + 2, 0, 1, None)],
         "seed 0x7fff: 32769 IDs fit in the millisecond, the next carries into the next millisecond; "
         "a clock behind a carried timestamp is not a rollback")
generate("clock_beyond_48_bits", FAIL, E1,
         [(T, 0, 1, None), (MAX_MS + 1, 0, 0, "uuid7.timestamp_overflow"), (T, 0, 1, None)],
         "a clock reading past 2^48 - 1 ms fails and is not remembered as the latest reading")
generate("last_millisecond_used_up", FAIL, EFF,
         [(MAX_MS, 32767, 2, None), (MAX_MS, 0, 0, "uuid7.timestamp_overflow")],
         "the very last ID (ffffffff-ffff-7fff-bfff-...) then overflow")
generate("clock_at_epoch", FAIL, E1, [(0, 0, 2, None), (1, 0, 1, None)],
         "a generator starts as if it had issued state 0: a first reading of 0 ms counts on from it without a seed")

doc = {"description": "UUIDv7 (RFC 9562) values, text forms and generators; see the uuid7 section of tests/vectors/README.md",
       "cases": cases}
for c in cases:
    c["name"] = c["op"] + "_" + c["name"]
names = [c["name"] for c in cases]
assert len(names) == len(set(names))
json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
sys.stdout.write("\n")
