"""The TCP connections of ``manni serve`` (issue 52, item 12): idle and slow connections get
deadlines, a client gets a share of the connections, and running out of open files never floods
the log. A real server on 127.0.0.1, each bound tested at and past it with small values."""

from __future__ import annotations

import errno
import logging
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from manni_agents.play.web import connections  # noqa: E402
from manni_agents.play.web.connections import AcceptErrors, Gate  # noqa: E402

from helpers.serving import serving  # noqa: E402

GET = b"GET /api/variants HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


@contextmanager
def running(tmp_path) -> Iterator[tuple[int, Gate]]:
    """The port and the connection gate of ``manni serve``'s server running in a thread on
    127.0.0.1 (the module's bounds as the test set them)."""
    from manni_agents.play.web.app import create_app
    from manni_agents.play.web.lineup import Lineup
    from manni_agents.play.web.store import GameStore

    with serving(create_app(GameStore(tmp_path / "web"), Lineup())) as (port, uvicorn_server):
        yield port, uvicorn_server.config.http.gate


def answer(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """Everything the server sends until it closes the connection (or ``timeout``)."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def connect(port: int) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=10)


def no_traceback(caplog) -> None:
    assert "Traceback" not in caplog.text and not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_an_idle_connection_and_a_slow_head_get_408_at_the_deadline(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(connections, "HEAD_SECONDS", 0.8)
    with running(tmp_path) as (port, _):
        with connect(port) as prompt:
            prompt.sendall(GET[:10])
            time.sleep(0.4)
            prompt.sendall(GET[10:])  # within the deadline: answered
            assert prompt.recv(65536).startswith(b"HTTP/1.1 200")
        with connect(port) as idle, connect(port) as slow:
            started = time.monotonic()
            for byte in GET[:40]:  # a byte every 100 ms, never the whole head, until the server answers:
                if select.select([slow], [], [], 0.1)[0]:  # the deadline runs from the start, not the last byte
                    break
                slow.sendall(bytes([byte]))
            got = answer(slow)
            assert 0.7 < time.monotonic() - started < 3.5  # 4 s of bytes had the deadline moved with them
            assert got.startswith(b"HTTP/1.1 408") and b"the request's head did not arrive within 0.8 s" in got
            assert answer(idle).startswith(b"HTTP/1.1 408")
    no_traceback(caplog)


def test_a_slow_body_gets_408_at_the_deadline(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(connections, "BODY_SECONDS", 0.6)
    head = b"POST /api/replay HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n"
    with running(tmp_path) as (port, _), connect(port) as slow, connect(port) as json_body:
        slow.sendall(head + b"{")
        json_body.sendall(b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                          b"Content-Length: 50\r\n\r\n{")
        for sock in (slow, json_body):
            got = answer(sock)
            assert got.startswith(b"HTTP/1.1 408") and b"the request's body did not arrive within 0.6 s" in got
        with connect(port) as whole:  # the same body sent at once
            whole.sendall(head.replace(b"1000", b"2") + b"{}")
            assert whole.recv(65536).startswith(b"HTTP/1.1 400")
    no_traceback(caplog)


def test_a_client_gets_its_share_of_connections_and_the_server_its_limit(tmp_path, monkeypatch, caplog):
    """1,024 idle connections once made every request 503: one client now holds its share only."""
    monkeypatch.setattr(connections, "CONNECTIONS_PER_CLIENT", 3)
    monkeypatch.setattr("manni_agents.play.web.app.MAX_CONNECTIONS", 5)
    with running(tmp_path) as (port, _), ExitStack() as stack:
        held = [stack.enter_context(connect(port)) for _ in range(3)]  # at the share
        time.sleep(0.2)
        with connect(port) as extra:  # past it
            got = answer(extra)
        assert got.startswith(b"HTTP/1.1 429") and b"you have 3 connections open" in got
        held[0].sendall(GET)
        assert held[0].recv(65536).startswith(b"HTTP/1.1 200")  # the share still works
    no_traceback(caplog)


def test_connections_past_the_servers_limit_get_503_and_websockets_count(tmp_path, monkeypatch, caplog):
    import json

    from websockets.sync.client import connect as ws_connect

    monkeypatch.setattr("manni_agents.play.web.app.MAX_CONNECTIONS", 3)
    with running(tmp_path) as (port, gate):
        with ExitStack() as stack:
            table = json.loads(_request(port, b"POST", b"/api/tables", b'{"variant": "basic"}').split(b"\r\n\r\n", 1)[1])
            stack.enter_context(ws_connect(f"ws://127.0.0.1:{port}/ws/tables/{table['id']}")).send('{"type": "watch"}')
            held = [stack.enter_context(connect(port)) for _ in range(2)]  # at the limit, with the WebSocket
            time.sleep(0.2)
            with connect(port) as extra:  # past it
                got = answer(extra)
            assert got.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in got and b"3 connections are open" in got
            held[1].sendall(GET)
            assert held[1].recv(65536).startswith(b"HTTP/1.1 200")
        for _ in range(100):  # every connection, the WebSocket too, is counted out as it closes
            if gate.open == 0:
                break
            time.sleep(0.05)
        assert gate.open == 0 and gate.clients == {}
    no_traceback(caplog)


def _request(port: int, method: bytes, path: bytes, body: bytes = b"") -> bytes:
    with connect(port) as sock:
        sock.sendall(method + b" " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                     b"Content-Type: application/json\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        return answer(sock)


def test_the_gate_counts_every_connection_until_it_closes():
    gate = Gate(limit=3, per_client=2)
    assert gate.enter("a") is None and gate.enter("a") is None
    assert gate.enter("a") == (429, "you have 2 connections open, the most one client may have")
    assert gate.enter("b") is None
    assert gate.enter("c") == (503, "3 connections are open, the most this server keeps; try again later")
    gate.leave("a")
    assert gate.enter("c") is None and gate.open == 3 and gate.clients == {"a": 1, "b": 1, "c": 1}


def test_accept_errors_are_one_line_a_minute_without_traceback(caplog):
    class Clock:
        now = 0.0

        def __call__(self) -> float:
            return self.now

    clock, handled = Clock(), []
    handler = AcceptErrors(clock)
    loop = type("Loop", (), {"default_exception_handler": lambda self, context: handled.append(context)})()
    emfile = OSError(errno.EMFILE, "Too many open files")
    with caplog.at_level(logging.WARNING, logger="manni.serve"):
        for _ in range(234_514 // 100):
            handler(loop, {"message": "socket.accept() out of system resource", "exception": emfile})
        clock.now = 60.0
        handler(loop, {"message": "socket.accept() out of system resource", "exception": emfile})
        handler(loop, {"message": "something else", "exception": ValueError("x")})
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and all(r.exc_info is None for r in caplog.records)
    assert "cannot accept connections: Too many open files (1 time since the last note)" in lines[0]
    assert "(2345 times since the last note)" in lines[1]
    assert len(handled) == 1  # the rest goes to the loop's own handler


SERVER_AT_64_FILES = """
import resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
from manni_env.cli import main
sys.exit(main(["serve", "--port", "0", "--records-dir", sys.argv[1]]))
"""


def _burst(port: int, count: int = 300) -> None:
    """``count`` connections opened at once, held for a second, then closed."""
    sockets = []
    for _ in range(count):
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex(("127.0.0.1", port))
        sockets.append(sock)
    time.sleep(1.0)
    for sock in sockets:
        sock.close()


def test_running_out_of_open_files_writes_a_line_not_a_storm(tmp_path):
    """A server limited to 64 open files, under bursts of 300 connections: the log gets a line,
    no traceback, and the server answers once the connections are gone, and stops cleanly just
    after a burst (asyncio's retries of the failed accepts find the server closed)."""
    pytest.importorskip("resource")
    server = subprocess.Popen([sys.executable, "-c", SERVER_AT_64_FILES, str(tmp_path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline().split(":")[2].split("/")[0])
        _burst(port)
        deadline = time.monotonic() + 20
        while True:
            try:
                with connect(port) as sock:
                    sock.sendall(GET)
                    if sock.recv(65536).startswith(b"HTTP/1.1 200"):
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not answer after the burst"
            time.sleep(0.2)
        _burst(port)
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert "Traceback" not in err
    assert 1 <= err.count("cannot accept connections: Too many open files") <= 2 and len(err.splitlines()) <= 3, err[:2000]
