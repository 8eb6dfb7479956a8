# Independent model of docs/spec.md's segment allocator; prints tests/vectors/segment.json.
import json

MAX_ID = 2**63 - 1
MIN = 60_000


def pol(initial=1000, min_step=100, max_step=1_000_000, percent=10, grow=15 * MIN, shrink=30 * MIN):
    return {"initial_step": str(initial), "min_step": str(min_step), "max_step": str(max_step),
            "fetch_at_percent": percent, "grow_below_millis": str(grow),
            "shrink_above_millis": str(shrink)}


def adapt(p, step, lasted):
    if lasted < int(p["grow_below_millis"]):
        step *= 2
    elif lasted > int(p["shrink_above_millis"]):
        step //= 2
    return min(max(step, int(p["min_step"])), int(p["max_step"]))


class Model:
    """The allocator as the spec describes it: two buffers, one fetch in flight."""

    def __init__(self, p):
        self.p, self.cur, self.nxt, self.flight = p, None, None, None
        self.step, self.highest = int(p["initial_step"]), 0

    @staticmethod
    def left(b):
        return 0 if b is None else b["last"] - b["next"] + 1

    def promote(self):
        if self.left(self.cur) == 0:
            self.cur, self.nxt = self.nxt, None

    def next(self):
        self.promote()
        if self.left(self.cur) == 0:
            return None
        value = self.cur["next"]
        self.cur["next"] += 1
        return value

    def fetch_due(self, now):
        if self.flight is not None or self.left(self.nxt) > 0:
            return None
        cur = self.cur
        if cur is not None and self.left(cur) > 0:
            size, used = cur["last"] - cur["first"] + 1, cur["next"] - cur["first"]
            if used * 100 < size * self.p["fetch_at_percent"]:
                return None
        step = self.step if cur is None else adapt(self.p, self.step, max(0, now - cur["at"]))
        self.flight = step
        return step

    def fetched(self, max_id, step, now):
        if self.flight is None:
            return "segment.no_fetch"
        want, self.flight = self.flight, None
        if step != want or step == 0 or max_id < step or max_id > MAX_ID:
            return "segment.invalid_row"
        first = max_id - step + 1
        if first <= self.highest:
            return "segment.went_back"
        self.highest, self.step = max_id, step
        buf = {"first": first, "next": first, "last": max_id, "at": now}
        if self.left(self.cur) > 0:
            self.nxt = buf
        else:
            self.cur, self.nxt = buf, None
        return None


cases = []


def case(name, op, **kw):
    c = {"name": name, "op": op}
    c.update(kw)
    cases.append(c)


def allocator(name, p, script):
    """script: ("next", n) | ("fill", n) | ("due", now) | ("fetched", max_id, step, now) |
    ("failed",) | ("state",). Expectations come from the model."""
    m, steps = Model(p), []
    for item in script:
        kind = item[0]
        if kind == "next":
            steps.append({"do": "next", "expect": [None if v is None else str(v)
                                                   for v in (m.next() for _ in range(item[1]))]})
        elif kind == "fill":
            got = []
            while len(got) < item[1]:
                v = m.next()
                if v is None:
                    break
                got.append(v)
            steps.append({"do": "fill", "count": str(item[1]), "expect": [str(v) for v in got]})
        elif kind == "due":
            step = m.fetch_due(item[1])
            steps.append({"do": "fetch_due", "now": str(item[1]),
                          "expect": None if step is None else str(step)})
        elif kind == "fetched":
            error = m.fetched(item[1], item[2], item[3])
            steps.append({"do": "fetched", "max_id": str(item[1]), "step": str(item[2]),
                          "now": str(item[3]), "expect": "ok" if error is None else {"error": error}})
        elif kind == "failed":
            m.flight = None
            steps.append({"do": "fetch_failed"})
        elif kind == "state":
            steps.append({"do": "state", "expect": {
                "remaining": str(m.left(m.cur) + m.left(m.nxt)), "step": str(m.step),
                "in_flight": m.flight is not None}})
    case(name, "allocator", policy=p, steps=steps)


# ---- policies
case("the default policy", "policy", policy=pol(), expect="ok")
for name, p in [("min step zero", pol(min_step=0)),
                ("initial step below the minimum", pol(initial=50)),
                ("initial step above the maximum", pol(initial=2_000_000)),
                ("maximum step above BIGINT", pol(max_step=2**63)),
                ("threshold above 100 percent", pol(percent=101)),
                ("grow bound above the shrink bound", pol(grow=31 * MIN))]:
    case(name, "policy", policy=p, error="segment.invalid_policy")
case("steps of one, fetched only when used up", "policy", policy=pol(1, 1, 1, 100), expect="ok")

# ---- step adaptation (Leaf's rule)
for lasted, step, name in [
    (0, 1000, "a segment used up at once doubles the step"),
    (15 * MIN - 1, 1000, "just under 15 minutes doubles"),
    (15 * MIN, 1000, "15 minutes keeps the step"),
    (30 * MIN, 1000, "30 minutes keeps the step"),
    (30 * MIN + 1, 1000, "over 30 minutes halves"),
    (0, 800_000, "growth stops at the maximum"),
    (2**64 - 1, 150, "shrinking stops at the minimum"),
]:
    case(name, "adapt", policy=pol(), step=str(step), lasted=str(lasted),
         expect=str(adapt(pol(), step, lasted)))

# ---- allocator sequences
P10 = pol(10, 5, 40)
allocator("first use: nothing in memory, the first fetch asks for the initial step", P10, [
    ("next", 1), ("state",), ("due", 0), ("due", 0), ("state",),
    ("fetched", 10, 10, 0), ("next", 3), ("state",)])
allocator("the next segment is fetched once 10% of the current one is used", P10, [
    ("due", 0), ("fetched", 10, 10, 0), ("due", 0), ("next", 1), ("due", 20 * MIN),
    ("fetched", 30, 10, 20 * MIN), ("due", 20 * MIN), ("state",),
    ("fill", 15), ("state",), ("next", 6), ("due", 20 * MIN + 1)])
allocator("another process's segment in between leaves a gap, never a duplicate", P10, [
    ("due", 0), ("fetched", 10, 10, 0), ("next", 2), ("due", 1), ("fetched", 60, 20, 1),
    ("fill", 30), ("state",)])
allocator("step doubles on fast segments up to the maximum", P10, [
    ("due", 0), ("fetched", 10, 10, 0), ("fill", 10), ("due", 1), ("fetched", 30, 20, 1),
    ("fill", 20), ("due", 2), ("fetched", 70, 40, 2), ("fill", 40), ("due", 3),
    ("fetched", 110, 40, 3), ("state",)])
allocator("step halves on slow segments down to the minimum", pol(40, 5, 40), [
    ("due", 0), ("fetched", 40, 40, 0), ("fill", 40), ("due", 31 * MIN),
    ("fetched", 60, 20, 31 * MIN), ("fill", 20), ("due", 62 * MIN), ("fetched", 70, 10, 62 * MIN),
    ("fill", 10), ("due", 93 * MIN), ("fetched", 75, 5, 93 * MIN), ("fill", 5),
    ("due", 124 * MIN), ("state",)])
allocator("a failed fetch is asked for again", P10, [
    ("due", 0), ("failed",), ("state",), ("due", 0), ("fetched", 10, 10, 0), ("next", 1)])
allocator("rows that are not a fresh segment of the requested step are refused", P10, [
    ("fetched", 10, 10, 0),
    ("due", 0), ("fetched", 10, 9, 0), ("state",),
    ("due", 0), ("fetched", 9, 10, 0),
    ("due", 0), ("fetched", 2**63, 10, 0),
    ("due", 0), ("fetched", 30, 10, 0), ("fill", 10),
    ("due", 0), ("fetched", 40, 20, 0), ("state",)])
allocator("fetch only when used up (100%): callers wait at each boundary", pol(3, 1, 3, 100), [
    ("due", 0), ("fetched", 3, 3, 0), ("due", 0), ("next", 2), ("due", 0), ("next", 2),
    ("due", 0), ("fetched", 6, 3, 0), ("next", 1)])
allocator("threshold 0: the next segment is fetched as soon as one arrives", pol(4, 1, 8, 0), [
    ("due", 0), ("fetched", 4, 4, 0), ("due", 0), ("fetched", 12, 8, 0), ("due", 0),
    ("fill", 20), ("state",)])
allocator("IDs at the top of BIGINT", pol(5, 5, 5), [
    ("due", 0), ("fetched", MAX_ID, 5, 0), ("fill", 6), ("due", 0)])

print(json.dumps({"description": "Segment allocator rules (Leaf-style double buffer, adaptive "
                  "step). See tests/vectors/README.md.", "cases": cases}, indent=1))
