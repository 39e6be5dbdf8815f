"""Host and Origin checks of ``manni serve`` (ASGI middleware), against DNS rebinding and other sites.

A page of another site cannot read the API's answers (no CORS headers), but two doors stay open
without these checks: a name that an attacker's DNS points at this server (*DNS rebinding*: the
browser then treats the server as the attacker's own site), and WebSockets, which browsers open to
any address. So :class:`HostCheck` refuses

- every request (HTTP and WebSocket) whose ``Host`` header names none of the allowed hosts: 421
  ``{"error": ...}`` (a WebSocket is closed before it is accepted, which the client sees as 403).
  An IP address is always allowed: rebinding works through a name, never an address, so friends
  on a LAN reach ``--host 0.0.0.0`` by the machine's address;
- every WebSocket, and every HTTP request other than ``GET``/``HEAD``, whose ``Origin`` header
  names a page of neither an allowed host nor the request's own ``Host`` (or ``null``): 403
  likewise. A client that sends no ``Origin`` (not a browser) passes.

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
        if host and not self._allowed(_bare(host)):
            problem = 421, (f"this server does not answer to the host {host[:100]!r} "
                            "(manni serve --allowed-host adds a name)")
        elif origin is not None and (scope["type"] == "websocket" or scope.get("method") not in ("GET", "HEAD")):
            origin_host = _bare(urlsplit(origin.decode("latin-1")).hostname or "")
            if origin_host not in self.hosts and origin_host != _bare(host):
                problem = 403, f"requests from pages of other sites are refused (origin {origin[:100].decode('latin-1')!r})"
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
