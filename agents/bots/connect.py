"""``manni bot connect URL COMMAND``: a local bot program plays a seat at a table of a ``manni serve``
on another machine (docs/bot-protocol.md, "Remote bots").

The client joins the table's seat for a remote bot (``POST /api/tables/{id}/seats`` with
``"bot": true``; a link that carries ``&token=T`` rejoins that seat instead), opens the table's
WebSocket, and relays the ``manni-bot/1`` messages between it and the program's stdin/stdout, one
line per message: the program is the same one ``bot:COMMAND`` runs, unchanged. It runs the program
like ``bot:COMMAND`` does (:class:`~manni_agents.bots.process.BotProcess`: its own process group,
a bounded stderr log, a bounded answer line) and waits for each answer as long as the server's
time limit. The server checks every answer; its fatal error ends the client with that one line.
"""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit, urlunsplit

from manni_agents.bots.process import BotFault, BotProcess, StderrLog

#: Largest message read from the server, seconds to open the connection and to join.
MAX_MESSAGE_BYTES, OPEN_TIMEOUT = 1 << 20, 10.0
#: Largest error body read from the server's HTTP answer.
MAX_ERROR_BYTES = 65_536
#: The environment variable with the bot's player token (a rated player; not in the command line,
#: where other users of the machine could read it).
PLAYER_TOKEN = "MANNI_PLAYER_TOKEN"
#: The messages relayed to the program, and those of them it answers.
RELAYED, ANSWERED = frozenset({"hello", "game", "act", "deal_end", "game_end"}), frozenset({"hello", "act"})


class ConnectError(RuntimeError):
    """Why the client cannot go on (one line)."""


def parse_link(url: str) -> tuple[str, str, str | None]:
    """``(server URL, table id, token or None)`` of an invite link ``http://HOST:PORT/#table=ID``
    (or a rejoin link ending ``&token=T``); :class:`ConnectError` for anything else."""
    parts = urlsplit(url.strip())
    fields = parse_qs(parts.fragment)
    if parts.scheme not in ("http", "https") or not parts.netloc or "table" not in fields:
        raise ConnectError(f"not a table's invite link: {url!r} (expected http://HOST:PORT/#table=ID)")
    token = fields.get("token", [None])[0]
    return urlunsplit((parts.scheme, parts.netloc, "", "", "")), fields["table"][0], token


def join(server: str, table_id: str, name: str) -> tuple[int, str]:
    """Take the table's open seat for a remote bot: ``(seat, token)``; as the rated player whose
    token is in :data:`PLAYER_TOKEN` if that is set."""
    player = os.environ.get(PLAYER_TOKEN)
    body = json.dumps({"name": name, "bot": True, **({"player": player} if player else {})}).encode()
    request = urllib.request.Request(f"{server}/api/tables/{table_id}/seats", data=body, method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=OPEN_TIMEOUT) as answer:  # noqa: S310 (http(s) only)
            joined = json.loads(answer.read(MAX_ERROR_BYTES))
    except urllib.error.HTTPError as err:
        try:
            message = json.loads(err.read(MAX_ERROR_BYTES)).get("error", err.reason)
        except (ValueError, AttributeError):
            message = err.reason
        raise ConnectError(f"cannot join the table: {message}") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise ConnectError(f"cannot reach {server}: {getattr(err, 'reason', err)}") from None
    return int(joined["seat"]), str(joined["token"])


def run(url: str, command: str, name: str = "", say: Callable[[str], None] = print) -> int:
    """Play the table of ``url`` with the bot ``command`` until the game ends (0) or something
    fails (1, after one line through ``say``)."""
    from websockets.exceptions import ConnectionClosed, WebSocketException
    from websockets.sync.client import connect

    server, table_id, token = parse_link(url)
    if token is None:
        seat, token = join(server, table_id, name)
        say(f"seat {seat} at table {table_id}; to rejoin it: manni bot connect '{server}/#table={table_id}&token={token}' ...")
    ws_url = server.replace("http", "ws", 1) + f"/ws/tables/{table_id}"
    log = StderrLog(command)
    proc: BotProcess | None = None
    try:
        with connect(ws_url, max_size=MAX_MESSAGE_BYTES, open_timeout=OPEN_TIMEOUT, close_timeout=2) as ws:
            ws.send(json.dumps({"type": "hello", "token": token}))
            time_limit = 10.0
            while True:
                message = json.loads(ws.recv())
                kind = message.get("type") if isinstance(message, dict) else None
                if kind == "error":
                    raise ConnectError(str(message.get("message")))
                if kind == "bye":
                    return 0
                if kind not in RELAYED:
                    continue  # the welcome
                if proc is None:
                    proc = BotProcess(command, log)
                time_limit = float(message.get("time_limit", time_limit))
                deadline = time.monotonic() + time_limit
                proc.send(message, deadline)
                if kind in ANSWERED:
                    ws.send(proc.receive(deadline).decode(errors="replace"))
    except ConnectionClosed as err:
        raise ConnectError(f"the server closed the connection: {err.rcvd.reason if err.rcvd else 'no reason given'}") from None
    except (WebSocketException, OSError, TimeoutError) as err:
        raise ConnectError(f"cannot talk to {ws_url}: {err}") from None
    except ValueError as err:  # a message that is not JSON
        raise ConnectError(f"the server sent something that is not a message: {err}") from None
    except BotFault as fault:
        tail = proc.log_tail() if proc is not None else ""
        raise ConnectError(f"the bot {fault}; stderr log: {log.path}" + (f" (ends: {tail})" if tail else "")) from None
    finally:
        if proc is not None:
            proc.close()


def main(url: str, command: str, name: str = "") -> int:
    """:func:`run`, with every failure one line on stderr (exit code 1)."""
    try:
        return run(url, command, name, say=lambda line: print(f"manni bot connect: {line}", file=sys.stderr, flush=True))
    except ConnectError as err:
        print(f"manni bot connect: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
