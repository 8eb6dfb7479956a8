# Independent computation of tests/vectors/snowflake.json: plain shifts, hand-derived slots.
import json
E = 1735689600000          # 2025-01-01T00:00:00Z
T = 1288834974657          # Twitter epoch
AL = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
def b32(v):
    return "".join(AL[(v >> (5 * (12 - i))) & 31] for i in range(13))
def s(v): return str(v)

PRESETS = {
    "classic": dict(time_bits=41, worker_bits=10, sequence_bits=12, datacenter_bits=0, epoch_millis=E, tick_millis=1),
    "twitter": dict(time_bits=41, worker_bits=10, sequence_bits=12, datacenter_bits=5, epoch_millis=T, tick_millis=1),
    "datacenter-worker": dict(time_bits=41, worker_bits=10, sequence_bits=12, datacenter_bits=5, epoch_millis=E, tick_millis=1),
    "sonyflake-like": dict(time_bits=39, worker_bits=16, sequence_bits=8, datacenter_bits=0, epoch_millis=E, tick_millis=10),
    "js-safe": dict(time_bits=41, worker_bits=6, sequence_bits=6, datacenter_bits=0, epoch_millis=E, tick_millis=1),
}
def L(layout):
    return PRESETS[layout] if isinstance(layout, str) else dict(datacenter_bits=0, **layout)
def lay_json(layout):
    if isinstance(layout, str): return layout
    d = {k: layout[k] for k in ("time_bits", "worker_bits", "sequence_bits")}
    d["epoch_millis"] = s(layout["epoch_millis"]); d["tick_millis"] = s(layout["tick_millis"])
    if "datacenter_bits" in layout: d["datacenter_bits"] = layout["datacenter_bits"]
    return d
def idof(layout, tick, worker, seq):
    l = L(layout)
    assert tick < 2**l["time_bits"] and worker < 2**l["worker_bits"] and seq < 2**l["sequence_bits"]
    return (tick << (l["worker_bits"] + l["sequence_bits"])) | (worker << l["sequence_bits"]) | seq

cases = []
def case(name, op, **kw):
    c = {"name": name, "op": op}; c.update(kw); cases.append(c)

# ---- layouts (presets and lifetimes)
for name, l in PRESETS.items():
    total = l["time_bits"] + l["worker_bits"] + l["sequence_bits"]
    life = (2 ** l["time_bits"]) * l["tick_millis"]
    case(f"preset {name}", "layout", layout=name, expect={
        "time_bits": l["time_bits"], "worker_bits": l["worker_bits"], "sequence_bits": l["sequence_bits"],
        "datacenter_bits": l["datacenter_bits"], "epoch_millis": s(l["epoch_millis"]), "tick_millis": s(l["tick_millis"]),
        "max_worker": s(2 ** l["worker_bits"] - 1), "max_sequence": s(2 ** l["sequence_bits"] - 1),
        "max_id": s(2 ** total - 1), "js_safe": total <= 53,
        "lifetime_millis": s(life), "expires_at_unix_millis": s(l["epoch_millis"] + life)})
case("preset names ignore case and underscores", "layout", layout="JS_SAFE", expect={"max_id": s(2**53 - 1), "js_safe": True})
custom = dict(time_bits=20, worker_bits=3, sequence_bits=4, epoch_millis=1000, tick_millis=1000)
case("custom layout remaining lifetime", "layout", layout=lay_json(custom), now_unix_millis=s(1000 + 2**20 * 1000 - 1500),
     expect={"lifetime_millis": s(2**20 * 1000), "expires_at_unix_millis": s(1000 + 2**20 * 1000), "remaining_millis": "1500", "js_safe": True, "max_id": s(2**27 - 1)})
case("remaining lifetime after the end is zero", "layout", layout="classic", now_unix_millis=s(E + 2**41 + 5), expect={"remaining_millis": "0"})

# ---- invalid layouts
def bad(name, err="snowflake.invalid_layout", **l):
    base = dict(time_bits=41, worker_bits=10, sequence_bits=12, epoch_millis=0, tick_millis=1); base.update(l)
    case(name, "layout_invalid", layout=lay_json(base), error=err)
bad("no time bits", time_bits=0)
bad("no sequence bits", sequence_bits=0)
bad("64 bits leave no sign bit", worker_bits=11)
bad("zero tick", tick_millis=0)
bad("end of time field past u64", time_bits=62, worker_bits=0, sequence_bits=1, tick_millis=4)
bad("epoch too late", epoch_millis=2**64 - 2**41)
bad("datacenter wider than worker", datacenter_bits=11)
case("unknown preset", "layout_invalid", layout="sonyflake", error="snowflake.unknown_preset")
case("63 bits is the most", "layout", layout=lay_json(dict(time_bits=62, worker_bits=0, sequence_bits=1, epoch_millis=0, tick_millis=1)),
     expect={"max_id": s(2**63 - 1), "expires_at_unix_millis": s(2**62)})

# ---- compose
def comp(name, layout, worker, seq, unix_millis=None, tick=None, error=None):
    kw = dict(layout=lay_json(layout) if not isinstance(layout, str) else layout, worker=s(worker), sequence=s(seq))
    if unix_millis is not None: kw["unix_millis"] = s(unix_millis)
    if tick is not None: kw["tick"] = s(tick)
    if error: kw["error"] = error
    else:
        l = L(layout)
        t = tick if tick is not None else (unix_millis - l["epoch_millis"]) // l["tick_millis"]
        v = idof(layout, t, worker, seq); kw["id"] = s(v); kw["base32"] = b32(v)
    case(name, "compose", **kw)
comp("classic at the epoch", "classic", 0, 0, unix_millis=E)
comp("classic worker 7 sequence 3", "classic", 7, 3, unix_millis=E + 1000)
comp("classic a year in", "classic", 1023, 4095, unix_millis=E + 31_536_000_000)
comp("classic last tick", "classic", 1023, 4095, tick=2**41 - 1)
comp("twitter layout", "twitter", (3 << 5) | 4, 17, unix_millis=1_700_000_000_123)
comp("sonyflake-like rounds down to the 10 ms tick", "sonyflake-like", 65535, 255, unix_millis=E + 1239)
comp("js-safe largest id", "js-safe", 63, 63, tick=2**41 - 1)
comp("js-safe compose", "js-safe", 5, 6, unix_millis=E + 86_400_000)
comp("before the epoch", "classic", 0, 0, unix_millis=E - 1, error="snowflake.time_out_of_range")
comp("past the end", "classic", 0, 0, unix_millis=E + 2**41, error="snowflake.time_out_of_range")
comp("tick past the end", "js-safe", 0, 0, tick=2**41, error="snowflake.time_out_of_range")
comp("compose worker out of range", "classic", 1024, 0, unix_millis=E, error="snowflake.worker_out_of_range")
comp("js-safe worker out of range", "js-safe", 64, 0, unix_millis=E, error="snowflake.worker_out_of_range")
comp("sequence out of range", "classic", 0, 4096, unix_millis=E, error="snowflake.sequence_out_of_range")

# ---- decode
def dec(name, layout, idv, error=None):
    kw = dict(layout=layout, id=s(idv))
    if error: kw["error"] = error
    else:
        l = L(layout); ws = l["worker_bits"] + l["sequence_bits"]
        tick = idv >> ws
        kw.update(tick=s(tick), unix_millis=s(l["epoch_millis"] + tick * l["tick_millis"]),
                  worker=s((idv >> l["sequence_bits"]) & (2**l["worker_bits"] - 1)),
                  sequence=s(idv & (2**l["sequence_bits"] - 1)))
    case(name, "decode", **kw)
# a tweet ID from Twitter's API documentation
dec("a tweet id", "twitter", 1050118621198921728)
dec("classic largest id", "classic", 2**63 - 1)
dec("classic", "classic", (123456789 << 22) | (513 << 12) | 77)
dec("sonyflake-like", "sonyflake-like", (98765 << 24) | (4242 << 8) | 9)
dec("js-safe largest", "js-safe", 2**53 - 1)
dec("js-safe does not hold 2^53", "js-safe", 2**53, error="snowflake.id_out_of_range")
dec("sign bit set", "classic", 2**63, error="snowflake.id_out_of_range")
dec("all bits set", "classic", 2**64 - 1, error="snowflake.id_out_of_range")

# ---- datacenter + worker split
case("datacenter and worker join", "worker_id", layout="datacenter-worker", datacenter="3", worker="4", worker_id=s((3 << 5) | 4))
case("largest datacenter and worker", "worker_id", layout="twitter", datacenter="31", worker="31", worker_id="1023")
case("datacenter out of range", "worker_id", layout="datacenter-worker", datacenter="32", worker="0", error="snowflake.worker_out_of_range")
case("worker within datacenter out of range", "worker_id", layout="datacenter-worker", datacenter="0", worker="32", error="snowflake.worker_out_of_range")
case("no datacenter field", "worker_id", layout="classic", datacenter="1", worker="0", error="snowflake.worker_out_of_range")
case("no datacenter field, whole worker", "worker_id", layout="classic", datacenter="0", worker="1023", worker_id="1023")

# ---- text
def pdec(text, idv=None, error=None, name=None):
    kw = dict(text=text)
    if error: kw["error"] = error
    else: kw["id"] = s(idv); kw["base32"] = b32(idv)
    case(name or f"decimal {text!r}", "parse_decimal", **kw)
pdec("0", 0); pdec("9223372036854775807", 2**63 - 1); pdec("0042", 42, name="leading zeros")
pdec("1050118621198921728", 1050118621198921728)
for t in ["", "+1", "-1", " 1", "1 ", "1_000", "1.5", "0x10", "\u0661"]:
    pdec(t, error="snowflake.invalid_text")
for t in ["9223372036854775808", "18446744073709551615", "18446744073709551616", "123456789012345678901234567890"]:
    pdec(t, error="snowflake.id_out_of_range")
def p32(text, idv=None, error=None, name=None):
    kw = dict(text=text)
    if error: kw["error"] = error
    else: kw["id"] = s(idv); kw["base32"] = b32(idv)
    case(name or f"base32 {text!r}", "parse_base32", **kw)
p32("0000000000000", 0); p32("7ZZZZZZZZZZZZ", 2**63 - 1)
p32(b32(1050118621198921728), 1050118621198921728)
p32(b32(1050118621198921728).lower(), 1050118621198921728, name="lower case")
p32("000000000001o", 32, name="O reads as 0"); p32("0000000000Oil", 33 + 0, name="I and L read as 1")
for t in ["", "123", "00000000000000", "00000000000U0", "0000000000-00", "000000000000 "]:
    p32(t, error="snowflake.invalid_text")
for t in ["8000000000000", "FZZZZZZZZZZZZ", "G000000000000", "ZZZZZZZZZZZZZ"]:
    p32(t, error="snowflake.id_out_of_range")

# ---- generate: expected (tick, sequence) per ID derived by hand from the spec
def gen(name, layout, worker, steps, clock_millis, advancing=False, rollback=None, sequence=None,
        after_id=None, after_millis=None, error=None):
    c = dict(layout=lay_json(layout) if not isinstance(layout, str) else layout, worker=s(worker),
             clock={"start_millis": s(clock_millis), "advance_on_pause": advancing})
    if rollback: c["rollback"] = rollback
    if sequence: c["sequence_policy"] = sequence
    if after_id is not None: c["starting_after_id"] = s(after_id)
    if after_millis is not None: c["starting_after_unix_millis"] = s(after_millis)
    if error: c["error"] = error
    out = []
    for st in steps:
        o = {}
        if "clock" in st: o["clock_millis"] = s(st["clock"])
        o["call"] = st["call"]; o["count"] = st.get("count", len(st.get("slots", [])) or 1)
        if "slots" in st:
            ids = [idof(layout, t, worker, q) for t, q in st["slots"]]
            o["ids"] = [s(v) for v in ids]; o["base32"] = [b32(v) for v in ids]
        if "error" in st: o["error"] = st["error"]
        if "after" in st: o["clock_after_millis"] = s(st["after"])
        if "high_water" in st: o["high_water"] = s(idof(layout, st["high_water"][0], worker, st["high_water"][1]))
        out.append(o)
    c["steps"] = out
    case(name, "generate", **c)

small = dict(time_bits=41, worker_bits=10, sequence_bits=2, epoch_millis=E, tick_millis=1)

gen("classic basics", "classic", 7, [
    {"call": "next", "slots": [(1000, 0), (1000, 1), (1000, 2)]},
    {"clock": E + 1001, "call": "next", "slots": [(1001, 0)]},
    {"clock": E + 1005, "call": "batch", "slots": [(1005, 0), (1005, 1)], "after": E + 1005},
], clock_millis=E + 1000)
gen("used-up sequence waits for the next tick", small, 5, [
    {"call": "next", "slots": [(100, 0), (100, 1), (100, 2), (100, 3), (101, 0)], "after": E + 101},
    {"call": "batch", "slots": [(101, 1), (101, 2), (101, 3), (102, 0), (102, 1)], "after": E + 102},
], clock_millis=E + 100, advancing=True)
gen("used-up sequence on a stalled clock", small, 5, [
    {"call": "next", "slots": [(100, 0), (100, 1), (100, 2), (100, 3)]},
    {"call": "next", "error": "snowflake.wait_exceeded", "after": E + 100},
    {"clock": E + 101, "call": "next", "slots": [(101, 0)]},
], clock_millis=E + 100)
gen("borrow ahead up to 2 ticks", small, 5, [
    {"call": "batch", "slots": [(100 + i // 4, i % 4) for i in range(12)]},
    {"call": "next", "error": "snowflake.wait_exceeded"},
    {"clock": E + 101, "call": "next", "slots": [(103, 0)]},
    {"clock": E + 150, "call": "next", "slots": [(150, 0)]},
], clock_millis=E + 100, sequence={"policy": "borrow_ahead", "max_ticks": "2"})
gen("borrow ahead, then wait on an advancing clock", small, 5, [
    {"call": "batch", "slots": [(100 + i // 4, i % 4) for i in range(10)], "after": E + 101},
], clock_millis=E + 100, advancing=True, sequence={"policy": "borrow_ahead", "max_ticks": "1"})
for policy, back, steps in [
    ({"policy": "fail"}, 1, [{"call": "next", "error": "snowflake.clock_rolled_back", "after": E + 9_999}]),
    ({"policy": "wait", "max_millis": "5"}, 1, [{"call": "next", "slots": [(10_000, 1)], "after": E + 10_000}]),
    ({"policy": "wait", "max_millis": "5"}, 5, [{"call": "next", "slots": [(10_000, 1)], "after": E + 10_000}]),
    ({"policy": "wait", "max_millis": "5"}, 2000, [{"call": "next", "error": "snowflake.clock_rolled_back", "after": E + 8_000}]),
    ({"policy": "wait", "max_millis": "2000"}, 2000, [{"call": "next", "slots": [(10_000, 1)], "after": E + 10_000}]),
    ({"policy": "logical", "max_millis": "5"}, 5, [{"call": "next", "slots": [(10_000, 1), (10_000, 2)], "after": E + 9_995}]),
    ({"policy": "logical", "max_millis": "5"}, 6, [{"call": "next", "error": "snowflake.clock_rolled_back"}]),
]:
    gen(f"rollback {back} ms under {policy['policy']} {policy.get('max_millis', '')}".rstrip(), "classic", 1,
        [{"call": "next", "slots": [(10_000, 0)]}, {"clock": E + 10_000 - back, **steps[0]}],
        clock_millis=E + 10_000, advancing=True, rollback=policy)
gen("logical clock carries into later ticks", small, 5, [
    {"call": "next", "slots": [(100, q) for q in range(4)]},
    {"clock": E + 99, "call": "batch", "slots": [(t, q) for t in (101, 102) for q in range(4)]},
    {"call": "next", "error": "snowflake.wait_exceeded"},
], clock_millis=E + 100, rollback={"policy": "logical", "max_millis": "3"})
tiny = dict(time_bits=4, worker_bits=10, sequence_bits=2, epoch_millis=E, tick_millis=1)
gen("time field runs out", tiny, 5, [
    {"call": "next", "slots": [(15, q) for q in range(4)]},
    {"call": "next", "error": "snowflake.time_exhausted", "after": E + 15},
    {"clock": E + 16, "call": "next", "error": "snowflake.time_exhausted"},
], clock_millis=E + 15, advancing=True, sequence={"policy": "borrow_ahead", "max_ticks": "5"})
gen("epoch in the future", "classic", 1, [{"call": "next", "error": "snowflake.epoch_in_future"}], clock_millis=E - 1)
gen("starting after a high-water id", "classic", 7, [
    {"call": "next", "slots": [(500, 4)], "high_water": (500, 4)},
], clock_millis=E + 500, after_id=idof("classic", 500, 7, 3))
gen("starting after a high-water id the clock is behind", "classic", 7, [
    {"call": "next", "error": "snowflake.clock_rolled_back"},
], clock_millis=E + 400, after_id=idof("classic", 500, 7, 3))
gen("starting after a high-water time", "classic", 7, [
    {"call": "next", "slots": [(501, 0)], "after": E + 501},
], clock_millis=E + 500, advancing=True, after_millis=E + 500)
gen("sonyflake-like 10 ms ticks", "sonyflake-like", 9, [
    {"call": "next", "slots": [(123, 0)]},
    {"clock": E + 1239, "call": "next", "slots": [(123, 1)]},
    {"clock": E + 1240, "call": "next", "slots": [(124, 0)]},
], clock_millis=E + 1234)
gen("js-safe batch", "js-safe", 63, [
    {"call": "batch", "slots": [(86_400_000, q) for q in range(3)]},
], clock_millis=E + 86_400_000)
gen("twitter layout with datacenter 3 worker 4", "twitter", (3 << 5) | 4, [
    {"call": "next", "slots": [(1_700_000_000_123 - T, 0)]},
], clock_millis=1_700_000_000_123)
gen("generator worker out of range", "classic", 1024, [], clock_millis=E, error="snowflake.worker_out_of_range")
gen("high-water id that does not fit the layout", "js-safe", 1, [], clock_millis=E, after_id=2**53, error="snowflake.id_out_of_range")
gen("high-water time past the end", "classic", 1, [], clock_millis=E, after_millis=E + 2**41, error="snowflake.time_exhausted")

names = [c["name"] for c in cases]; assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
doc = {"description": "Snowflake layouts, compose/decode, text forms and generator runs on a manual clock. See tests/vectors/README.md (section snowflake) and docs/spec.md.", "cases": cases}
import re
text = json.dumps(doc, indent=2, ensure_ascii=True)
# keep arrays of scalars on one line
text = re.sub(r'\[\s*\n\s*((?:"[^"\n]*"|[0-9]+)(?:,\s*\n\s*(?:"[^"\n]*"|[0-9]+))*)\s*\n\s*\]',
              lambda m: "[" + re.sub(r',\s*\n\s*', ', ', m.group(1)) + "]", text)
assert json.loads(text) == doc
print(text)
