"""The games in progress: a bounded store keyed by random ids, whose idle games expire.

At most ``max_games`` games live at once: a new one beyond takes the place of the least recently
used finished game, or is refused with :class:`StoreFull`; a game nobody asked about for
``idle_seconds`` is dropped. One client (:func:`~manni_agents.play.web.limits.client_key`) has at
most ``per_client`` unfinished games, so a few requests kept alive cannot lock every game. A game is saved as one
``manni-record/1`` line in ``records_dir/games.jsonl`` when it finishes, and an unfinished one when
it expires or the server stops (its finished deals; a game without one is not saved). With a
database (:meth:`GameStore.keep_in`, :mod:`.game_db`) every game and move is written as it is made
and an unfinished game is left in progress when the server stops: it comes back at the next start.
A game has at most the rules' deal cap of deals, so its memory is bounded too.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

from manni_agents.base import close_policies
from manni_agents.play.web.game import WebGame
from manni_env.records import write_records
from manni_env.text import count

RECORDS_FILE = "games.jsonl"
#: Unfinished games one client may have (a quarter of the default 32).
GAMES_PER_CLIENT = 8
log = logging.getLogger("manni.serve")


class StoreFull(RuntimeError):
    """No room for another game."""


class GameStore:
    """See the module docstring; ``clock`` (seconds) is replaceable for tests."""

    def __init__(self, records_dir: str | Path, max_games: int = 32, idle_seconds: float = 1800.0,
                 clock: Callable[[], float] = time.monotonic, per_client: int = GAMES_PER_CLIENT):
        if max_games < 1 or idle_seconds <= 0 or per_client < 1:
            raise ValueError("max_games and per_client must be at least 1 and idle_seconds positive")
        self.records_path = Path(records_dir) / RECORDS_FILE
        self.max_games = max_games
        self.idle_seconds = idle_seconds
        self.per_client = per_client
        self.clock = clock
        self._games: dict[str, tuple[WebGame, float]] = {}
        self._creators: dict[str, str | None] = {}  # game id -> the client that created it
        self._lock = threading.Lock()
        self._file_lock = threading.Lock()
        self.keeper = None  # the database the games last in (game_db.GameKeeper), if any

    def keep_in(self, keeper) -> None:
        """Write every game and move to ``keeper``'s database from now on, and take back the games
        in progress there (a restart): stopping the server then leaves them in progress."""
        self.keeper = keeper
        for game_id, game, client in keeper.restore():
            with self._lock:
                self._games[game_id] = (game, self.clock())
                self._creators[game_id] = client  # it counts against its creator's share again

    def __len__(self) -> int:
        return len(self._games)

    def add(self, game: WebGame, client: str | None = None) -> str:
        """Keep ``game`` under a new random id; :class:`StoreFull` when ``max_games`` are running,
        or ``per_client`` unfinished ones were created by ``client`` (``None``: unknown)."""
        self.expire()
        with self._lock:
            if client is not None and sum(c == client and not self._games[key][0].state.finished
                                          for key, c in self._creators.items()) >= self.per_client:
                raise StoreFull(f"you have {count(self.per_client, 'unfinished game')}, the most one client may have: "
                                f"finish one, or an idle one expires after {self.idle_seconds / 60:g} minutes")
            if len(self._games) >= self.max_games:
                self._drop_finished()
            if len(self._games) >= self.max_games:
                raise StoreFull(f"{self.max_games} games are in progress, the most this server keeps; "
                                f"an idle game expires after {self.idle_seconds / 60:g} minutes")
            game_id = secrets.token_urlsafe(12)
            self._games[game_id] = (game, self.clock())
            self._creators[game_id] = client
        if self.keeper is not None:
            self.keeper.attach(game_id, game, client)
        return game_id

    def _drop_finished(self) -> None:
        """Make room by dropping the least recently used finished game (saved when it ended)."""
        done = [(used, key) for key, (game, used) in self._games.items() if game.state.finished and game.saved]
        if done:
            self._pop(min(done)[1])

    def _pop(self, game_id: str) -> WebGame:
        """Drop ``game_id`` (the store's lock held) and return it."""
        self._creators.pop(game_id, None)
        return self._games.pop(game_id)[0]

    def get(self, game_id: str) -> WebGame:
        """The game ``game_id`` (marked as used now); ``KeyError`` if unknown or expired."""
        self.expire()
        with self._lock:
            game, _ = self._games[game_id]
            self._games[game_id] = (game, self.clock())
        return game

    def expire(self) -> int:
        """Drop (and save) the games idle for ``idle_seconds``; returns how many."""
        now = self.clock()
        with self._lock:
            old = [key for key, (_, used) in self._games.items() if now - used >= self.idle_seconds]
            games = [self._pop(key) for key in old]
        for key, game in zip(old, games):
            self.save(game)
            close_policies(game.policies.values())
            if self.keeper is not None:
                self.keeper.closed(key, game)
        return len(games)

    def close(self) -> None:
        """Save and drop every game (the server is stopping); with a database, stop their agents
        and leave the unfinished ones in progress there for the next start."""
        with self._lock:
            games = [game for game, _ in self._games.values()]
            self._games.clear()
            self._creators.clear()
        for game in games:
            if self.keeper is None or game.state.finished:
                self.save(game)
            close_policies(game.policies.values())

    def save(self, game: WebGame) -> bool:
        """Append ``game``'s record once (if it has a finished deal); ``False`` if nothing was written."""
        with game.lock:
            if game.saved or not game.state.rounds:
                return False
            record = game.record()
            try:
                with self._file_lock:
                    self.records_path.parent.mkdir(parents=True, exist_ok=True)
                    write_records(self.records_path, [record])
            except OSError as err:
                log.error("cannot save a game record to %s: %s", self.records_path, err)
                return False
            game.saved = True
            return True
