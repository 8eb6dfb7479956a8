# Independent model of docs/spec.md's worker-id lease rules; prints tests/vectors/lease.json.
# Plain integers and hand-derived expectations; shares nothing with the Rust core.
import json

E = 1735689600000  # mintid epoch
PRESETS = {"classic": (41, 10, 12, E, 1), "js-safe": (41, 6, 6, E, 1),
           "sonyflake-like": (39, 16, 8, E, 10)}
TEN_MS = {"time_bits": 39, "worker_bits": 4, "sequence_bits": 8, "epoch_millis": "0", "tick_millis": "10"}
ONE_MS = {"time_bits": 41, "worker_bits": 10, "sequence_bits": 12, "epoch_millis": "0", "tick_millis": "1"}
WIDE = {"time_bits": 30, "worker_bits": 17, "sequence_bits": 16, "epoch_millis": "0", "tick_millis": "1"}

def fields(layout):
    if isinstance(layout, str):
        return PRESETS[layout]
    return (layout["time_bits"], layout["worker_bits"], layout["sequence_bits"],
            int(layout["epoch_millis"]), int(layout["tick_millis"]))

def id_of(layout, unix_millis, worker, seq=0):
    t, w, sq, epoch, tick = fields(layout)
    return ((unix_millis - epoch) // tick) << (w + sq) | worker << sq | seq

def pol(layout=ONE_MS, lease=30000, renew=10000, margin=5000, retry=1000, skew=1000, start_wait=10000):
    return {"layout": layout, "lease_millis": str(lease), "renew_interval_millis": str(renew),
            "safety_margin_millis": str(margin), "renew_retry_millis": str(retry),
            "max_skew_millis": str(skew), "max_start_wait_millis": str(start_wait)}

P = pol()

def row(worker, token, deadline, high_water, held):
    return {"worker_id": str(worker), "fencing_token": str(token), "lease_deadline": str(deadline),
            "high_water": str(high_water), "held": held}

# The model of the rules.
def model_acquire(p, r, now):
    _, w, _, _, _ = fields(p["layout"])
    max_worker = 2**w - 1
    worker, token, deadline, hw, held = (int(r["worker_id"]), int(r["fencing_token"]),
                                         int(r["lease_deadline"]), int(r["high_water"]), r["held"])
    if worker > max_worker:
        return {"error": "lease.worker_out_of_range"}
    if held and now < deadline:
        return {"error": "lease.still_held"}
    if token + 1 > 2**64 - 1:
        return {"error": "lease.token_exhausted"}
    if now + int(p["lease_millis"]) > 2**64 - 1:
        return {"error": "lease.time_overflow"}
    start_after = max(hw, deadline) if held else hw
    ready = start_after + 1
    if held:
        ready = max(ready, deadline + int(p["max_skew_millis"]))
    if ready - now > int(p["max_start_wait_millis"]):
        return {"error": "lease.high_water_ahead"}
    return {"expect": {"lease": row(worker, token + 1, now + int(p["lease_millis"]), start_after, True),
                       "expected_token": str(token), "start_after": str(start_after),
                       "ready_at": str(ready)}}

cases = []
def case(name, op, **kw):
    c = {"name": name, "op": op}
    c.update(kw)
    cases.append(c)

# ---- policies
case("default policy on the classic layout", "policy", policy=pol("classic"),
     expect={"max_worker": "1023"})
case("sonyflake-like: 65536 worker ids, the most a lease table holds", "policy",
     policy=pol("sonyflake-like"), expect={"max_worker": "65535"})
case("js-safe: 64 worker ids", "policy", policy=pol("js-safe"), expect={"max_worker": "63"})
case("17 worker bits are too many to lease", "policy", policy=pol(WIDE), error="lease.invalid_policy")
case("renewal interval zero", "policy", policy=pol(renew=0), error="lease.invalid_policy")
case("renewal plus margin must leave room before the deadline", "policy",
     policy=pol(lease=10000, renew=5000, margin=5000), error="lease.invalid_policy")
case("renewal retry zero", "policy", policy=pol(retry=0), error="lease.invalid_policy")
case("tightest valid timing", "policy", policy=pol(lease=3, renew=1, margin=1),
     expect={"max_worker": "1023"})

# ---- acquire
def acq(name, r, now, p=P):
    case(name, "acquire", policy=p, row=r, now=str(now), **model_acquire(p, r, now))

acq("a never-held row: token 1, start after its high-water mark 0", row(0, 0, 0, 0, False), 1000)
acq("a released row starts after its stored high-water mark, no skew wait",
    row(5, 3, 40000, 39990, False), 40000)
acq("a released row whose mark is ahead of the clock waits until just after it",
    row(5, 3, 40000, 45000, False), 40000)
acq("an expired row: start after its deadline, ready a skew bound later",
    row(7, 9, 50000, 42000, True), 50000)
acq("an expired row taken long after its deadline is ready at once",
    row(7, 9, 50000, 42000, True), 90000)
acq("an expired row whose high-water mark passed its deadline (clock jump)",
    row(7, 9, 50000, 52000, True), 50500)
acq("a lease still running is not taken", row(1, 2, 50000, 0, True), 49999)
acq("the deadline itself ends the lease", row(1, 2, 50000, 0, True), 50000)
acq("a worker id above the layout's range", row(1024, 0, 0, 0, False), 0)
acq("a high-water mark too far ahead of this clock", row(2, 1, 0, 20001, False), 10000)
acq("a high-water mark exactly as far ahead as the policy waits", row(2, 1, 0, 19999, False), 10000)
acq("the token cannot be bumped", row(2, 2**64 - 1, 0, 0, False), 10000)
acq("the deadline does not fit 64 bits", row(2, 1, 0, 0, False), 2**64 - 30000)
acq("a longer skew bound", row(3, 1, 50000, 0, True), 50000, pol(skew=5000))

# ---- none found
for name, present, free, expect in [
    ("an empty table is seeded", 0, 0, {"expect": "seed"}),
    ("missing rows are seeded even when others are free", 1023, 5, {"expect": "seed"}),
    ("free rows that were locked: retry", 1024, 3, {"expect": "retry"}),
    ("every worker id held", 1024, 0, {"error": "lease.no_worker_free"}),
]:
    case(name, "none_found", policy=P, present=str(present), free=str(free), **expect)

# ---- guard sequences (policy P: lease 30 s, renew every 10 s, retry 1 s, margin 5 s, skew 1 s)
def g_id(unix_millis, worker, layout=ONE_MS, seq=0):
    return str(id_of(layout, unix_millis, worker, seq))

def state(deadline, stop_at, renew_at, live=True):
    return {"do": "state", "expect": {"lease_deadline": str(deadline), "stop_at": str(stop_at),
                                      "next_renewal_at": str(renew_at), "live": live}}

def ok(**kw):
    return dict(kw, expect="ok")

case("a fresh lease: admitted between start and stop, renewed on time", "guard", policy=P,
     row=row(7, 0, 0, 0, False), now="1000", steps=[
         state(31000, 26000, 11000),
         {"do": "check", "now": "1000", "expect": "ok"},
         {"do": "admit", "id": g_id(1000, 7), "expect": "ok"},
         {"do": "admit", "id": g_id(25999, 7, seq=4095), "expect": "ok"},
         {"do": "admit", "id": g_id(26000, 7), "expect": {"error": "lease.expired"}},
         {"do": "admit", "id": g_id(2000, 6), "expect": {"error": "lease.foreign_id"}},
         {"do": "admit", "id": "0", "expect": {"error": "lease.foreign_id"}},
         {"do": "check", "now": "26000", "expect": {"error": "lease.expired"}},
         {"do": "renew_due", "now": "10999", "expect": False},
         {"do": "renew_due", "now": "11000", "expect": True},
         {"do": "renewal", "now": "11000", "high_water": "10990",
          "expect": {"lease_deadline": "41000", "high_water": "10990"}},
         {"do": "renewed", "rows": "1", "expect": "ok"},
         state(41000, 36000, 21000),
         {"do": "admit", "id": g_id(26000, 7), "expect": "ok"},
         {"do": "check", "now": "35999", "expect": "ok"},
     ])
case("failed renewals retry every second; the holder stops at its stop point", "guard", policy=P,
     row=row(3, 4, 0, 0, False), now="0", steps=[
         {"do": "renewal_failed", "now": "10000"},
         state(30000, 25000, 11000),
         {"do": "renewal_failed", "now": "24000"},
         {"do": "check", "now": "24999", "expect": "ok"},
         {"do": "check", "now": "25000", "expect": {"error": "lease.expired"}},
         {"do": "renewal", "now": "29999", "high_water": "24000",
          "expect": {"lease_deadline": "59999", "high_water": "24000"}},
         {"do": "renewed", "rows": "1", "expect": "ok"},
         {"do": "check", "now": "29999", "expect": "ok"},
         {"do": "renewal", "now": "59999", "high_water": "50000",
          "expect": {"error": "lease.expired"}},
     ])
case("a refused renewal loses the lease for good", "guard", policy=P,
     row=row(3, 4, 0, 0, False), now="0", steps=[
         {"do": "renewal", "now": "10000", "high_water": "9000",
          "expect": {"lease_deadline": "40000", "high_water": "9000"}},
         {"do": "renewed", "rows": "0", "expect": {"error": "lease.lost"}},
         {"do": "check", "now": "10001", "expect": {"error": "lease.lost"}},
         {"do": "admit", "id": g_id(10001, 3), "expect": {"error": "lease.lost"}},
         {"do": "renew_due", "now": "99999", "expect": False},
         {"do": "renewal", "now": "10002", "high_water": "9000", "expect": {"error": "lease.lost"}},
         state(30000, 25000, 10000, live=False),
     ])
case("the stored high-water mark never goes down", "guard", policy=P,
     row=row(3, 4, 0, 5000, False), now="6000", steps=[
         {"do": "renewal", "now": "16000", "high_water": "0",
          "expect": {"lease_deadline": "46000", "high_water": "5000"}},
         {"do": "renewed", "rows": "1", "expect": "ok"},
         {"do": "renewal", "now": "26000", "high_water": "25000",
          "expect": {"lease_deadline": "56000", "high_water": "25000"}},
         {"do": "renewed", "rows": "1", "expect": "ok"},
         {"do": "release", "now": "27000", "high_water": "20000", "expect": {"high_water": "25000"}},
         {"do": "check", "now": "27000", "expect": {"error": "lease.released"}},
     ])
case("a clock that went back cannot shorten the lease", "guard", policy=P,
     row=row(3, 4, 0, 0, False), now="20000", steps=[
         {"do": "renewal", "now": "20000", "high_water": "0", "expect": {"error": "lease.clock_behind"}},
         {"do": "renewal", "now": "5000", "high_water": "0", "expect": {"error": "lease.clock_behind"}},
         {"do": "renewal", "now": "20001", "high_water": "0",
          "expect": {"lease_deadline": "50001", "high_water": "0"}},
     ])
case("the new holder of an expired id waits out the skew bound", "guard", policy=P,
     row=row(9, 2, 50000, 40000, True), now="50200", steps=[
         state(80200, 75200, 60200),
         {"do": "check", "now": "50999", "expect": {"error": "lease.not_ready"}},
         {"do": "check", "now": "51000", "expect": "ok"},
         {"do": "admit", "id": g_id(50000, 9), "expect": {"error": "lease.foreign_id"}},
         {"do": "admit", "id": g_id(50001, 9), "expect": {"error": "lease.not_ready"}},
         {"do": "admit", "id": g_id(51000, 9), "expect": "ok"},
     ])
case("ticks of 10 ms: an ID's tick must start after the start point and reach the ready time",
     "guard", policy=pol(TEN_MS), row=row(2, 0, 0, 1005, False), now="1000", steps=[
         {"do": "admit", "id": g_id(1000, 2, TEN_MS), "expect": {"error": "lease.foreign_id"}},
         {"do": "admit", "id": g_id(1010, 2, TEN_MS), "expect": "ok"},
         {"do": "admit", "id": g_id(25990, 2, TEN_MS, seq=255), "expect": "ok"},
         {"do": "admit", "id": g_id(26000, 2, TEN_MS), "expect": {"error": "lease.expired"}},
     ])
case("a batch is admitted only whole", "guard", policy=P, row=row(1, 0, 0, 0, False), now="1000",
     steps=[
         {"do": "admit_all", "ids": [g_id(1000, 1), g_id(1000, 1, seq=1), g_id(25999, 1)],
          "expect": "ok"},
         {"do": "admit_all", "ids": [g_id(1000, 1), g_id(26000, 1)],
          "expect": {"error": "lease.expired"}},
         {"do": "admit_all", "ids": [str(2**63)], "expect": {"error": "lease.foreign_id"}},
     ])

print(json.dumps({"description": "Worker-id lease rules: policies, acquisitions, the empty-find "
                  "rule and lease guards. See tests/vectors/README.md.", "cases": cases},
                 indent=1, ensure_ascii=False))
