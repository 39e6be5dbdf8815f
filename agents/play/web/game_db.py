"""Single games that outlast the server: each game against the agents and every move written to
the :class:`~manni_agents.play.web.database.Database` as it is made, and every game in progress
rebuilt from them at the next start (like the tables', :mod:`.table_db`)."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from sqlalchemy.exc import SQLAlchemyError

from manni_agents.play.web.database import Database
from manni_agents.play.web.game import WebGame
from manni_env.rules import make_rules

log = logging.getLogger("manni.serve")


class GameJournal:
    """Writes one game's moves as they are made (called under the game's lock, so before the
    move is answered), and its record once it is over."""

    def __init__(self, db: Database, game_id: str, moves: int):
        self.db, self.game_id, self.moves = db, game_id, moves

    def moved(self, game: WebGame, action: int, probabilities: dict | None) -> None:
        """Write the move just made (a write that fails is logged, and the game goes on)."""
        try:
            self.db.add_single_move(self.game_id, self.moves, action, probabilities)
            self.moves += 1
            if game.state.finished:
                self.db.save_record(f"game:{self.game_id}", game.record())
        except SQLAlchemyError as err:
            log.error("game %s: move %d not written to the database: %s", self.game_id, self.moves, err)


class GameKeeper:
    """What :class:`~manni_agents.play.web.store.GameStore` needs of the database."""

    def __init__(self, db: Database):
        self.db = db

    def attach(self, game_id: str, game: WebGame, client: str | None = None) -> None:
        """Write the new game ``game_id`` created by ``client``, the moves its agents made already,
        and every move to come."""
        with game.lock:
            rules = game.state.rules
            probabilities = [p for deal in game.probabilities for p in deal]
            self.db.add_single_game(game_id, {
                "variant": rules.variant, "options": rules.options(), "seed": str(game.seed), "seat": game.seat,
                "opponents": [spec for s, spec in enumerate(game.specs) if s != game.seat],
                "client": None if client is None else client[:64]},
                list(zip(game.actions, probabilities)))
            game.journal = GameJournal(self.db, game_id, len(game.actions))
            if game.state.finished:
                self.db.save_record(f"game:{game_id}", game.record())

    def closed(self, game_id: str, game: WebGame) -> None:
        """The game expired (its record is saved): it does not come back."""
        self.db.close_single_game(game_id)

    def restore(self) -> Iterator[tuple[str, WebGame, str | None]]:
        """Every game in progress at its last move, with the client that created it; one that
        cannot be rebuilt is logged and closed."""
        for row, moves in self.db.open_single_games():
            try:
                game = WebGame(make_rules(row["variant"], **row["options"]), row["opponents"], row["seat"],
                               int(row["seed"]), start=False)
                for move in moves:
                    game._apply(move["action"], move["probabilities"])
            except ValueError as err:
                log.error("game %s cannot be restored (%s): closed", row["id"], err)
                self.db.close_single_game(row["id"])
                continue
            if game.state.finished:  # saved when it ended: nothing to come back for
                self.db.close_single_game(row["id"])
                continue
            game.journal = GameJournal(self.db, row["id"], len(moves))
            with game.lock:
                game._play_agents()  # the agents' moves the restart interrupted
            yield row["id"], game, row["client"]
