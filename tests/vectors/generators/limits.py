# Independent model of docs/spec.md's "Limits" (arguments, shutdown waits) and "Metrics and
# traces" (histogram buckets); prints tests/vectors/limits.json.
# Every bound on an argument a host passes to a driver is the core's: a lease owner is made
# storable and cut to 255 bytes (an empty one is one U+FFFD), an outbox message id above
# 2^63 - 1 is refused, and a cleanup's batch size of 0 runs batches of 1.
import json

MARKER = "\u2026 [truncated]"
I64_MAX = 2**63 - 1


def owner(text):
    if text == "":
        return "\ufffd"
    data = text.replace("\x00", "\ufffd").encode("utf-8")
    if len(data) <= 255:
        return data.decode("utf-8")
    end = 255 - len(MARKER.encode("utf-8"))
    while (data[end] & 0xC0) == 0x80:
        end -= 1
    return data[:end].decode("utf-8") + MARKER


def batch_size(value):
    return min(max(value, 1), I64_MAX)


cases = []
for name, text in [
    ("a host name is kept", "worker-7.example"),
    ("an empty owner is one U+FFFD", ""),
    ("U+0000 becomes U+FFFD", "pod\x00-3"),
    ("255 bytes are kept", "o" * 255),
    ("256 bytes are cut with the marker", "o" * 256),
    ("three-byte characters cut on a boundary", "\u20ac" * 90),
]:
    cases.append({"name": f"lease.owner: {name}", "op": "argument", "argument": "lease.owner",
                  "value": text, "expect": owner(text)})
for name, value in [("zero", 0), ("2^63 - 1", I64_MAX), ("2^63", I64_MAX + 1),
                    ("2^64 - 1", 2**64 - 1)]:
    case = {"name": f"outbox.message_id: {name}", "op": "argument",
            "argument": "outbox.message_id", "value": str(value)}
    if value <= I64_MAX:
        case["expect"] = str(value)
    else:
        case["error"] = "outbox.invalid_message"
    cases.append(case)
for argument in ["outbox_cleanup.batch_size", "record_cleanup.batch_size"]:
    for value in [0, 1, 500, 2**64 - 1]:
        cases.append({"name": f"{argument}: {value}", "op": "argument", "argument": argument,
                      "value": str(value), "expect": str(batch_size(value))})
cases.append({"name": "the shutdown wait", "op": "bound", "bound": "shutdown_wait_millis",
              "value": "10000"})
SECONDS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]
BYTES = [0, 256, 1024, 4096, 16384, 65536, 262144, 1048576]
for metric, buckets in [
    ("mintid.record.claim.duration", SECONDS),
    ("mintid.record.complete.duration", SECONDS),
    ("mintid.record.response.size", BYTES),
]:
    cases.append({"name": f"buckets of {metric}", "op": "histogram", "metric": metric,
                  "buckets": buckets})
print(json.dumps({"description": "The core's limits (docs/spec.md, Store drivers, \"Limits\"): every argument bound a host passes to a driver and what the core makes of a value beyond it, the shutdown wait, and the histograms' bucket bounds (\"Metrics and traces\"). See tests/vectors/README.md.", "cases": cases}, indent=1))
