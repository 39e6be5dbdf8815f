"""``manni bot connect URL COMMAND``: a local bot program plays a seat at a table of a ``manni serve``
on another machine (docs/bot-protocol.md, "Remote bots").

The client joins the table's seat for a remote bot (``POST /api/tables/{id}/seats`` with
``"bot": true``; a link that carries ``&token=T`` rejoins that seat instead), opens the table's
WebSocket, and relays the ``manni-bot/1`` messages between it and the program's stdin/stdout, one
line per message: the program is the same one ``bot:COMMAND`` runs, unchanged. It runs the program
like ``bot:COMMAND`` does (:class:`~manni_agents.bots.process.BotProcess`: its own process group,
a bounded stderr log, a bounded answer line) and waits for each answer as long as the server's
time limit. The server checks every answer; its fatal error ends the client with that one line.
A connection lost without one (the server restarting) is opened again with the same seat token
for :data:`RECONNECT_SECONDS`; the program keeps playing, its first hello answer given again.
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
#: Seconds a lost connection is tried again (every :data:`RETRY_SECONDS`) before the client gives up.
RECONNECT_SECONDS, RETRY_SECONDS = 60.0, 1.0
#: The environment variable with the bot's player token (a rated player; not in the command line,
#: where other users of the machine could read it).
PLAYER_TOKEN = "MANNI_PLAYER_TOKEN"
#: The messages relayed to the program, and those of them it answers.
RELAYED, ANSWERED = frozenset({"hello", "game", "act", "deal_end", "game_end"}), frozenset({"hello", "act"})


class ConnectError(RuntimeError):
    """Why the client cannot go on (one line); ``status``: the server's HTTP status, if it answered."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def parse_link(url: str) -> tuple[str, str | None, str | None]:
    """``(server URL, table id, token or None)`` of an invite link ``http://HOST:PORT/#table=ID``
    (or a rejoin link ending ``&token=T``); the table id is ``None`` for the daily challenge's
    link ``http://HOST:PORT/#daily``. :class:`ConnectError` for anything else."""
    parts = urlsplit(url.strip())
    fields = parse_qs(parts.fragment)
    daily = parts.fragment == "daily"
    if parts.scheme not in ("http", "https") or not parts.netloc or not (daily or "table" in fields):
        raise ConnectError(f"not a table's invite link: {url!r} (expected http://HOST:PORT/#table=ID, or "
                           "http://HOST:PORT/#daily for the daily challenge)")
    server = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
    if daily:
        return server, None, None
    return server, fields["table"][0], fields.get("token", [None])[0]


def post(url: str, body: dict) -> dict:
    """The server's JSON answer to ``body``; :class:`ConnectError` with its error message."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=OPEN_TIMEOUT) as answer:  # noqa: S310 (http(s) only)
            return json.loads(answer.read(MAX_ERROR_BYTES))
    except urllib.error.HTTPError as err:
        try:
            message = json.loads(err.read(MAX_ERROR_BYTES)).get("error", err.reason)
        except (ValueError, AttributeError):
            message = err.reason
        raise ConnectError(str(message), err.code) from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise ConnectError(f"cannot reach {url}: {getattr(err, 'reason', err)}") from None


def join(server: str, table_id: str, name: str) -> tuple[int, str]:
    """Take the table's open seat for a remote bot: ``(seat, token)``; as the rated player whose
    token is in :data:`PLAYER_TOKEN` if that is set."""
    player = os.environ.get(PLAYER_TOKEN)
    try:
        joined = post(f"{server}/api/tables/{table_id}/seats", {"name": name, "bot": True, **({"player": player} if player else {})})
    except ConnectError as err:
        raise ConnectError(f"cannot join the table: {err}", err.status) from None
    return int(joined["seat"]), str(joined["token"])


class _Lost(Exception):
    """The connection went away without a fatal error (it may come back)."""


class _Bot:
    """The local program, started at the first message it is to read and kept from deal to deal."""

    def __init__(self, command: str):
        self.command, self.log = command, StderrLog(command)
        self.proc: BotProcess | None = None
        self.hello: bytes | None = None  # its answer to the first hello, given again on a reconnection

    def relay(self, message: dict, time_limit: float) -> bytes | None:
        """Send ``message`` to the program; its answer line when the message asks for one."""
        if message["type"] == "hello" and self.hello is not None:
            return self.hello
        if self.proc is None:
            self.proc = BotProcess(self.command, self.log)
        deadline = time.monotonic() + time_limit
        self.proc.send(message, deadline)
        if message["type"] not in ANSWERED:
            return None
        answer = self.proc.receive(deadline)
        if message["type"] == "hello":
            self.hello = answer
        return answer

    def fault(self, fault: BotFault) -> ConnectError:
        tail = self.proc.log_tail() if self.proc is not None else ""
        return ConnectError(f"the bot {fault}; stderr log: {self.log.path}" + (f" (ends: {tail})" if tail else ""))

    def close(self) -> None:
        if self.proc is not None:
            self.proc.close()


def play(server: str, table_id: str, token: str, bot: _Bot, say: Callable[[str], None] = print) -> None:
    """Play the seat of ``token`` at the table until the server says bye, connecting again when
    the connection is lost; :class:`ConnectError` if the server refuses or stays away."""
    give_up = None
    while True:
        try:
            return _session(server, table_id, token, bot)
        except _Lost as lost:
            now = time.monotonic()
            if give_up is None:
                give_up = now + RECONNECT_SECONDS
                say(f"{lost}; connecting again for up to {RECONNECT_SECONDS:g} s")
            if now >= give_up:
                raise ConnectError(f"{lost}, and it did not come back within {RECONNECT_SECONDS:g} s") from None
            time.sleep(RETRY_SECONDS)


def _session(server: str, table_id: str, token: str, bot: _Bot) -> None:
    """One connection to the table: until bye, a fatal error (:class:`ConnectError`) or its loss (:class:`_Lost`)."""
    from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
    from websockets.sync.client import connect

    ws_url = server.replace("http", "ws", 1) + f"/ws/tables/{table_id}"
    time_limit = 10.0
    try:
        with connect(ws_url, max_size=MAX_MESSAGE_BYTES, open_timeout=OPEN_TIMEOUT, close_timeout=2) as ws:
            ws.send(json.dumps({"type": "hello", "token": token}))
            while True:
                message = json.loads(ws.recv())
                kind = message.get("type") if isinstance(message, dict) else None
                if kind == "error":
                    raise ConnectError(str(message.get("message")))
                if kind == "bye":
                    return
                if kind not in RELAYED:
                    continue  # the welcome
                time_limit = float(message.get("time_limit", time_limit))
                answer = bot.relay(message, time_limit)
                if answer is not None:
                    ws.send(answer.decode(errors="replace"))
    except ConnectionClosed as err:
        raise _Lost(f"the connection was lost ({err.rcvd.reason if err.rcvd and err.rcvd.reason else 'no reason given'})") from None
    except InvalidStatus as err:
        raise ConnectError(f"the server refused the connection to {ws_url}: {err}") from None
    except (WebSocketException, OSError, TimeoutError) as err:
        raise _Lost(f"cannot talk to {ws_url} ({err})") from None
    except ValueError as err:  # a message that is not JSON
        raise ConnectError(f"the server sent something that is not a message: {err}") from None
    except BotFault as fault:
        raise bot.fault(fault) from None


def run(url: str, command: str, name: str = "", say: Callable[[str], None] = print) -> int:
    """Play the table of ``url`` (or every deal left of today's daily challenge) with the bot
    ``command`` until the game ends (0) or something fails (:class:`ConnectError`)."""
    server, table_id, token = parse_link(url)
    bot = _Bot(command)
    try:
        if table_id is None:
            player = os.environ.get(PLAYER_TOKEN)
            if not player:
                raise ConnectError(f"the daily challenge is played by a rated bot: set {PLAYER_TOKEN} to its player token")
            while True:
                try:
                    started = post(f"{server}/api/daily/deals", {"player": player})
                except ConnectError as err:
                    if err.status != 409:
                        raise
                    say(str(err))  # every deal of the day is played
                    return 0
                say(f"deal {started['deal']} of {started['of']} of {started['day']}, seat {started['seat']}")
                play(server, started["table"], started["token"], bot, say)
        if token is None:
            seat, token = join(server, table_id, name)
            say(f"seat {seat} at table {table_id}; to rejoin it: manni bot connect '{server}/#table={table_id}&token={token}' ...")
        play(server, table_id, token, bot, say)
        return 0
    finally:
        bot.close()


def main(url: str, command: str, name: str = "") -> int:
    """:func:`run`, with every failure one line on stderr (exit code 1)."""
    try:
        return run(url, command, name, say=lambda line: print(f"manni bot connect: {line}", file=sys.stderr, flush=True))
    except ConnectError as err:
        print(f"manni bot connect: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
