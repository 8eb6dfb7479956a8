# Independent model of docs/spec.md's outbox rules; prints tests/vectors/outbox.json.
import json

U64 = 2**64 - 1


def pol(batch=100, claim=60000, base=1000, cap=600000, jitter=50, attempts=10):
    return {"batch_size": str(batch), "claim_millis": str(claim), "base_backoff_millis": str(base),
            "max_backoff_millis": str(cap), "jitter_percent": jitter, "max_attempts": str(attempts)}


def backoff(p, attempts, draw):
    base, cap, jitter = int(p["base_backoff_millis"]), int(p["max_backoff_millis"]), p["jitter_percent"]
    full = min(cap, base * 2 ** (max(attempts, 1) - 1))
    spread = full * jitter // 100
    return full - draw % (spread + 1)


cases = []


def case(name, op, **kw):
    c = {"name": name, "op": op}
    c.update(kw)
    cases.append(c)


P = pol()

# ---- status texts
for text in ("pending", "sent", "dead"):
    case(f"status {text}", "status", text=text, expect=text)
for text in ("", "PENDING", "failed", "sent "):
    case(f"status {text!r} is unknown", "status", text=text, error="outbox.unknown_status")

# ---- policies
case("the default policy", "policy", policy=P, expect="ok")
for name, p in [("batch size zero", pol(batch=0)), ("claim length zero", pol(claim=0)),
                ("base backoff zero", pol(base=0)), ("base above the cap", pol(base=11, cap=10)),
                ("jitter above 100 percent", pol(jitter=101)), ("no attempts", pol(attempts=0))]:
    case(name, "policy", policy=p, error="outbox.invalid_policy")

# ---- backoff: d = min(cap, base * 2^(n-1)), minus draw mod (floor(d * jitter / 100) + 1)
for attempts, draw, p, name in [
    (1, 0, P, "first failure, no jitter drawn"),
    (0, 0, P, "attempt 0 counts as the first"),
    (3, 0, P, "third failure: 4 s"),
    (3, 2000, P, "third failure, the largest jitter: half of 4 s"),
    (3, 2001, P, "the draw wraps modulo the spread plus one"),
    (3, 1234567, P, "any draw"),
    (11, 0, P, "capped at 10 minutes"),
    (200, U64, P, "far past the cap"),
    (5, 999, pol(jitter=0), "no jitter"),
    (2, U64, pol(base=U64, cap=U64, jitter=100), "the largest values"),
]:
    case(name, "backoff", policy=p, attempts=str(attempts), draw=str(draw),
         expect=str(backoff(p, attempts, draw)))

# ---- claims
for now, draw, name in [(1000, 7, "a claim: token from the draw, held for the claim length"),
                        (1000, 1, "a draw of 1 still gives token 1"),
                        (1000, 0, "a draw of 0 gives token 1"),
                        (5, U64, "the largest token is 2^63 - 1")]:
    case(name, "claim", policy=P, now=str(now), draw=str(draw), expect={
        "claim_token": str(max(1, draw >> 1)), "claimed_until": str(now + 60000),
        "batch_size": "100"})
case("a claim ending past 64 bits", "claim", policy=P, now=str(U64 - 59999), draw="2",
     error="outbox.time_overflow")

# ---- delivery and failures (max 3 attempts)
P3 = pol(attempts=3)
for attempts, expect in [(1, "send"), (3, "send"), (4, "give_up")]:
    case(f"delivery at attempt {attempts} of 3", "delivery", policy=P3, attempts=str(attempts),
         expect=expect)
for attempts, now, draw, name in [(1, 10000, 0, "first failure: retry after 1 s"),
                                  (2, 10000, 500, "second failure, jitter 500: retry after 1.5 s"),
                                  (3, 10000, 0, "the last attempt failed: dead"),
                                  (9, 10000, 0, "beyond the last attempt: dead")]:
    expect = "dead" if attempts >= 3 else {"retry": str(now + backoff(P3, attempts, draw))}
    case(name, "after_failure", policy=P3, attempts=str(attempts), now=str(now), draw=str(draw),
         expect=expect)
case("a retry time past 64 bits", "after_failure", policy=P3, attempts="1", now=str(U64), draw="0",
     error="outbox.time_overflow")

# ---- affected rows
for rows, expect in [(1, {"expect": "new"}), (0, {"expect": "already_enqueued"}),
                     (2, {"error": "outbox.unexpected_rows"})]:
    case(f"enqueue affected {rows}", "enqueued", rows=str(rows), **expect)
for rows, expect in [(1, {"expect": "ok"}), (0, {"error": "outbox.claim_lost"}),
                     (2, {"error": "outbox.unexpected_rows"})]:
    case(f"mark affected {rows}", "marked", rows=str(rows), message_id="42", claim_token="7",
         **expect)

# ---- message limits
for name, kind, key, length, error in [
    ("a typical message", "order.created", "order-1001", 120, None),
    ("the longest kind, key and payload", "k" * 64, "é" * 127 + "x", 1048576, None),
    ("empty kind", "", "k", 0, "outbox.invalid_message"),
    ("kind of 65 bytes", "k" * 65, "k", 0, "outbox.invalid_message"),
    ("kind with a space", "order created", "k", 0, "outbox.invalid_message"),
    ("kind with non-ASCII", "commandé", "k", 0, "outbox.invalid_message"),
    ("empty business key", "kind", "", 0, "outbox.invalid_message"),
    ("business key of 256 bytes", "kind", "é" * 128, 0, "outbox.invalid_message"),
    ("payload above 1 MiB", "kind", "k", 1048577, "outbox.invalid_message"),
]:
    extra = {"expect": "ok"} if error is None else {"error": error}
    case(name, "message", kind=kind, business_key=key, payload_len=str(length), **extra)

print(json.dumps({"description": "Outbox rules: status texts, relay policies, backoff with "
                  "jitter, claims, delivery, failures and affected-row readings. See "
                  "tests/vectors/README.md.", "cases": cases}, indent=1, ensure_ascii=False))
