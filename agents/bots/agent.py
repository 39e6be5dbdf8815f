"""``bot:COMMAND``: a program in any language as a player, over the ``manni-bot/1`` protocol.

``bot:python3 examples/bots/simple_bot.py`` runs the command line (split like a shell does, no
shell) once per agent object, i.e. once per seat and game series, and asks it for every decision
of its seat (see docs/bot-protocol.md). Options go before the command, ending with a colon:
``bot:time_limit=2,on_error=fallback:node examples/bots/simple_bot.js``.

==============  ============================================================================
option          meaning
==============  ============================================================================
``time_limit``  seconds the bot has for each answer (default 10)
``start_limit`` seconds the bot has to start and answer ``hello`` (default 10)
``on_error``    ``stop`` (default): a timeout, crash, illegal or unreadable answer raises
                :class:`BotError` naming the bot, the seat and the request; ``fallback``:
                play a uniformly random legal move instead, count a strike, and restart the
                bot at its next decision
``log``         directory of the stderr logs (default ``manni-bot-logs`` in the temp dir), a
                file made only when the bot writes to stderr
``transcript``  a file that gets every message sent (``> ``) and answered (``< ``), appended
==============  ============================================================================
"""

from __future__ import annotations

import re
import shlex
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from manni_agents.base import legal_actions_of
from manni_agents.bots import protocol as P
from manni_agents.bots.process import BotFault, BotProcess, BotTimeout, StderrLog, script_of
from manni_agents.spec_options import parse_options
from manni_agents.spec_options import seconds as limit_seconds
from manni_env.view import SeatView

if TYPE_CHECKING:
    from manni_env.engine import RoundResult
    from manni_env.rules import Rules

ON_ERROR = ("stop", "fallback")
#: added to a timeout with no answer at all: the usual cause
BUFFERING_HINT = ("if the bot did write an answer, it is probably still in its output buffer: flush after each "
                  "line (docs/bot-protocol.md, Flushing)")
_OPTIONS = re.compile(r"^([A-Za-z_]+=[^\s,:]*(?:,[A-Za-z_]+=[^\s,:]*)*):(.*)$", re.S)


class BotError(RuntimeError):
    """A bot failed a request with ``on_error=stop``."""


def _on_error(text: str) -> str:
    if text not in ON_ERROR:
        raise ValueError(f"must be one of {', '.join(ON_ERROR)}")
    return text


OPTION_TYPES = {"time_limit": limit_seconds, "start_limit": limit_seconds, "on_error": _on_error, "log": Path,
                "transcript": Path}


def make_bot_agent(arg: str | None) -> BotAgent:
    """The registry's factory: ``[OPTIONS:]COMMAND``."""
    if arg is None or not arg.strip():
        raise ValueError("bot needs a command line, e.g. bot:python3 examples/bots/simple_bot.py")
    match = _OPTIONS.match(arg.strip())
    options = parse_options(match.group(1), OPTION_TYPES) if match else {}
    command = match.group(2) if match else arg
    if not command.strip():
        raise ValueError("bot needs a command line after its options")
    return BotAgent(command.strip(), **options)


class BotAgent:
    """A :class:`~manni_agents.base.Policy` whose decisions come from a bot program (see the module docstring).

    ``strikes`` counts the fallback moves played for it; ``faults`` describes them. The process
    starts at the first decision and stops with :meth:`close` (or when the object is collected).
    """

    def __init__(self, command: str, time_limit: float = 10.0, start_limit: float = 10.0, on_error: str = "stop",
                 log: Path | None = None, transcript: Path | None = None, check_messages: bool = False):
        """``check_messages``: check every message against the ``manni-bot/1`` schema before it is
        sent (``manni bot check``); one that breaks it raises :class:`BotError`."""
        try:
            program = shlex.split(command)[0]
        except (ValueError, IndexError):
            raise ValueError(f"not a command line: {command!r}") from None
        if shutil.which(program) is None:
            raise ValueError(f"bot program {program!r} not found (command {command!r})")
        self.command = command
        self.name = f"bot:{command}"
        self.time_limit, self.start_limit = float(time_limit), float(start_limit)
        self.on_error, self.log_dir, self.transcript = _on_error(on_error), log, transcript
        self.check_messages = check_messages
        self.bot_name: str | None = None  # from its hello
        self.bot_version: str | None = None
        self.strikes = 0
        self.faults: list[str] = []
        self._proc: BotProcess | None = None
        self._log: StderrLog | None = None  # one log file for all the bot's processes
        self._game: tuple[Rules, int] | None = None

    @property
    def script(self) -> Path | None:
        """The script file the command names (``mybot.py`` of ``python3 mybot.py``), if any."""
        return script_of(self.command)

    def reset(self) -> None:
        self._game = None

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_actions_of(view)
        request = self._checked(P.act(view))
        try:
            self.start_game(view.rules, view.seat)
            return P.parse_action(self._ask(request, self.time_limit), legal)
        except BotFault as fault:
            reason, request = str(fault), fault.request or request
        except ValueError as err:
            reason = str(err)
        return self._fault(view.seat, reason, request, legal, rng)

    def deal_over(self, seat: int, result: RoundResult, winners: tuple[int, ...] | None) -> None:
        """The game loop's report of a finished deal (``winners`` when it ended the game): sent to the
        bot without waiting for an answer. A bot that is gone is noticed at its next decision."""
        if self._proc is None or self._game is None:
            return
        messages = [self._checked(P.deal_end(result, seat))]
        if winners is not None:
            messages.append(self._checked(P.game_end(result, seat, winners)))
        try:
            for message in messages:
                self._proc.send(message, _deadline(self.time_limit))
        except BotFault:
            pass

    def close(self) -> int | None:
        """Stop the bot process (a next decision starts it again); its exit code (negative: killed by
        that signal, as it did not exit in time), or None if no process was running."""
        if self._proc is None:
            return None
        proc, self._proc, self._game = self._proc, None, None
        proc.close()
        return proc.proc.returncode

    # ------------------------------------------------------------------ internals
    def start_game(self, rules: Rules, seat: int) -> None:
        """Start the process (``hello``) if needed and announce the game if it is new; a
        :class:`BotFault` carries the message the bot failed."""
        if self._proc is None or not self._proc.alive:
            if self._proc is not None:
                self._proc.close()
            self._game = None
            if self._log is None:
                self._log = StderrLog(self.command, self.log_dir)
            self._proc = BotProcess(self.command, self._log, self.transcript)
            hello = self._checked(P.hello(self.time_limit))
            line = self._ask(hello, self.start_limit, " at hello")
            try:
                self.bot_name, self.bot_version = P.parse_hello(line)
            except ValueError as err:
                raise BotFault(str(err), hello) from None
        if self._game != (rules, seat):
            message = self._checked(P.game(rules, seat, self.time_limit))
            try:
                self._proc.send(message, _deadline(self.time_limit))
            except BotFault as fault:
                raise BotFault(f"{fault} at the game message", message) from None
            self._game = (rules, seat)

    def _ask(self, message: dict, seconds: float, where: str = "") -> bytes:
        """The bot's answer line to ``message``; a :class:`BotFault` saying why not, carrying ``message``."""
        try:
            return self._proc.ask(message, seconds)
        except BotTimeout as fault:
            hint = f"; {BUFFERING_HINT}" if str(fault) == "no answer" else ""
            raise BotFault(f"timed out after {seconds:g} s{where} ({fault}{hint})", message) from None
        except BotFault as fault:
            raise BotFault(f"{fault}{where}", message) from None

    def _checked(self, message: dict) -> dict:
        """``message``, checked against the schema when ``check_messages`` is set."""
        if self.check_messages:
            try:
                P.check_message(message)
            except ValueError as err:
                raise BotError(f"bot {self.name!r}: {err}") from None
        return message

    def explain(self, reason: str, request: dict) -> str:
        """``reason`` with the request line and the stderr log's path and last lines; stops the bot
        first, so that everything it wrote is in the log."""
        proc = self._proc
        self.close()
        message = f"{reason}; request: {P.encode(request).decode().strip()}"
        if proc is not None:
            tail = proc.log_tail()
            log = proc.log
            message += "; nothing on stderr" if log is None else f"; stderr log: {log}" + (f" (ends: {tail})" if tail else "")
        return message

    def _fault(self, seat: int, reason: str, request: dict, legal: tuple[int, ...], rng: np.random.Generator) -> int:
        who = f"bot {self.name!r}" + (f" ({self.bot_name})" if self.bot_name else "")
        message = f"{who} in seat {seat}: {self.explain(reason, request)}"
        if self.on_error == "stop":
            raise BotError(message)
        self.strikes += 1
        self.faults.append(message)
        return int(legal[rng.integers(len(legal))])


def _deadline(seconds: float) -> float:
    return time.monotonic() + seconds
