# Independent model of docs/spec.md's "State transitions" and "Webhooks"; prints
# tests/vectors/receiving/receiving.json. Read by the Rust runner (core/tests/receiving_vectors.rs)
# only until the Python, JS and JVM hosts have the receiving side: then it moves to the top level
# of tests/vectors/, which every host's runner reads.
import hashlib
import hmac
import json
import re

STATES = ["WAIT_PAY", "PAID", "CANCELLED", "REFUNDED"]
MOVES = [["WAIT_PAY", "PAID"], ["WAIT_PAY", "CANCELLED"], ["PAID", "REFUNDED"]]


def check(states, moves, frm, to):
    for state in (frm, to):
        if state not in states:
            return "transition.unknown_state"
    return None if [frm, to] in moves else "transition.not_allowed"


PART = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}\Z")


def quote(text, kind):
    parts = text.split(".")
    if len(parts) > (2 if kind == "table" else 1) or not all(PART.match(p) for p in parts):
        return None
    return {
        "postgres": ".".join(f'"{p}"' for p in parts),
        "sqlite": ".".join(f'"{p}"' for p in parts),
        "mysql": ".".join(f"`{p}`" for p in parts),
    }


def resolve(document, pointer):
    if pointer == "":
        return True, document
    if not pointer.startswith("/"):
        return None, None
    value = document
    for raw in pointer[1:].split("/"):
        if re.search(r"~(?![01])", raw):
            return None, None
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and re.fullmatch(r"0|[1-9][0-9]*", token) and int(token) < len(value):
            value = value[int(token)]
        else:
            return False, None
    return True, value


def key(body, pointer):
    found, value = resolve(json.loads(body), pointer)
    if found is None:
        return {"error": "webhook.invalid_pointer"}
    if not found or value == "":
        return {"error": "webhook.key_missing"}
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return {"error": "webhook.key_not_scalar"}
    if isinstance(value, str):
        return {"key": value}
    if isinstance(value, int) or float(value).is_integer() and abs(value) < 1e21:
        return {"key": str(int(value))}
    return {"key": repr(float(value))}


def mac(secret, message):
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


cases = []
for frm in STATES + ["NEW"]:
    for to in STATES:
        error = check(STATES, MOVES, frm, to)
        case = {"op": "transition_check", "states": STATES, "moves": MOVES, "from": frm, "to": to}
        case["error" if error else "allowed"] = error or True
        cases.append(case)
for states, moves in [([], []), (["A", "A"], []), (["A"], [["A", "B"]]), (["A"], [["A", "A"]]),
                      (["A", "B"], [["A", "B"], ["A", "B"]]), (["A" * 65], [])]:
    cases.append({"op": "transition_table", "states": states, "moves": moves, "error": "transition.invalid_table"})

for kind, text in [("table", "orders"), ("table", "shop.orders"), ("table", "Order_2"), ("column", "status"),
                   ("column", "_x9"), ("column", "a" * 63), ("column", "a" * 64), ("table", "a.b.c"),
                   ("column", "a.b"), ("table", ""), ("table", "1st"), ("table", "a b"), ("table", 'a"b'),
                   ("table", "a`b"), ("table", "a;--"), ("table", "é"), ("table", ".a"), ("table", "a.")]:
    quoted = quote(text, kind)
    case = {"op": "identifier", "kind": kind, "text": text}
    if quoted is None:
        case["error"] = "transition.invalid_identifier"
    else:
        case["quoted"] = quoted
    cases.append(case)

BODY = json.dumps({"transaction_id": "tx_981", "amount": 1250, "ratio": 12.5, "a/b": {"m~n": "deep"},
                   "list": ["first", 7], "flag": True, "none": None, "empty": "", "obj": {}})
for pointer in ["/transaction_id", "/amount", "/ratio", "/a~1b/m~0n", "/list/0", "/list/1", "/flag",
                "/none", "/empty", "/obj", "/missing", "/list/2", "/list/01", "transaction_id", "/a~2b"]:
    cases.append({"op": "key_from_body", "body": BODY, "pointer": pointer, **key(BODY, pointer)})

SECRET = "whsec_test"
PAYLOAD = '{"id":"evt_1","amount":1250}'
good = "sha256=" + mac(SECRET, PAYLOAD.encode())
stripe_at = 1_767_225_600
stripe = f"t={stripe_at},v1=" + mac(SECRET, f"{stripe_at}.{PAYLOAD}".encode())
now = stripe_at * 1000
for scheme, header, secret, now_millis, expect in [
    ("sha256", good, SECRET, now, None),
    ("sha256", good.upper().replace("SHA256=", "sha256="), SECRET, now, None),
    ("sha256", good, "other", now, "webhook.signature_mismatch"),
    ("sha256", good[:-1] + ("0" if good[-1] != "0" else "1"), SECRET, now, "webhook.signature_mismatch"),
    ("sha256", "sha1=" + "0" * 40, SECRET, now, "webhook.signature_malformed"),
    ("sha256", "sha256=xyz", SECRET, now, "webhook.signature_malformed"),
    ("sha256", "", SECRET, now, "webhook.signature_missing"),
    ("sha256", good, "", now, "webhook.invalid_secret"),
    ("stripe", stripe, SECRET, now, None),
    ("stripe", stripe, SECRET, now + 300_000, None),
    ("stripe", stripe, SECRET, now + 300_001, "webhook.signature_expired"),
    ("stripe", stripe, SECRET, now - 300_001, "webhook.signature_expired"),
    ("stripe", f"t={stripe_at},v0=abc,v1={'0' * 64}," + stripe.split(",")[1], SECRET, now, None),
    ("stripe", f"t={stripe_at},v1=" + "0" * 64, SECRET, now, "webhook.signature_mismatch"),
    ("stripe", f"t={stripe_at + 1}," + stripe.split(",")[1], SECRET, now, "webhook.signature_mismatch"),
    ("stripe", stripe.split(",")[1], SECRET, now, "webhook.signature_malformed"),
    ("stripe", f"t={stripe_at}", SECRET, now, "webhook.signature_malformed"),
    ("stripe", f"t=-1,{stripe.split(',')[1]}", SECRET, now, "webhook.signature_malformed"),
]:
    case = {"op": "signature", "scheme": scheme, "tolerance_millis": "300000", "secret": secret,
            "header": header, "body": PAYLOAD, "now_millis": str(now_millis)}
    case["error" if expect else "valid"] = expect or True
    cases.append(case)

print(json.dumps({"description": "The receiving side's rules (docs/spec.md, State transitions, Webhooks): transition tables, identifier quoting per dialect, keys read from a JSON body by a JSON Pointer, HMAC-SHA256 webhook signatures. See tests/vectors/README.md.", "cases": cases}, indent=1))
