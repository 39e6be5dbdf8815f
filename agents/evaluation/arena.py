"""A fair duplicate arena for three agents.

Luck in Manni is mostly the deal, so every *unit* (one deal, or one whole game in ``mode="games"``)
is played under all 6 seatings of the three agents: the same cards are held by each agent in each
seat, and the deal's luck cancels out of the comparison.

- Unit ``i`` is dealt from a seed derived from ``(seed, i)`` with :class:`numpy.random.SeedSequence`;
  the agent in seat ``k`` of seating ``p`` gets its own generator derived from ``(seed, i, p, k)``.
  Results therefore depend only on ``seed`` and the agents, not on ``workers`` or chunking.
- ``mode="deals"``: a unit is the first deal of a game dealt from the unit seed (dealer drawn from
  that seed too, unless the rules fix it); its score is the deal's points. In the announcement
  variants that deal is one forehand contract choice from a fresh game.
- ``mode="games"``: a unit is a whole game; reported per agent are its mean deal score (final net
  divided by the number of deals) and its game win share (a shared win counts ``1/winners``).

Statistics per distinct agent spec (copies such as ``rule_based rule_based`` are pooled): each unit's
6 seatings (and the spec's seats in them) are averaged first, so the confidence interval is over
independent units: mean ± 1.96 · sd / √n, the normal approximation (slightly narrow below ~30
units; ``None`` with fewer than 2). Head-to-head: the same over the per-unit difference of two
specs' scores. Ratings: openskill's Plackett-Luce model, one match per unit-seating with the three
seats ranked by score, matches in unit then seating order; copies of a spec enter a match as
separate players and the spec's new rating is their mean. Time per move is the wall time inside
``act`` — the only figure that differs between identical runs. Strikes: the fallback moves played for
a failing ``bot:`` agent with ``on_error=fallback`` (:mod:`manni_agents.bots.agent`).

Workers are spawned processes that each build the agents once and play small ranges of units; the
results come back in unit order, so ``records`` grows unit by unit (with one worker, after every
unit). Ctrl-C (``KeyboardInterrupt``) ends the workers at once and raises :class:`ArenaInterrupted`
with the result of the units finished so far (the units whose records are written). Given that
result as ``earlier``, :func:`run_arena` resumes: it plays only the units after it, and since each
unit is seeded on its own, the result equals an uninterrupted run's (but for the time per move).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import multiprocessing
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
from tqdm import tqdm

from manni_agents.base import Policy, close_policies
from manni_agents.evaluation.match import play_game
from manni_env.engine import GameState
from manni_env.interrupts import deferred_interrupt, interrupt_ignored
from manni_env.records import game_record, write_records
from manni_env.rules import Rules

#: Seating ``p`` puts player ``SEATINGS[p][k]`` (an index into the agent list) in seat ``k``.
SEATINGS: tuple[tuple[int, int, int], ...] = tuple(itertools.permutations(range(3)))  # type: ignore[assignment]
MODES = ("deals", "games")
Z95 = 1.959963984540054  # standard normal 97.5% quantile
#: the baseline agents trained policies are measured against
BASELINES = ("random", "rule_based")
#: most units a worker plays per task: the records file and the progress bar advance in such steps
MAX_CHUNK = 8


@dataclass(frozen=True)
class Game:
    """One unit played under one seating. Per-seat tuples are indexed by absolute seat."""

    unit: int
    seating: int
    players: tuple[int, int, int]  # index into the agent list, per seat
    score: tuple[int, int, int]  # deals mode: the deal's points; games mode: final net
    deals: int  # deals played (1 in deals mode)
    win: tuple[float, float, float] | None  # games mode: win share per seat


@dataclass
class _Chunk:
    """What one worker returns for a contiguous range of units."""

    units: int
    games: list[Game]
    records: list[dict]
    seconds: list[float]  # per player index
    moves: list[int]
    strikes: list[int]  # fallback moves played for a failing bot (``bot:...,on_error=fallback``)
    names: list[str | None] = field(default_factory=lambda: [None, None, None])  # :func:`own_name` per player


@dataclass(frozen=True)
class Interval:
    """A mean and its 95% confidence interval (``None`` bounds with fewer than 2 units)."""

    mean: float
    low: float | None
    high: float | None

    @classmethod
    def of(cls, values: list[float]) -> Interval:
        x = np.asarray(values, dtype=float)
        mean = float(x.mean())
        if len(x) < 2:
            return cls(mean, None, None)
        half = Z95 * float(x.std(ddof=1)) / math.sqrt(len(x))
        return cls(mean, mean - half, mean + half)

    def text(self, digits: int = 3) -> str:
        if self.low is None:
            return f"{self.mean:+.{digits}f}"
        return f"{self.mean:+.{digits}f} [{self.low:+.{digits}f}, {self.high:+.{digits}f}]"


@dataclass(frozen=True)
class AgentStats:
    """Results of one distinct agent spec."""

    spec: str
    copies: int
    deal_score: Interval
    win_share: Interval | None
    mu: float
    sigma: float
    ordinal: float
    ms_per_move: float
    moves: int
    label: str  # the name tables and plots give it: its spec, or a bot's own name (:func:`labels`)
    strikes: int = 0  # fallback moves played for a failing bot


@dataclass(frozen=True)
class PairStats:
    """Mean per-unit deal-score difference ``a − b``."""

    a: str
    b: str
    difference: Interval


@dataclass
class ArenaResult:
    """The outcome of :func:`run_arena`; ``games`` lists every game played (not in ``to_dict``)."""

    settings: dict
    agents: list[AgentStats]
    head_to_head: list[PairStats]
    games: list[Game] = field(repr=False, default_factory=list)

    def to_dict(self) -> dict:
        """JSON-serializable summary with the settings that produced it."""
        return {
            "settings": self.settings,
            "agents": [asdict(a) for a in self.agents],
            "head_to_head": [asdict(p) for p in self.head_to_head],
        }

    @classmethod
    def from_dict(cls, data: dict, games: list[Game]) -> ArenaResult:
        """The result :meth:`to_dict` gave, with its ``games`` (which ``to_dict`` leaves out)."""
        def interval(value: dict | None) -> Interval | None:
            return None if value is None else Interval(**value)

        agents = [AgentStats(**{"label": a["spec"], **a, "deal_score": interval(a["deal_score"]),
                                "win_share": interval(a["win_share"])}) for a in data["agents"]]
        pairs = [PairStats(p["a"], p["b"], interval(p["difference"])) for p in data["head_to_head"]]
        return cls(data["settings"], agents, pairs, games)

    def to_markdown(self) -> str:
        """Markdown: a settings line, the per-agent table and the head-to-head table."""
        s = self.settings
        unit = "deals" if s["mode"] == "deals" else "games"
        options = ", ".join(f"{k}={v}" for k, v in s["options"].items())
        stopped = f" (interrupted: {s['units']} of {s['units_requested']})" if "units_requested" in s else ""
        lines = [
            f"**{s['variant']}** ({options}) · {s['units']} duplicate {unit}{stopped} × 6 seatings · seed {s['seed']} · "
            f"agents {' '.join(s['agents'])}",
            "",
            "| agent | copies | mean deal score [95% CI] | win share [95% CI] | mu | sigma | ordinal | ms/move |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for a in self.agents:
            win = "–" if a.win_share is None else a.win_share.text()
            lines.append(
                f"| {a.label} | {a.copies} | {a.deal_score.text()} | {win} | {a.mu:.2f} | {a.sigma:.2f} | "
                f"{a.ordinal:.2f} | {a.ms_per_move:.3f} |"
            )
        named = [f"{a.label} is `{a.spec}`" for a in self.agents if a.label != a.spec]
        if named:
            lines += ["", f"Bots by the name they give themselves: {'; '.join(named)}"]
        struck = [f"{a.label} {a.strikes} of {a.moves} moves" for a in self.agents if a.strikes]
        if struck:
            lines += ["", f"Strikes (a failing bot's moves played by the fallback): {'; '.join(struck)}"]
        if self.head_to_head:
            label = {a.spec: a.label for a in self.agents}
            lines += ["", "| head to head (a − b) | mean deal-score difference [95% CI] |", "|---|---|"]
            lines += [f"| {label[p.a]} − {label[p.b]} | {p.difference.text()} |" for p in self.head_to_head]
        return "\n".join(lines) + "\n"

    def plot(self, path: str | Path) -> None:
        """PNG: mean deal score with its 95% CI per agent, and the openskill rating (mu ± 3σ)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = [a.label for a in self.agents]
        xs = np.arange(len(names))
        means = [a.deal_score.mean for a in self.agents]
        errors = [0.0 if a.deal_score.low is None else a.deal_score.mean - a.deal_score.low for a in self.agents]
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
        left.errorbar(xs, means, yerr=errors, fmt="o", capsize=6)
        left.axhline(0.0, color="grey", linewidth=0.8)
        left.set(xlim=(-0.5, len(names) - 0.5), xticks=xs, xticklabels=names, ylabel="mean deal score (95% CI)", title="Deal score")
        right.errorbar(xs, [a.mu for a in self.agents], yerr=[3 * a.sigma for a in self.agents], fmt="s", capsize=6)
        right.set(xlim=(-0.5, len(names) - 0.5), xticks=xs, xticklabels=names, ylabel="openskill mu ± 3σ (low end = ordinal)", title="Rating")
        s = self.settings
        fig.suptitle(f"{s['variant']}: {s['units']} duplicate {s['mode']} × 6 seatings, seed {s['seed']}")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)


def own_name(name: str | None, version: str | None) -> str | None:
    """The name a bot gives itself in ``hello`` with its version (``simple-python 2``); None for
    no name (an agent that is not a bot, or a bot not started yet)."""
    return None if name is None else name + (f" {version}" if version else "")


def labels(own: dict[str, str | None]) -> dict[str, str]:
    """The name each agent goes by in the arena's and the league's tables and plots, by spec: a
    bot's own name (``own``: :func:`own_name` by spec, None for other agents), unless two agents
    would share a name; else the spec."""
    names = {spec: name or spec for spec, name in own.items()}
    taken = list(names.values())
    return {spec: name if taken.count(name) == 1 else spec for spec, name in names.items()}


def unit_seed(seed: int, unit: int) -> int:
    """The game seed of duplicate unit ``unit``."""
    return int(np.random.SeedSequence(seed, spawn_key=(unit,)).generate_state(1)[0])


def agent_rng(seed: int, unit: int, seating: int, seat: int) -> np.random.Generator:
    """The owned generator of the agent in ``seat`` of ``seating`` for unit ``unit``."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(unit, 1 + 3 * seating + seat)))


def against_baselines(spec: str, rules: Rules, deals: int, seed: int, workers: int = 1,
                      progress: bool = False) -> dict[str, ArenaResult]:
    """Duplicate arena (deals mode) of ``spec`` against two copies of each of :data:`BASELINES`."""
    return {b: run_arena([spec, b, b], rules, deals, seed, workers=workers, progress=progress) for b in BASELINES}


class ArenaInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run_arena`: the workers are stopped; ``result`` covers the ``units``
    finished (of ``requested``), whose records are written (``None`` if no unit finished)."""

    def __init__(self, units: int, requested: int, result: ArenaResult | None):
        super().__init__(f"interrupted after {units} of {requested} duplicate units")
        self.units, self.requested, self.result = units, requested, result


def run_arena(
    agents: list[str],
    rules: Rules,
    deals: int,
    seed: int,
    workers: int = 1,
    records: str | Path | None = None,
    progress: bool = True,
    mode: str = "deals",
    earlier: ArenaResult | None = None,
) -> ArenaResult:
    """Play ``deals`` duplicate units (deals, or games when ``mode="games"``) of three agent specs
    under all 6 seatings; see the module docstring. ``records`` appends every game played, in unit
    then seating order, as a ``manni-record/1`` line (players = specs in seat order) as soon as its
    unit and all earlier ones are done. ``earlier`` resumes an interrupted run: the result of its
    first units (:attr:`ArenaInterrupted.result`, or one read back with :meth:`ArenaResult.from_dict`),
    which are not played again; ``ValueError`` if it is not of these agents, rules, mode and seed,
    or not units ``0..n-1`` with ``n < deals``. Raises :class:`ArenaInterrupted` on Ctrl-C."""
    _check_arguments(agents, deals, seed, workers, mode)
    chunks: list[_Chunk] = [] if earlier is None else [_kept_chunk(earlier, agents, rules, seed, mode, deals)]
    start = sum(c.units for c in chunks)
    for spec in agents:  # fail fast, in this process, on a bad spec or one that cannot play these rules
        _make_agent(spec, rules)
    if records is not None:
        Path(records).parent.mkdir(parents=True, exist_ok=True)
    try:
        with tqdm(total=deals, initial=start, unit=mode[:-1], desc="arena", disable=not progress) as bar, \
                _chunk_results(agents, rules, seed, mode, start, deals, workers, records is not None) as results:
            for chunk in results:
                with deferred_interrupt():  # the records on disk and the units counted stay equal
                    if records is not None:
                        write_records(records, chunk.records)
                        chunk.records = []
                    chunks.append(chunk)
                bar.update(chunk.units)
    except KeyboardInterrupt:
        done = sum(c.units for c in chunks)
        partial = _result(agents, rules, seed, workers, mode, chunks, requested=deals) if done else None
        raise ArenaInterrupted(done, deals, partial) from None
    return _result(agents, rules, seed, workers, mode, chunks)


def _result(agents: list[str], rules: Rules, seed: int, workers: int, mode: str, chunks: list[_Chunk],
            requested: int | None = None) -> ArenaResult:
    """The statistics of the units in ``chunks``; ``requested`` marks a run stopped early."""
    games = [g for c in chunks for g in c.games]
    seconds = [sum(c.seconds[j] for c in chunks) for j in range(3)]
    moves = [sum(c.moves[j] for c in chunks) for j in range(3)]
    strikes = [sum(c.strikes[j] for c in chunks) for j in range(3)]
    own = {spec: None for spec in agents}
    for chunk in chunks:
        own.update((spec, name) for spec, name in zip(agents, chunk.names) if name is not None)
    settings = {
        "agents": list(agents),
        "variant": rules.variant,
        "options": rules.options(),
        "mode": mode,
        "units": sum(c.units for c in chunks),
        "seed": seed,
        "workers": workers,
        "confidence": "95%, normal approximation over per-unit means",
    }
    if requested is not None:
        settings["units_requested"] = requested
    stats, pairs = _summarize(agents, games, seconds, moves, strikes, mode, labels(own))
    return ArenaResult(settings, stats, pairs, games)


def same_arena(agents: list[str], rules: Rules, mode: str, seed: int) -> dict:
    """The settings two results share when their units are the same games: agents, rules, mode, seed."""
    return {"agents": list(agents), "variant": rules.variant, "options": rules.options(), "mode": mode, "seed": seed}


def _kept_chunk(earlier: ArenaResult, agents: list[str], rules: Rules, seed: int, mode: str, deals: int) -> _Chunk:
    """``earlier``'s units as one chunk, each spec's time and moves on its first player index."""
    s = earlier.settings
    if any(s.get(key) != value for key, value in same_arena(agents, rules, mode, seed).items()):
        raise ValueError("the earlier result to resume is of other agents, rules, mode or seed")
    units = s["units"]
    if not 0 < units < deals:
        raise ValueError(f"the earlier result to resume holds {units} units; "
                         f"it needs 1 to {deals - 1} of the {deals} asked for")
    expected = [(u, p, SEATINGS[p]) for u in range(units) for p in range(6)]
    if [(g.unit, g.seating, g.players) for g in earlier.games] != expected:
        raise ValueError(f"the earlier result's games are not units 0 to {units - 1} under all 6 seatings, in order")
    chunk = _Chunk(units, list(earlier.games), [], [0.0, 0.0, 0.0], [0, 0, 0], [0, 0, 0])
    for a in earlier.agents:
        j = agents.index(a.spec)
        chunk.seconds[j], chunk.moves[j], chunk.strikes[j] = a.ms_per_move * a.moves / 1000.0, a.moves, a.strikes
        chunk.names[j] = a.label if a.label != a.spec else None
    return chunk


@contextlib.contextmanager
def _chunk_results(specs: list[str], rules: Rules, seed: int, mode: str, first: int, deals: int, workers: int,
                   want_records: bool) -> Iterator[Iterator[_Chunk]]:
    """The played chunks of units ``first..deals-1`` in unit order: one unit at a time in this process,
    or up to :data:`MAX_CHUNK` units per task in ``workers`` processes (terminated on leaving)."""
    if workers == 1:
        players = [_make_agent(spec) for spec in specs]
        try:
            yield (_play_units(players, specs, rules, seed, mode, unit, unit + 1, want_records)
                   for unit in range(first, deals))
        finally:
            close_policies(players)
        return
    size = max(1, min(math.ceil((deals - first) / (workers * 8)), MAX_CHUNK))
    spans = [(start, min(start + size, deals)) for start in range(first, deals, size)]
    task = functools.partial(_play_in_worker, specs, rules, seed, mode, want_records)
    with worker_pool(min(workers, len(spans))) as pool:
        yield pool.imap(task, spans)


#: seconds :func:`worker_pool` waits for a pool to stop before it leaves it to stop in the background
POOL_STOP_TIMEOUT = 5.0


@contextlib.contextmanager
def worker_pool(processes: int) -> Iterator[multiprocessing.pool.Pool]:
    """Spawned worker processes that ignore Ctrl-C (this process stops them), terminated on leaving,
    also on Ctrl-C or an error, within :data:`POOL_STOP_TIMEOUT` seconds."""
    with interrupt_ignored():
        pool = multiprocessing.get_context("spawn").Pool(processes)
    try:
        yield pool
    finally:
        stop_pool(pool, POOL_STOP_TIMEOUT)


def stop_pool(pool: multiprocessing.pool.Pool, timeout: float) -> None:
    """``pool.terminate()``, waited for at most ``timeout`` seconds. Its workers get SIGTERM early in
    it, but its threads can then wait forever for a lock that a worker held when it was stopped (a
    large result half written to a pipe nobody reads any more): past the timeout its workers are
    killed and the rest is left to a daemon thread, so an interrupted run still ends."""
    stopper = threading.Thread(target=pool.terminate, name="stop-pool", daemon=True)
    stopper.start()
    stopper.join(timeout)
    if stopper.is_alive():
        for worker in pool._pool:  # (the pool's own list of its worker processes)
            worker.kill()


#: the agents of this worker process, built for its first task (a pool lives for one run only)
_worker_players: list[Policy] | None = None


def _play_in_worker(specs: list[str], rules: Rules, seed: int, mode: str, want_records: bool,
                    span: tuple[int, int]) -> _Chunk:
    global _worker_players
    if _worker_players is None:
        _worker_players = [_make_agent(spec) for spec in specs]
    return _play_units(_worker_players, specs, rules, seed, mode, *span, want_records)


def _check_arguments(agents: list[str], deals: int, seed: int, workers: int, mode: str) -> None:
    if len(agents) != 3:
        raise ValueError(f"the arena needs exactly 3 agent specs (copies allowed), got {len(agents)}: {agents}")
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    for name, value, low in (("deals", deals, 1), ("seed", seed, 0), ("workers", workers, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"{name} must be an integer ≥ {low}, got {value!r}")


def _make_agent(spec: str, rules: Rules | None = None) -> Policy:
    from manni_agents.registry import make_agent

    return make_agent(spec, rules)


def _play_units(
    players: list[Policy], specs: list[str], rules: Rules, seed: int, mode: str, start: int, stop: int,
    want_records: bool,
) -> _Chunk:
    """Play units ``start..stop-1`` under all seatings with ``players`` (the agents of ``specs``)."""
    chunk = _Chunk(stop - start, [], [], [0.0, 0.0, 0.0], [0, 0, 0], [0, 0, 0])
    struck = [getattr(player, "strikes", 0) for player in players]
    for unit in range(start, stop):
        game_seed = unit_seed(seed, unit)
        for p, seating in enumerate(SEATINGS):
            state = GameState(rules, seed=game_seed)
            rngs = [agent_rng(seed, unit, p, k) for k in range(3)]
            times = play_game(state, [players[j] for j in seating], rngs, max_deals=1 if mode == "deals" else None)
            for k, j in enumerate(seating):
                chunk.seconds[j] += times.seconds[k]
                chunk.moves[j] += times.moves[k]
            if mode == "deals":
                score, win = state.rounds[0].points, None
            else:
                score = tuple(state.totals)
                win = tuple(1.0 / len(state.winners) if k in state.winners else 0.0 for k in range(3))
            chunk.games.append(Game(unit, p, seating, tuple(score), len(state.rounds), win))
            if want_records:
                chunk.records.append(game_record(state, players=[specs[j] for j in seating]))
    chunk.strikes = [getattr(player, "strikes", 0) - before for player, before in zip(players, struck)]
    chunk.names = [own_name(getattr(p, "bot_name", None), getattr(p, "bot_version", None)) for p in players]
    return chunk


def _summarize(
    specs: list[str], games: list[Game], seconds: list[float], moves: list[int], strikes: list[int], mode: str,
    names: dict[str, str],
) -> tuple[list[AgentStats], list[PairStats]]:
    distinct = list(dict.fromkeys(specs))
    units = sorted({g.unit for g in games})
    # per unit and spec: summed score, deals and win share over the spec's seats in the 6 seatings
    total = {s: np.zeros(len(units)) for s in distinct}
    dealt = {s: np.zeros(len(units)) for s in distinct}
    wins = {s: np.zeros(len(units)) for s in distinct}
    seats = {s: np.zeros(len(units)) for s in distinct}
    index = {u: n for n, u in enumerate(units)}
    for g in games:
        n = index[g.unit]
        for k, j in enumerate(g.players):
            s = specs[j]
            total[s][n] += g.score[k]
            dealt[s][n] += g.deals
            seats[s][n] += 1
            if g.win is not None:
                wins[s][n] += g.win[k]
    per_unit = {s: total[s] / dealt[s] for s in distinct}
    ratings = _ratings(specs, games)
    stats = []
    for s in distinct:
        idx = [j for j in range(3) if specs[j] == s]
        n_moves = sum(moves[j] for j in idx)
        ms = 1000.0 * sum(seconds[j] for j in idx) / max(1, n_moves)
        mu, sigma = ratings[s]
        stats.append(
            AgentStats(
                spec=s,
                copies=len(idx),
                deal_score=Interval.of(per_unit[s].tolist()),
                win_share=Interval.of((wins[s] / seats[s]).tolist()) if mode == "games" else None,
                mu=mu,
                sigma=sigma,
                ordinal=mu - 3.0 * sigma,
                ms_per_move=ms,
                moves=n_moves,
                strikes=sum(strikes[j] for j in idx),
                label=names[s],
            )
        )
    pairs = [
        PairStats(a, b, Interval.of((per_unit[a] - per_unit[b]).tolist()))
        for a, b in itertools.combinations(distinct, 2)
    ]
    return stats, pairs


def _ratings(specs: list[str], games: list[Game]) -> dict[str, tuple[float, float]]:
    """openskill Plackett-Luce (mu, sigma) per distinct spec; one match per game, seats ranked by score."""
    return openskill_ratings(dict.fromkeys(specs), (([specs[j] for j in g.players], g.score) for g in games))


def openskill_ratings(specs: Iterable[str], matches: Iterable[tuple[list[str], Sequence[float]]]
                      ) -> dict[str, tuple[float, float]]:
    """openskill Plackett-Luce (mu, sigma) of ``specs`` after ``matches`` in order, each the specs in
    seat order and their scores; copies of a spec in a match play as separate players and the spec's
    new rating is their mean."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = {s: model.rating(name=s) for s in specs}
    for seat_specs, score in matches:
        teams = [[model.rating(mu=ratings[s].mu, sigma=ratings[s].sigma)] for s in seat_specs]
        updated = model.rate(teams, scores=[float(x) for x in score])
        for s in dict.fromkeys(seat_specs):
            new = [team[0] for team, owner in zip(updated, seat_specs) if owner == s]
            ratings[s] = model.rating(mu=float(np.mean([r.mu for r in new])), sigma=float(np.mean([r.sigma for r in new])), name=s)
    return {s: (float(r.mu), float(r.sigma)) for s, r in ratings.items()}
