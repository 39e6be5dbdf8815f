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
``log``         directory of the stderr logs (default ``manni-bot-logs`` in the temp dir)
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
from manni_agents.bots.process import BotFault, BotProcess, BotTimeout
from manni_agents.spec_options import parse_options, positive_float
from manni_env.view import SeatView

if TYPE_CHECKING:
    from manni_env.engine import RoundResult
    from manni_env.rules import Rules

ON_ERROR = ("stop", "fallback")
_OPTIONS = re.compile(r"^([A-Za-z_]+=[^\s,:]*(?:,[A-Za-z_]+=[^\s,:]*)*):(.*)$", re.S)


class BotError(RuntimeError):
    """A bot failed a request with ``on_error=stop``."""


def _on_error(text: str) -> str:
    if text not in ON_ERROR:
        raise ValueError(f"must be one of {', '.join(ON_ERROR)}")
    return text


OPTION_TYPES = {"time_limit": positive_float, "start_limit": positive_float, "on_error": _on_error, "log": Path,
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
                 log: Path | None = None, transcript: Path | None = None):
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
        self.bot_name: str | None = None
        self.strikes = 0
        self.faults: list[str] = []
        self._proc: BotProcess | None = None
        self._game: tuple[Rules, int] | None = None

    def reset(self) -> None:
        self._game = None

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_actions_of(view)
        request = P.act(view)
        try:
            self.start_game(view.rules, view.seat)
            line = self._proc.ask(request, self.time_limit)
            return P.parse_action(line, legal)
        except BotTimeout as fault:
            reason = f"timed out after {self.time_limit:g} s ({fault})"
        except BotFault as fault:
            reason = str(fault)
        except ValueError as err:
            reason = str(err)
        return self._fault(view.seat, reason, request, legal, rng)

    def deal_over(self, seat: int, result: RoundResult, winners: tuple[int, ...] | None) -> None:
        """The game loop's report of a finished deal (``winners`` when it ended the game): sent to the
        bot without waiting for an answer. A bot that is gone is noticed at its next decision."""
        if self._proc is None or self._game is None:
            return
        messages = [P.deal_end(result, seat)] + ([P.game_end(result, seat, winners)] if winners is not None else [])
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
        """Start the process (``hello``) if needed and announce the game if it is new."""
        if self._proc is None or not self._proc.alive:
            if self._proc is not None:
                self._proc.close()
            self._game = None
            self._proc = BotProcess(self.command, self.log_dir, self.transcript)
            try:
                line = self._proc.ask(P.hello(self.time_limit), self.start_limit)
            except BotTimeout as fault:
                raise BotFault(f"timed out after {self.start_limit:g} s at hello ({fault})") from None
            except BotFault as fault:
                raise BotFault(f"{fault} at hello") from None
            try:
                self.bot_name = P.parse_hello(line)
            except ValueError as err:
                raise BotFault(str(err)) from None
        if self._game != (rules, seat):
            self._proc.send(P.game(rules, seat, self.time_limit), _deadline(self.time_limit))
            self._game = (rules, seat)

    def _fault(self, seat: int, reason: str, request: dict, legal: tuple[int, ...], rng: np.random.Generator) -> int:
        log = self._proc.log if self._proc is not None else None
        tail = self._proc.log_tail() if self._proc is not None else ""
        self.close()
        who = f"bot {self.name!r}" + (f" ({self.bot_name})" if self.bot_name else "")
        message = f"{who} in seat {seat}: {reason}; request: {P.encode(request).decode().strip()}"
        if log is not None:
            message += f"; stderr log: {log}" + (f" (ends: {tail})" if tail else "")
        if self.on_error == "stop":
            raise BotError(message)
        self.strikes += 1
        self.faults.append(message)
        return int(legal[rng.integers(len(legal))])


def _deadline(seconds: float) -> float:
    return time.monotonic() + seconds
