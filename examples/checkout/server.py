"""The checkout demo: a shop whose "Place order" runs exactly once.

The browser gets a grant (``POST /api/grant``) for the logged-in user, mints a
signed request ID with the npm package's browser build and sends it with the
order (``POST /api/orders``, header ``Mintid-Request-Id``). This server
verifies the ID for that user, then inserts the order and the idempotency
record in ONE transaction (``IdempotencyStore.in_transaction``): a duplicate,
however it arrives (a double click, a retry after a lost response), gets the
stored response again with ``Idempotent-Replayed: true``.

Run ``make demo`` from the repository root, or ``python server.py --port 8000``
with the ``mintid`` wheel installed and ``js/dist`` built. SQLite in
``checkout.sqlite3`` beside this file by default; PostgreSQL when
``MINTID_DATABASE_URL`` is set.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import sys
from http import cookies
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mintid import KeyRing, RecordPolicy
from mintid.http import (
    DEFAULT_STORED_HEADERS,
    HttpAnswer,
    HttpIdempotency,
    HttpRequestView,
    answer_of,
    grant_answer,
    status_answer,
    to_stored,
)
from mintid.store import (
    Database,
    IdempotencyStore,
    PostgresDatabase,
    SqliteDatabase,
    StoredResponse,
    StoreError,
)

HERE = Path(__file__).resolve().parent
PAGE = HERE / "static" / "index.html"
# The npm package's browser build, served as is (`make js-build` writes it).
PACKAGE = HERE.parent.parent / "js" / "dist" / "browser"
USER_NAME = re.compile(r"^[a-z0-9_-]{1,32}$")
BODY_LIMIT = 16_384
STORED_HEADERS = frozenset(DEFAULT_STORED_HEADERS)
CONTENT_TYPES = {".js": "text/javascript", ".wasm": "application/wasm", ".html": "text/html"}

# The shop's business table, per dialect; the store's own tables come from
# mintid's migrations.
ORDERS_TABLE = {
    "sqlite": "CREATE TABLE IF NOT EXISTS checkout_order ("
    "id INTEGER PRIMARY KEY AUTOINCREMENT, user_name TEXT NOT NULL, "
    "item TEXT NOT NULL, quantity INTEGER NOT NULL, request_id TEXT NOT NULL)",
    "postgres": "CREATE TABLE IF NOT EXISTS checkout_order ("
    "id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, user_name TEXT NOT NULL, "
    "item TEXT NOT NULL, quantity INTEGER NOT NULL, request_id TEXT NOT NULL)",
}
INSERT_ORDER = {
    "sqlite": "INSERT INTO checkout_order (user_name, item, quantity, request_id) "
    "VALUES (:user, :item, :quantity, :request_id) RETURNING id",
    "postgres": "INSERT INTO checkout_order (user_name, item, quantity, request_id) "
    "VALUES (%(user)s, %(item)s, %(quantity)s, %(request_id)s) RETURNING id",
}
LAST_ORDERS = "SELECT id, user_name, item, quantity FROM checkout_order ORDER BY id DESC LIMIT 10"


def open_database() -> Database:
    """PostgreSQL at ``MINTID_DATABASE_URL``, else SQLite beside this file."""
    url = os.environ.get("MINTID_DATABASE_URL")
    if url:
        return PostgresDatabase(url)
    path = os.environ.get("MINTID_DEMO_SQLITE", str(HERE / "checkout.sqlite3"))
    return SqliteDatabase(path)


def query(raw: Any, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    """Run ``sql`` on a driver connection; its rows."""
    cursor = raw.cursor()
    try:
        cursor.execute(sql, params or {})
        return list(cursor.fetchall()) if cursor.description else []
    finally:
        cursor.close()


def json_answer(status: int, value: object, *headers: tuple[str, str]) -> HttpAnswer:
    """A JSON answer."""
    body = json.dumps(value).encode()
    return HttpAnswer(status, (("content-type", "application/json"), *headers), body)


class Shop:
    """The shop: its database, the idempotency store and the key ring."""

    def __init__(self, database: Database, *, fresh: bool) -> None:
        """Migrate (and with ``fresh`` empty) the tables."""
        self.database = database
        database.migrate()
        with database.connection() as raw:
            query(raw, ORDERS_TABLE[database.dialect])
            if fresh:
                query(raw, "DELETE FROM checkout_order")
                query(raw, "DELETE FROM idempotency_record")
        # No waiting: a duplicate that finds the first request in flight gets 409.
        self.store = IdempotencyStore(database, RecordPolicy(lease_millis=30_000))
        # A fresh secret per run: grants last as long as the server.
        self.ring = KeyRing(1, secrets.token_bytes(32))
        self.http = HttpIdempotency(store=self.store, scope=self.scope, key_ring=self.ring)

    @staticmethod
    def user(request: HttpRequestView) -> str | None:
        """The logged-in user: the demo's ``user`` cookie."""
        jar = cookies.SimpleCookie(request.header("cookie") or "")
        morsel = jar.get("user")
        return morsel.value if morsel and USER_NAME.match(morsel.value) else None

    def scope(self, request: HttpRequestView) -> str:
        """Whose keys these are: the user's."""
        return f"user:{self.user(request)}"

    def grant(self, request: HttpRequestView) -> HttpAnswer:
        """A grant for the logged-in user (401 without one)."""
        user = self.user(request)
        return grant_answer(self.ring, None if user is None else f"user:{user}")

    def orders(self, request: HttpRequestView) -> HttpAnswer:
        """How many orders exist, and the user's last ones."""
        with self.database.connection() as raw:
            count = query(raw, "SELECT COUNT(*) FROM checkout_order")[0][0]
            rows = query(raw, LAST_ORDERS)
        listed = [{"order": r[0], "user": r[1], "item": r[2], "quantity": r[3]} for r in rows]
        return json_answer(200, {"count": int(count), "user": self.user(request), "orders": listed})

    def place(self, request: HttpRequestView, body: bytes) -> HttpAnswer:
        """Verify the request ID, then place the order once (same transaction)."""
        user = self.user(request)
        if user is None:
            return status_answer(401, "log in first: /?user=alice")
        admission = self.http.admit(request)
        if isinstance(admission, HttpAnswer):
            return admission
        incoming = self.http.store_request(admission, request.header("content-type"), body)
        if isinstance(incoming, HttpAnswer):
            return incoming
        placed: list[HttpAnswer] = []

        def place_order(raw: Any) -> StoredResponse:
            answer = self.insert(raw, user, admission.key.id, body)
            placed.append(answer)
            return to_stored(answer, STORED_HEADERS)

        try:
            # The claim, the order row and the stored response commit together.
            with self.database.transaction(write=True) as raw:
                result = self.store.in_transaction(raw, admission.key, incoming, place_order)
        except StoreError as error:
            return self.http.failure_answer(error, ran=bool(placed))
        return answer_of(result, placed[0] if placed else None)

    def insert(self, raw: Any, user: str, request_id: str, body: bytes) -> HttpAnswer:
        """The order's row, on the transaction's connection; the 201 answer."""
        try:
            order = json.loads(body)
            item, quantity = str(order["item"]), int(order["quantity"])
        except (ValueError, KeyError, TypeError):
            return json_answer(400, {"error": "send JSON {item, quantity}"})
        params = {"user": user, "item": item, "quantity": quantity, "request_id": request_id}
        order_id = query(raw, INSERT_ORDER[self.database.dialect], params)[0][0]
        document = {"order": order_id, "user": user, "item": item, "quantity": quantity}
        return json_answer(201, document, ("location", f"/api/orders/{order_id}"))


class Handler(BaseHTTPRequestHandler):
    """Routes: the page, the package's browser build, and the API."""

    # HTTP/1.0: one request per connection, so a browser never silently
    # resends a POST whose reused connection closed (the drop hook below).
    shop: Shop
    test_hooks = False

    def view(self) -> HttpRequestView:
        """The neutral view of this request."""
        headers = tuple((name.lower(), value) for name, value in self.headers.items())
        return HttpRequestView(self.command, urlsplit(self.path).path, headers, self)

    def send(self, answer: HttpAnswer, *extra: tuple[str, str]) -> None:
        """Write a complete answer."""
        self.send_response(answer.status)
        for name, value in (*answer.headers, *extra):
            self.send_header(name, value)
        self.send_header("content-length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)

    def do_GET(self) -> None:
        """The page (``?user=NAME`` logs in), the package files, the order count."""
        url = urlsplit(self.path)
        if url.path == "/":
            login = parse_qs(url.query).get("user", [""])[0]
            user = login if USER_NAME.match(login) else Shop.user(self.view()) or "alice"
            page = HttpAnswer(
                200, (("content-type", "text/html; charset=utf-8"),), PAGE.read_bytes()
            )
            self.send(page, ("set-cookie", f"user={user}; Path=/; SameSite=Strict; HttpOnly"))
        elif url.path.startswith("/mintid/"):
            self.send_package_file(url.path.removeprefix("/mintid/"))
        elif url.path == "/api/orders":
            self.send(self.shop.orders(self.view()))
        else:
            self.send(json_answer(404, {"error": "not found"}))

    def send_package_file(self, name: str) -> None:
        """A file of the browser build (no directory walking)."""
        path = (PACKAGE / name).resolve()
        if not path.is_file() or PACKAGE.resolve() not in path.parents:
            self.send(json_answer(404, {"error": "not found"}))
            return
        content_type = CONTENT_TYPES.get(path.suffix, "application/octet-stream")
        self.send(HttpAnswer(200, (("content-type", content_type),), path.read_bytes()))

    def do_POST(self) -> None:
        """The grant endpoint and placing orders."""
        url = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        if length > BODY_LIMIT:
            self.close_connection = True
            self.send(status_answer(413, f"the body exceeds {BODY_LIMIT} bytes"))
            return
        body = self.rfile.read(length)
        if url.path == "/api/grant":
            self.send(self.shop.grant(self.view()))
        elif url.path == "/api/orders":
            answer = self.shop.place(self.view(), body)
            if (
                self.test_hooks
                and "drop" in parse_qs(url.query)
                and answer.status == 201
                and answer.header("idempotent-replayed") is None
            ):
                # Test hook: the order is committed, but its response is lost.
                self.close_connection = True
                return
            self.send(answer)
        else:
            self.send(json_answer(404, {"error": "not found"}))

    def log_message(self, format: str, *args: Any) -> None:
        """One line per request on stderr."""
        sys.stderr.write(f"{self.command} {self.path} -> {args[1] if len(args) > 1 else ''}\n")


def main() -> None:
    """Serve the shop on 127.0.0.1 until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument(
        "--fresh", action="store_true", help="start with no orders and no idempotency records"
    )
    parser.add_argument("--test-hooks", action="store_true", help="honour ?drop=1 (tests only)")
    args = parser.parse_args()
    if not (PACKAGE / "browser.js").is_file():
        sys.exit(f"{PACKAGE}/browser.js is missing: run `make js-build` first")
    database = open_database()
    Handler.shop = Shop(database, fresh=args.fresh)
    Handler.test_hooks = args.test_hooks
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    where = "PostgreSQL" if database.dialect == "postgres" else "SQLite"
    print(f"checkout demo on {where}: http://127.0.0.1:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        database.close()


if __name__ == "__main__":
    main()
