# Independent model of docs/spec.md's ID buffer rule; prints tests/vectors/id_buffer.json.
import json

MAX_BATCH = 4096
U64 = 2**64 - 1


def fresh_until(start, tick):
    return min(start + tick, U64)


def size(handed_out, cap):
    return max(1, min(2 * handed_out, cap))


def cap_of(per_tick):
    return max(1, min(per_tick, MAX_BATCH))


cases = []
for start, tick in [(1_700_000_000_000, 1), (1_700_000_000_000, 10), (0, 1), (1288834974657, 39), (U64, 1)]:
    cases.append({"name": f"a batch whose first tick starts at {start} ({tick} ms ticks)", "op": "fresh_until",
                  "first_tick_start_millis": str(start), "tick_millis": str(tick),
                  "fresh_until_millis": str(fresh_until(start, tick))})
for handed, cap in [(0, 4096), (1, 4096), (2, 4096), (100, 4096), (2048, 4096), (2049, 4096), (10**12, 4096), (7, 8), (0, 1), (U64, 256)]:
    cases.append({"name": f"after {handed} handed out, cap {cap}", "op": "next_batch_size",
                  "handed_out": str(handed), "cap": str(cap), "size": str(size(handed, cap))})
for per_tick in [1, 256, 4095, 4096, 4097, 1 << 16, 1 << 22]:
    cases.append({"name": f"{per_tick} IDs per tick", "op": "batch_cap", "ids_per_tick": str(per_tick),
                  "cap": str(cap_of(per_tick))})
# Hand-outs: the clock read after each ID is taken; the batch goes out while it reads at
# most fresh_until, then the rest is dropped (never handed out).
for name, start, tick, reads in [
    ("a batch used within its tick and the millisecond after", 1000, 1, [1000, 1000, 1001, 1001]),
    ("the first read past the bound drops the rest", 1000, 1, [1000, 1001, 1002, 1001, 1000]),
    ("a clock already past the bound hands out nothing", 1000, 1, [1002, 1000]),
    ("10 ms ticks: fresh through the millisecond after the tick", 1000, 10, [1005, 1009, 1010, 1011]),
]:
    bound = fresh_until(start, tick)
    out = 0
    for now in reads:
        if now > bound:
            break
        out += 1
    cases.append({"name": name, "op": "hand_out", "first_tick_start_millis": str(start), "tick_millis": str(tick),
                  "now_millis": [str(r) for r in reads], "handed_out": str(out)})

print(json.dumps({"description": "The ID buffer rule of docs/spec.md: until when a batch's IDs may be handed out, how large the next batch is, the cap. See tests/vectors/README.md.", "cases": cases}, indent=1))
