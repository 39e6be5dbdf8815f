"""Host and Origin checks of ``manni serve`` (ASGI middleware), against DNS rebinding and other sites.

A page of another site cannot read the API's answers (no CORS headers), but two doors stay open
without these checks: a name that an attacker's DNS points at this server (*DNS rebinding*: the
browser then treats the server as the attacker's own site), and WebSockets, which browsers open to
any address. So :class:`HostCheck` refuses

- every request (HTTP and WebSocket) whose ``Host`` header names none of the allowed hosts: 421
  ``{"error": ...}`` (a WebSocket is closed before it is accepted, which the client sees as 403).
  An IP address is always allowed: rebinding works through a name, never an address, so friends
  on a LAN reach ``--host 0.0.0.0`` by the machine's address;
- every request whose ``Host`` header is empty or missing: 400 likewise (HTTP/1.1 requires it,
  and a request that names no host cannot be checked);
- every WebSocket, and every HTTP request other than ``GET``/``HEAD``, whose ``Origin`` header is
  not the server's own origin as the request reached it: ``http`` or ``https``, then exactly the
  ``Host`` header's name and port (a default port written or not). A page of another port of the
  same machine (``http://localhost:3000`` against a server on ``localhost:8000``), of another
  allowed name, or ``null`` (a sandboxed page, a file) gets 403 likewise. A client that sends no
  ``Origin`` (not a browser) passes.

The allowed hosts are ``localhost``, ``127.0.0.1``, ``::1``, the address the server listens on
and, when it listens on every address (``0.0.0.0``, ``::``), this machine's name; ``manni serve
--allowed-host NAME`` adds others (the name friends type to reach the server).
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")
WILDCARDS = ("0.0.0.0", "::", "")


def allowed_hosts(listen_host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The hosts a server listening on ``listen_host`` answers to (see the module docstring)."""
    hosts = {*LOCAL_HOSTS, *(_bare(h) for h in extra)}
    if listen_host in WILDCARDS:
        hosts.add(socket.gethostname().lower())
    else:
        hosts.add(_bare(listen_host))
    return frozenset(hosts)


def _authority(host: str, default_port: int) -> tuple[str, int] | None:
    """A ``Host`` header as ``(name, port)``: ``[::1]:8000`` → ``("::1", 8000)``, the port
    ``default_port`` when none is written; ``None`` when it cannot be read."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end == -1:
            return None
        name, port = host[1:end], host[end + 1:]
    elif host.count(":") == 1:
        name, port = host.split(":")[0], host[host.find(":"):]
    else:
        name, port = host, ""
    if not port:
        return name.rstrip("."), default_port
    digits = port[1:]
    if not port.startswith(":") or not (digits.isascii() and digits.isdigit()) or len(digits) > 5:
        return None
    return name.rstrip("."), int(digits)


def same_origin(origin: str, host: str) -> bool:
    """Whether the ``Origin`` header ``origin`` is the origin of a server reached as ``host`` (the
    ``Host`` header): scheme ``http`` or ``https``, the same name and the same port, where a port
    not written is the scheme's default."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:  # a port that is not a number, an unclosed bracket
        return False
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path or parts.query or parts.username:
        return False
    default = 80 if parts.scheme == "http" else 443
    return _authority(host, default) == (_bare(parts.hostname), default if port is None else port)


def _bare(host: str) -> str:
    """``host`` without port, brackets, trailing dot or case: ``[::1]:8000`` → ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        host = host[1:host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        host = host.split(":")[0]
    return host.rstrip(".")


class HostCheck:
    """ASGI middleware: the checks of the module docstring against ``hosts``."""

    def __init__(self, app, hosts: Iterable[str]):
        self.app, self.hosts = app, frozenset(_bare(h) for h in hosts)

    def _allowed(self, host: str) -> bool:
        """An allowed name, or any IP address."""
        if host in self.hosts:
            return True
        try:
            ipaddress.ip_address(host)
        except ValueError:
            return False
        return True

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        host = headers.get(b"host", b"").decode("latin-1")
        origin = headers.get(b"origin")
        problem = None
        if not host.strip():
            problem = 400, "the request names no host: a Host header is required"
        elif not self._allowed(_bare(host)):
            problem = 421, (f"this server does not answer to the host {host[:100]!r} "
                            "(manni serve --allowed-host adds a name)")
        elif origin is not None and (scope["type"] == "websocket" or scope.get("method") not in ("GET", "HEAD")):
            if not same_origin(origin.decode("latin-1"), host):
                problem = 403, (f"requests from pages of other sites are refused (origin {origin[:100].decode('latin-1')!r}; "
                                f"this server is {host[:100]!r})")
        if problem is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008, "reason": problem[1][:120]})
        else:
            body = json.dumps({"error": problem[1]}).encode()
            await send({"type": "http.response.start", "status": problem[0],
                        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
