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


class CuttableProxy:
    """A TCP relay from a loopback port to ``target_port`` whose link can be cut (every
    connection closed, new ones refused: what clients see of a broker that went away) and
    restored on the same port. The server behind it keeps its state throughout."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = closed_port()
        self._server: socket.socket | None = None
        self._connections: list[socket.socket] = []
        self._lock = threading.Lock()

    def start(self) -> CuttableProxy:
        server = socket.create_server(("127.0.0.1", self.port), reuse_port=False)
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()
        return self

    def cut(self) -> None:
        with self._lock:
            server, self._server = self._server, None
            connections, self._connections = self._connections, []
        if server is not None:
            server.close()
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()

    def restore(self) -> None:
        self.start()

    stop = cut

    def _accept(self, server: socket.socket) -> None:
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return  # cut
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                if self._server is not server:
                    client.close()
                    upstream.close()
                    return
                self._connections += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_WR)
