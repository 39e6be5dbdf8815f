"""A league: every agent against two copies of every other in the duplicate arena, and a leaderboard.

A *cell* ``(X, Y)`` is ``manni arena X Y Y`` in deals mode (:func:`manni_agents.evaluation.arena.run_arena`, seeded
with the league's seed), kept in ``OUT/VARIANT/X_vs_Y/`` as ``result.json``/``.md``/``.png`` and
``games.json`` (every game's seating and scores, for the ratings and to resume: :mod:`.results`)
and ``players.json`` (who X and Y were: :func:`identity`). In a spec, characters other than
letters, digits and ``_.=,-`` become ``-`` in the directory name. A cell whose ``result.json`` already holds these settings (agents,
rules, seed, at least its deals) is kept while its players are the same (the spec; for a
checkpoint path the hash of its weights and metadata; for a bot the name and version it gives in
``hello`` and the hashes of what its command runs: :func:`bot_code`), so adding an agent plays only
its new cells and recompiling or editing a bot or retraining a checkpoint in place plays its cells
again (a bot whose code cannot be hashed, every run). A cell interrupted by Ctrl-C or a stop signal
keeps its finished deals, and the next run by the same players resumes it after them (the arena's
``earlier``: the result equals an uninterrupted cell's but for the time per move). Tables and
plots name a bot by the name it gives itself, as the arena does.

The leaderboard of a variant, from the kept cells of its agents:

- *mean deal score*: the mean over X's cells (one per other agent, equal weights) of X's mean deal
  score against two copies of Y; its 95% CI combines the cells' independent CIs
  (half-width ``sqrt(Σ halfᵢ²) / cells``, normal approximation over deals);
- *rating*: openskill's Plackett-Luce model over every game of every cell (cells in agent order,
  games in unit then seating order), seats ranked by score, copies of an agent entering a match as
  separate players and the agent's new rating being their mean (as in :mod:`manni_agents.evaluation.arena`);
- *ms/move*: wall time inside ``act`` over all the agent's moves in its cells (the only figure
  that differs between identical runs); *strikes*: fallback moves of a failing ``bot:`` agent.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shlex
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from manni_agents.bots.agent import BotAgent, BotError
from manni_agents.bots.process import BotFault, script_of
from manni_agents.evaluation.arena import (ArenaInterrupted, ArenaResult, Game, Interval, openskill_ratings, own_name,
                                            run_arena, same_arena)
from manni_agents.evaluation.arena import labels as arena_labels
from manni_agents.evaluation.results import GAMES_FILE, kept_result, read_games, saved, write_outputs
from manni_env.files import replace_atomically, write_text
from manni_env.interrupts import stop_signals
from manni_env.rules import Rules, make_rules

LEADERBOARD_FILES = ("leaderboard.md", "leaderboard.json", "leaderboard.png")


def safe_name(spec: str) -> str:
    """``spec`` as a directory name part: ``pimc:worlds=16`` → ``pimc-worlds=16``."""
    return re.sub(r"[^A-Za-z0-9_.=,-]", "-", spec)


def cell_dir(out: Path, variant: str, x: str, y: str) -> Path:
    return out / variant / f"{safe_name(x)}_vs_{safe_name(y)}"


def identity(spec: str, agent) -> dict:
    """What makes ``agent`` (built from ``spec``) the same player as before: the spec, the hash of a
    checkpoint file it loads, and for a bot its ``hello`` (it is started and stopped for it) and the
    hashes of :func:`bot_code`. :class:`~manni_agents.bot_agent.BotError` if a bot cannot say hello."""
    who: dict = {"spec": spec}
    path = getattr(agent, "path", None)
    if path is not None and Path(path).is_file():
        who["weights_sha256"] = _sha256(Path(path), Path(path).with_suffix(".json"))
    if isinstance(agent, BotAgent):
        try:
            agent.start_game(make_rules(), 0)
        except BotFault as fault:
            raise BotError(f"bot {spec!r} at its start: {agent.explain(str(fault), fault.request or {})}") from None
        agent.close()
        who["bot_name"], who["bot_version"] = agent.bot_name, agent.bot_version
        who.update(bot_code(agent.command))
    return who


def bot_code(command: str) -> dict:
    """What a bot's command runs: the SHA-256 of its executable (found on ``PATH``, links followed)
    and of the script it names (``mybot.py`` of ``python3 mybot.py``); ``unknown`` says why these do
    not pin the bot down (an unreadable executable, or arguments that name no file: ``python3 -m
    mybot``, ``java -cp build Bot``), and its cells are then played every run."""
    argv, script = shlex.split(command), script_of(command)
    code: dict = {}
    try:
        code["executable_sha256"] = _sha256(Path(shutil.which(argv[0]) or argv[0]).resolve(strict=True))
        if script is not None:
            code["script_sha256"] = _sha256(script)
    except OSError as err:
        return {"unknown": f"{err.filename or argv[0]} cannot be read ({err.strerror or err})"}
    if script is None and len(argv) > 1:
        code["unknown"] = "its command names no file besides its program, so what the program runs cannot be hashed"
    return code


def labels(players: dict[str, dict]) -> dict[str, str]:
    """The name each agent goes by in tables and plots, as in the arena
    (:func:`~manni_agents.evaluation.arena.labels`), from each spec's :func:`identity`."""
    return arena_labels({spec: own_name(who.get("bot_name"), who.get("bot_version")) for spec, who in players.items()})


def _sha256(*files: Path) -> str:
    """One SHA-256 of the files that exist, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    for file in files:
        if file.is_file():
            with file.open("rb") as data:
                while chunk := data.read(1 << 20):
                    digest.update(chunk)
    return digest.hexdigest()


def kept_players(where: Path) -> list[dict] | None:
    """The players a cell was played by (``players.json``), or None if it does not say."""
    try:
        return json.loads((where / "players.json").read_text())["players"]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def wanted(x: str, y: str, rules: Rules, seed: int) -> dict:
    """The settings of cell (x, y) that a kept result.json must have, besides its deals."""
    return same_arena([x, y, y], rules, "deals", seed)


def status(result: dict | None, want: dict, deals: int) -> str:
    """``missing``, ``done`` (these settings, at least ``deals``), ``partial`` (these settings, interrupted) or ``other``."""
    if result is None:
        return "missing"
    s = result["settings"]
    if any(s.get(k) != v for k, v in want.items()) or s.get("units_requested", s["units"]) < deals:
        return "other"  # (a result of more deals than asked for is kept: the cell's evidence is larger)
    return "partial" if "units_requested" in s else "done"


@dataclass(frozen=True)
class Cell:
    x: str
    y: str
    where: Path
    deals: int
    players: list[dict] | None = None  # identity of x and of y (None: not checked, not recorded)
    resume: bool = False  # play on after the deals an interrupted run of the same players kept (:func:`kept_result`)


def plan(pairs: list[tuple[str, str]], rules: Rules, seed: int, out: Path, deals_of: Callable[[str, str], int],
         force: bool = False, say: Callable[[str], None] = print, players: dict[str, dict] | None = None) -> list[Cell]:
    """The cells of ``pairs`` to play; kept ones are announced with ``say``, and so are those
    resumed after an interrupted run's deals and those played again because a player changed
    (``players``: each spec's :func:`identity`; None: the players are not compared). ``ValueError``
    for a kept result of other settings (unless ``force``, which plays every cell in full)."""
    todo = []
    for x, y in pairs:
        who = None if players is None else [players[x], players[y]]
        cell = Cell(x, y, cell_dir(out, rules.variant, x, y), deals_of(x, y), who)
        result = saved(cell.where)
        state = status(result, wanted(x, y, rules, seed), cell.deals)
        if state == "other" and not force:
            raise ValueError(f"{cell.where} holds a result of other settings (agents, rules, deals or seed); "
                             "pass --force to play it again, or choose another --out")
        if state in ("done", "partial") and not force:
            unknown = [f"{one['spec']}: {one['unknown']}" for one in who or () if "unknown" in one]
            same = not unknown and (who is None or kept_players(cell.where) == who)
            kept = result["settings"]["units"]
            if same and state == "done":
                say(f"kept {x} vs {y} ×2 ({cell.deals} deals, seed {seed})")
                continue
            if same and kept < cell.deals and (cell.where / GAMES_FILE).exists():
                say(f"resuming {x} vs {y} ×2: {kept} of its {cell.deals} deals kept from an interrupted run")
                cell = replace(cell, resume=True)
            elif not same:
                why = ("cannot tell whether it changed (" + "; ".join(unknown) + ")" if unknown
                       else _change(kept_players(cell.where), cell.players))
                say(f"playing {x} vs {y} ×2 again: {why}")
        todo.append(cell)
    return todo


def _short(value) -> str:
    """A hash as its first 12 digits, anything else as it is."""
    text = str(value)
    return text[:12] + "…" if len(text) == 64 and all(c in "0123456789abcdef" for c in text) else text


def _change(before: list[dict] | None, now: list[dict]) -> str:
    """What changed between a cell's players and now, in words."""
    if before is None or len(before) != len(now):
        return "its result does not record who played it"
    changes = []
    for old, new in zip(before, now):
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                was, now = (_short(who.get(key)) for who in (old, new))
                changes.append(f"{new['spec']} {key.replace('_', ' ')} {was} → {now}")
    return "; ".join(changes) or "its players changed"


def play(cells: list[Cell], rules: Rules, seed: int, workers: int = 1, progress: bool = True,
         say: Callable[[str], None] = print) -> None:
    """Play ``cells`` and write each one's files. On Ctrl-C, or a stop signal (``kill``, ``timeout``
    and ``docker stop`` send SIGTERM, a closed terminal SIGHUP), the deals finished of the cell under
    way are written too, and :class:`~manni_agents.evaluation.arena.ArenaInterrupted` is raised."""
    with stop_signals():
        for n, cell in enumerate(cells, 1):
            earlier = kept_result(cell.where) if cell.resume else None
            after = f" ({earlier.settings['units']} kept)" if earlier else ""
            say(f"[{n}/{len(cells)}] {cell.x} vs {cell.y} ×2: {cell.deals} deals{after}, seed {seed}")
            try:
                result = run_arena([cell.x, cell.y, cell.y], rules, cell.deals, seed, workers=workers, progress=progress,
                                   earlier=earlier)
            except ArenaInterrupted as stop:
                if stop.result is not None:
                    write_cell(stop.result, cell.where, cell.players)
                raise
            write_cell(result, cell.where, cell.players)


def write_cell(result: ArenaResult, where: Path, players: list[dict] | None = None) -> None:
    """``players.json`` (who played, when known), then the arena's result files and ``games.json``
    (:func:`~manni_agents.evaluation.results.write_outputs`)."""
    where.mkdir(parents=True, exist_ok=True)
    if players is not None:
        write_text(where / "players.json", json.dumps({"players": players}, indent=2) + "\n")
    write_outputs(result, where)


def kept_results(out: Path, agents: list[str], rules: Rules,
                 players: dict[str, dict] | None = None) -> dict[tuple[str, str], dict]:
    """The result.json of every kept cell of ``agents`` played by these ``players`` (None: by
    anyone; ValueError for one of other agents or rules)."""
    results = {}
    for x in agents:
        for y in agents:
            where = cell_dir(out, rules.variant, x, y)
            same = players is None or kept_players(where) == [players[x], players[y]]
            if x != y and same and (result := saved(where)) is not None:
                s = result["settings"]
                if [s["agents"], s["variant"], s["options"]] != [[x, y, y], rules.variant, rules.options()]:
                    raise ValueError(f"{cell_dir(out, rules.variant, x, y)} holds a result of other agents or rules")
                results[x, y] = result
    return results


def cell_text(result: dict | None) -> str:
    """A matrix cell: X's mean deal score, X − Y, and the deals."""
    if result is None:
        return "not played"
    s, score, diff = result["settings"], result["agents"][0]["deal_score"], result["head_to_head"][0]["difference"]
    deals = f"{s['units']:,} of {s['units_requested']:,} deals (interrupted)" if "units_requested" in s else f"{s['units']:,} deals"
    return f"{Interval(**score).text()}<br>X − Y {Interval(**diff).text()}<br>{deals}"


def matrix_lines(agents: list[str], results: dict[tuple[str, str], dict], names: dict[str, str] | None = None) -> list[str]:
    """The Markdown matrix: row X against two copies of column Y (agents by ``names``, else by spec)."""
    names = names or {spec: spec for spec in agents}
    lines = ["| X \\ Y ×2 | " + " | ".join(f"`{names[y]}`" for y in agents) + " |", "|---" * (len(agents) + 1) + "|"]
    for x in agents:
        lines.append(f"| `{names[x]}` | " + " | ".join(cell_text(results.get((x, y))) if x != y else "–" for y in agents) + " |")
    return lines


def command_of(settings: dict) -> str:
    """The ``manni arena`` command that plays a cell with these settings (non-default rule options as flags)."""
    defaults = make_rules(settings["variant"]).options()
    flags = []
    for name, value in settings["options"].items():
        if value != defaults[name]:
            flags += [f"--{name.replace('_', '-')}"] + ([] if value is True else [str(value)])
    deals = settings.get("units_requested", settings["units"])
    return shlex.join(["manni", "arena", *settings["agents"], "--variant", settings["variant"], *flags,
                       "--deals", str(deals), "--seed", str(settings["seed"]), "--workers", str(settings["workers"])])


def command_lines(out: Path, rules: Rules, results: dict[tuple[str, str], dict], base: Path) -> list[str]:
    """The ``manni arena`` command of every cell, linked to its result.md relative to ``base``."""
    lines = ["| cell | command | result |", "|---|---|---|"]
    for (x, y), result in results.items():
        link = cell_dir(out, rules.variant, x, y).relative_to(base).as_posix() + "/result.md"
        lines.append(f"| `{x}` vs `{y}` ×2 | `{command_of(result['settings'])}` | [{link}]({link}) |")
    return lines


# ------------------------------------------------------------------------------------- leaderboard
@dataclass(frozen=True)
class Standing:
    """One agent's line of the leaderboard."""

    spec: str
    label: str  # the name tables and plots use (a bot's own name)
    deal_score: Interval  # mean over its cells of its mean deal score against two copies of the other
    cells: int
    deals: int
    mu: float
    sigma: float
    ordinal: float
    ms_per_move: float
    moves: int
    strikes: int


@dataclass
class Leaderboard:
    variant: str
    settings: dict
    standings: list[Standing]  # best mean deal score first
    matrix: list[str]
    commands: list[str]

    def to_dict(self) -> dict:
        return {"variant": self.variant, "settings": self.settings, "standings": [asdict(s) for s in self.standings]}

    def to_markdown(self) -> str:
        s = self.settings
        lines = [
            f"# League: {self.variant}", "",
            (f"Every agent against two copies of every other (`manni arena X Y Y`), duplicate deals under all 6 "
             f"seatings, seed {s['seed']}, rules {', '.join(f'{k}={v}' for k, v in s['options'].items())}. "
             "Mean deal score: over the agent's cells, each cell its mean against two copies of one other agent "
             "[95% CI]; rating: openskill Plackett-Luce over every game of every cell (ordinal = mu − 3σ)."), "",
            "| rank | agent | mean deal score [95% CI] | mu | sigma | ordinal | ms/move | cells | deals | strikes |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for rank, a in enumerate(self.standings, 1):
            lines.append(f"| {rank} | `{a.label}` | {a.deal_score.text()} | {a.mu:.2f} | {a.sigma:.2f} | {a.ordinal:.2f} | "
                         f"{a.ms_per_move:.3f} | {a.cells} | {a.deals:,} | {a.strikes} |")
        lines += ["", "Row X against two copies of column Y: X's mean deal score [95% CI]; X − Y [95% CI]; deals.", ""]
        lines += self.matrix + [""] + self.commands
        return "\n".join(lines) + "\n"

    def summary(self) -> str:
        """A few lines for the terminal: the standings (the matrix and the commands are in the files)."""
        lines = [f"League {self.variant}: rank, agent, mean deal score [95% CI], rating ordinal, strikes"]
        for rank, a in enumerate(self.standings, 1):
            spec = f" ({a.spec})" if a.label != a.spec else ""
            lines.append(f"{rank:>3}. {a.label}{spec}: {a.deal_score.text()}, ordinal {a.ordinal:.2f}"
                         + (f", {a.strikes} strikes" if a.strikes else ""))
        return "\n".join(lines)

    def plot(self, path: str | Path) -> None:
        """PNG: mean deal score with its 95% CI, and the rating (mu ± 3σ), per agent."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = [_label(a.label) for a in self.standings]
        xs = np.arange(len(names))
        errors = [0.0 if a.deal_score.low is None else a.deal_score.mean - a.deal_score.low for a in self.standings]
        fig, (left, right) = plt.subplots(1, 2, figsize=(max(8, 1.6 * len(names) + 4), 4))
        left.errorbar(xs, [a.deal_score.mean for a in self.standings], yerr=errors, fmt="o", capsize=6)
        left.axhline(0.0, color="grey", linewidth=0.8)
        left.set(xticks=xs, xticklabels=names, ylabel="mean deal score (95% CI)", title="Deal score")
        right.errorbar(xs, [a.mu for a in self.standings], yerr=[3 * a.sigma for a in self.standings], fmt="s", capsize=6)
        right.set(xticks=xs, xticklabels=names, ylabel="openskill mu ± 3σ", title="Rating")
        for axis in (left, right):
            plt.setp(axis.get_xticklabels(), rotation=20, ha="right")
        fig.suptitle(f"League {self.variant}: seed {self.settings['seed']}")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def leaderboard(out: Path, agents: list[str], rules: Rules, seed: int, players: dict[str, dict]) -> Leaderboard:
    """The leaderboard of ``agents`` (``players``: each one's :func:`identity`) from the cells they
    played (see the module docstring)."""
    results = kept_results(out, agents, rules, players)
    names = labels(players)
    ratings = _ratings(agents, [read_games(cell_dir(out, rules.variant, x, y)) for x, y in results])
    standings = []
    for spec in agents:
        own = [r["agents"][0]["deal_score"] for (x, _), r in results.items() if x == spec]
        timed = [a for r in results.values() for a in r["agents"] if a["spec"] == spec]
        moves = sum(a["moves"] for a in timed)
        mu, sigma = ratings[spec]
        standings.append(Standing(
            spec=spec, label=names[spec], deal_score=_combined(own), cells=len(own),
            deals=sum(r["settings"]["units"] for (x, _), r in results.items() if x == spec),
            mu=mu, sigma=sigma, ordinal=mu - 3 * sigma,
            ms_per_move=sum(a["ms_per_move"] * a["moves"] for a in timed) / moves if moves else float("nan"),
            moves=moves, strikes=sum(a.get("strikes", 0) for a in timed)))
    standings.sort(key=lambda a: -a.deal_score.mean if a.cells else math.inf)
    settings = {"agents": agents, "variant": rules.variant, "options": rules.options(), "seed": seed,
                "confidence": "95%, normal approximation over deals, cells combined as independent"}
    return Leaderboard(rules.variant, settings, standings, matrix_lines(agents, results, names),
                       command_lines(out, rules, results, out / rules.variant))


def write_leaderboard(board: Leaderboard, where: Path) -> None:
    where.mkdir(parents=True, exist_ok=True)
    text = json.dumps(board.to_dict(), indent=2) + "\n"
    replace_atomically((where / "leaderboard.json", lambda p: p.write_text(text)),
                       (where / "leaderboard.md", lambda p: p.write_text(board.to_markdown())),
                       (where / "leaderboard.png", board.plot))


def _label(spec: str, keep: int = 28) -> str:
    """A plot label: a long spec (a bot's command line) shortened in the middle."""
    return spec if len(spec) <= keep else f"{spec[:12]}…{spec[-(keep - 13):]}"


def _combined(scores: list[dict]) -> Interval:
    """The mean of independent cell means with its combined 95% CI (None bounds if a cell has none)."""
    if not scores:
        return Interval(float("nan"), None, None)
    mean = float(np.mean([s["mean"] for s in scores]))
    if any(s["low"] is None for s in scores):
        return Interval(mean, None, None)
    half = math.sqrt(sum((s["mean"] - s["low"]) ** 2 for s in scores)) / len(scores)
    return Interval(mean, mean - half, mean + half)


def _ratings(agents: list[str], cells: list[tuple[list[str], list[Game]]]) -> dict[str, tuple[float, float]]:
    """openskill ratings over the cells' games (a cell kept without games.json has none), cells in
    order (see the module docstring)."""
    matches = (([specs[j] for j in g.players], g.score) for specs, games in cells for g in games)
    return openskill_ratings(agents, matches)
