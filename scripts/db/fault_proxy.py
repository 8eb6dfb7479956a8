#!/usr/bin/env python3
"""A TCP proxy on loopback that the conformance runners cut, for real network faults.

Started by ``scripts/db/up.sh`` beside the throwaway servers; its control port is
exported as ``MINTID_FAULT_PROXY=127.0.0.1:PORT``. A runner that needs a database outage
opens a listener of its own in front of PostgreSQL or MariaDB, points one worker's store
at it, and cuts it: every connection through it is closed at once and the listener is
closed (connection refused) for the given time, then it listens again on the same port.
The client meets exactly what a restarting server or a broken network gives it.

Control protocol: one request line per TCP connection to the control port, one reply
line (``error: …`` on a bad request):

- ``open HOST PORT`` -> ``PORT2``: a new loopback listener forwarding to HOST:PORT.
- ``cut PORT2 MILLIS`` -> ``ok``, once the cut is in force.
- ``close PORT2`` -> ``ok``: the listener and its connections are gone.

Standard library only (it runs before any venv exists). Stops on SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import socket


class Listener:
    """One forwarding listener: its server, its live connections, its target."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.reopen: asyncio.TimerHandle | None = None

    async def listen(self) -> None:
        """Listen on ``self.port`` (a fresh port the first time)."""
        self.server = await asyncio.start_server(
            self.connected, "127.0.0.1", self.port, reuse_address=True
        )
        self.port = self.server.sockets[0].getsockname()[1]

    async def connected(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.close()
            return
        pair = {client_writer, server_writer}
        self.writers |= pair
        try:
            await asyncio.gather(
                pipe(client_reader, server_writer), pipe(server_reader, client_writer)
            )
        finally:
            self.writers -= pair
            for writer in pair:
                abort(writer)

    async def cut(self, millis: int) -> None:
        """Close everything now; listen again after ``millis``."""
        if self.reopen is not None:
            self.reopen.cancel()
        await self.stop()
        loop = asyncio.get_running_loop()
        self.reopen = loop.call_later(millis / 1000, lambda: loop.create_task(self.relisten()))

    async def relisten(self) -> None:
        """Listen again after a cut, on the same port (retried while it is busy)."""
        self.reopen = None
        for _ in range(100):
            try:
                await self.listen()
                return
            except OSError:
                await asyncio.sleep(0.05)

    async def stop(self) -> None:
        """Stop listening and abort every live connection."""
        if self.server is not None:
            self.server.close()
            self.server = None
        for writer in list(self.writers):
            abort(writer)
        self.writers.clear()

    async def close(self) -> None:
        if self.reopen is not None:
            self.reopen.cancel()
        await self.stop()


def abort(writer: asyncio.StreamWriter) -> None:
    """Drop a connection at once (RST, not a polite FIN after the buffer drains)."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    transport = writer.transport
    transport.abort()


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    abort(writer)


class Control:
    """The control port: opens, cuts and closes listeners."""

    def __init__(self) -> None:
        self.listeners: dict[int, Listener] = {}

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = (await reader.readline()).decode("ascii", "replace").split()
            reply = await self.command(line)
        except (ValueError, OSError) as error:
            reply = f"error: {error}"
        writer.write(reply.encode() + b"\n")
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()

    async def command(self, words: list[str]) -> str:
        match words:
            case ["open", host, port]:
                listener = Listener((host, int(port)))
                await listener.listen()
                self.listeners[listener.port] = listener
                return str(listener.port)
            case ["cut", port, millis]:
                await self.listener(port).cut(int(millis))
                return "ok"
            case ["close", port]:
                listener = self.listener(port)
                del self.listeners[listener.port]
                await listener.close()
                return "ok"
        raise ValueError(f"unknown request {' '.join(words)!r}")

    def listener(self, port: str) -> Listener:
        try:
            return self.listeners[int(port)]
        except KeyError:
            raise ValueError(f"no listener on port {port}") from None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True, help="the control port")
    args = parser.parse_args()
    control = Control()
    server = await asyncio.start_server(control.handle, "127.0.0.1", args.port, reuse_address=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(main())
