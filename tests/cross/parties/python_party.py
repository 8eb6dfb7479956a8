"""The Python party of the cross-language matrix (see tests/cross/README.md).

Reads commands from stdin, one a line, tab-separated, and answers each with
one line: ``key ID HEX`` (``ok``), ``issue SCOPE EXPIRES_MS`` (``ok GRANT``),
``mint GRANT N`` (``ok ID…``), ``verify SCOPE ID`` (``ok UUID`` or
``err CODE``). For ``replay.test.mjs``: ``store PATH`` (``ok``: from now on
its records live in that SQLite file) and ``post SCOPE KEY JSON`` (a
``POST /orders`` with that ``Idempotency-Key`` through the WSGI middleware on
that store: ``ok STATUS REPLAYED LOCATION BODY``).
"""

import io
import sys
import wsgiref.util
from collections.abc import Iterable
from typing import Any

import mintid
from mintid.http import HttpIdempotency, HttpRequestView
from mintid.http.wsgi import IdempotencyMiddleware
from mintid.store import IdempotencyStore, SqliteDatabase


def orders_app(path: str) -> Any:
    """A WSGI app placing orders (``201``, ``Location: /orders/py-N``) under the
    idempotency middleware, its records in the SQLite file at ``path``.
    """
    store = IdempotencyStore(SqliteDatabase(path), mintid.RecordPolicy(30_000, 86_400_000))
    store.database.migrate()
    placed = [0]

    def app(_environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        placed[0] += 1
        body = f'{{"order":{placed[0]},"by":"python"}}'.encode()
        start_response(
            "201 Created",
            [("Content-Type", "application/json"), ("Location", f"/orders/py-{placed[0]}")],
        )
        return [body]

    def scope(request: HttpRequestView) -> str:
        return request.header("x-scope") or ""

    return IdempotencyMiddleware(app, http=HttpIdempotency(store=store, scope=scope))


def post(app: Any, scope: str, key: str, json: str) -> list[str]:
    """``POST /orders`` through ``app``: status, replay marker, location and body."""
    body = json.encode()
    environ: dict[str, Any] = {
        "REQUEST_METHOD": "POST",
        "PATH_INFO": "/orders",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "HTTP_X_SCOPE": scope,
        "HTTP_IDEMPOTENCY_KEY": key,
        "wsgi.input": io.BytesIO(body),
    }
    wsgiref.util.setup_testing_defaults(environ)
    answer: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]], *_exc: Any) -> Any:
        answer["status"] = status.split(" ")[0]
        answer["headers"] = {name.lower(): value for name, value in headers}
        return lambda _data: None

    text = b"".join(app(environ, start_response)).decode()
    headers = answer["headers"]
    replayed = "true" if headers.get("idempotent-replayed") == "true" else "false"
    return ["ok", answer["status"], replayed, headers.get("location", ""), text]


def main() -> None:
    ring: mintid.KeyRing | None = None
    app: Any = None
    for line in sys.stdin:
        command, *args = line.rstrip("\n").split("\t")
        try:
            if command == "key":
                ring = mintid.KeyRing(int(args[0]), bytes.fromhex(args[1]))
                reply = ["ok"]
            elif command == "issue" and ring is not None:
                reply = ["ok", ring.issue_grant(args[0], int(args[1])).text]
            elif command == "mint":
                grant = mintid.Grant.parse(args[0])
                reply = ["ok", *(grant.mint().text for _ in range(int(args[1])))]
            elif command == "verify" and ring is not None:
                reply = ["ok", str(mintid.RequestId.verify(args[1], ring, args[0]))]
            elif command == "store":
                app = orders_app(args[0])
                reply = ["ok"]
            elif command == "post" and app is not None:
                reply = post(app, *args)
            else:
                reply = ["err", f"party.unknown_command:{command}"]
        except mintid.MintidError as error:
            reply = ["err", error.code]
        print("\t".join(reply), flush=True)


if __name__ == "__main__":
    main()
