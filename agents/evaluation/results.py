"""Result files of the arena (``manni arena --out``, a league's cell): ``result.json``, ``.md`` and
``.png``, and ``games.json`` (every game, to resume an interrupted run and for the league's
ratings), written together, whole or not at all (:func:`manni_env.files.replace_atomically`, the
one atomic file write of the project), and read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from manni_env.files import replace_atomically

if TYPE_CHECKING:
    from manni_agents.evaluation.arena import ArenaResult, Game

GAMES_FILE = "games.json"
#: the files :func:`write_outputs` writes (``manni arena --out``)
RESULT_FILES = ("result.json", "result.md", "result.png", GAMES_FILE)
#: a game's fields in ``games.json``, in order; the league's files from before ``deals`` and
#: ``win`` were written have the first four (deals mode: one deal, no win share)
GAME_FIELDS = ("unit", "seating", "players", "score", "deals", "win")


def write_outputs(result: ArenaResult, out: str | Path) -> None:
    """The :data:`RESULT_FILES` of an :class:`~manni_agents.evaluation.arena.ArenaResult` in
    directory ``out`` (created if needed), renamed into place together once all four are written
    (a full disk keeps the previous four)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result.to_dict(), indent=2) + "\n"
    replace_atomically((out / "result.json", lambda p: p.write_text(text)),
                       (out / "result.md", lambda p: p.write_text(result.to_markdown())),
                       (out / "result.png", result.plot),
                       (out / GAMES_FILE, lambda p: p.write_text(_games_text(result))))


def _games_text(result: ArenaResult) -> str:
    """``games.json``: the agents and every game of ``result`` as a row of :data:`GAME_FIELDS`."""
    rows = [[g.unit, g.seating, list(g.players), list(g.score), g.deals, None if g.win is None else list(g.win)]
            for g in result.games]
    data = {"agents": result.settings["agents"], "fields": list(GAME_FIELDS), "games": rows}
    return json.dumps(data, separators=(",", ":")) + "\n"


def read_games(where: str | Path) -> tuple[list[str], list[Game]]:
    """(agents, games) of the ``games.json`` in directory ``where``; no games if it has none.
    ValueError if it cannot be read."""
    from manni_agents.evaluation.arena import Game

    file = Path(where) / GAMES_FILE
    if not file.exists():
        return [], []
    try:
        data = json.loads(file.read_text())
        games = [{"deals": 1, "win": None, **dict(zip(data["fields"], row))} for row in data["games"]]
        return data["agents"], [Game(g["unit"], g["seating"], tuple(g["players"]), tuple(g["score"]), g["deals"],
                                     None if g["win"] is None else tuple(g["win"])) for g in games]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{file} is not a readable games file ({err}); delete it or pass --force") from None


def saved(where: str | Path) -> dict | None:
    """The ``result.json`` in directory ``where``, or None; ValueError if it is unreadable."""
    file = Path(where) / "result.json"
    if not file.exists():
        return None
    try:
        data = json.loads(file.read_text())
        if not {"settings", "agents", "head_to_head"} <= data.keys() or "units" not in data["settings"]:
            raise ValueError("keys missing")
    except (OSError, ValueError, AttributeError, TypeError) as err:
        raise ValueError(f"{file} is not a readable arena result ({err}); delete it or pass --force") from None
    return data


def kept_result(where: str | Path, data: dict | None = None) -> ArenaResult:
    """The result kept in directory ``where``, its games included, as
    :func:`~manni_agents.evaluation.arena.run_arena` takes it to resume (``earlier``); ValueError if
    its ``result.json`` and ``games.json`` cannot be read as one. ``data``: its ``result.json`` as
    :func:`saved` read it already (read here if not given)."""
    from manni_agents.evaluation.arena import ArenaResult

    data = saved(where) if data is None else data
    agents, games = read_games(where)
    if data is None or agents != data["settings"]["agents"] or len(games) != 6 * data["settings"]["units"]:
        raise ValueError(f"{where} holds no result with its games to resume; delete it or pass --force")
    return ArenaResult.from_dict(data, games)
