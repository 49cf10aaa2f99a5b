"""Loopback ports where no usable server answers, for the unreachable-server tests: a closed
port (connection refused), a listener that accepts and never says a word, and one that answers
every connection with bytes of another protocol."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

GARBAGE = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4


def closed_port() -> int:
    """A port that was free a moment ago and has nothing listening on it now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


@contextlib.contextmanager
def listener(reply: bytes) -> Iterator[int]:
    """A server on a free port that accepts every connection, sends ``reply`` (nothing if
    empty) and holds the connection open without reading; yields the port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()
    connections: list[socket.socket] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            connections.append(connection)
            with contextlib.suppress(OSError):
                connection.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()
        for connection in connections:
            connection.close()
