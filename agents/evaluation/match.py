"""The one game loop shared by the arena and terminal play: seats ask their policies in turn; and
:func:`simulate_games`, seeded games between agents as records (``manni simulate``).

Every policy sees only its seat's :class:`~manni_env.view.SeatView` and its own generator; the
loop times each ``act`` call so the arena can report time per move.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from tqdm import tqdm  # the plain bar: tqdm.auto wants ipywidgets in a notebook, and warns without

from manni_agents.base import Policy
from manni_env.engine import GameState, IllegalActionError, Phase
from manni_env.records import game_record
from manni_env.rules import Rules

#: ``observer(state, seat, phase, action)`` after each applied action (``phase``: before it).
Observer = Callable[[GameState, int, Phase, int], None]


@dataclass
class MoveTimes:
    """Seconds spent inside ``act`` and number of moves, per seat."""

    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])
    moves: list[int] = field(default_factory=lambda: [0, 0, 0])


def play_game(
    state: GameState,
    policies: Sequence[Policy],
    rngs: Sequence[np.random.Generator],
    max_deals: int | None = None,
    observer: Observer | None = None,
) -> MoveTimes:
    """Play ``state`` in place with ``policies[seat]`` until the game ends or ``max_deals`` deals
    are complete. Each policy is ``reset()`` first and, if it has ``deal_over``, told of every
    finished deal (see :class:`~manni_agents.base.Policy`). An illegal action from a policy raises
    :class:`~manni_env.engine.IllegalActionError` naming the policy."""
    for policy in policies:
        policy.reset()
    times = MoveTimes()
    while not state.finished and (max_deals is None or len(state.rounds) < max_deals):
        seat, phase, deals = state.to_move, state.phase, len(state.rounds)
        view = state.view(seat)
        start = time.perf_counter()
        action = policies[seat].act(view, rngs[seat])
        times.seconds[seat] += time.perf_counter() - start
        times.moves[seat] += 1
        try:
            state.apply(action)
        except IllegalActionError as err:
            name = getattr(policies[seat], "name", type(policies[seat]).__name__)
            raise IllegalActionError(f"policy {name!r} in seat {seat}: {err}") from None
        if observer is not None:
            observer(state, seat, phase, action)
        if len(state.rounds) > deals:
            _report_deal(state, policies)
    return times


def _report_deal(state: GameState, policies: Sequence[Policy]) -> None:
    """``deal_over(seat, result, winners)`` of each policy that has it (``winners``: None unless the game is over)."""
    winners = tuple(state.winners) if state.finished else None
    for seat, policy in enumerate(policies):
        hook = getattr(policy, "deal_over", None)
        if hook is not None:
            hook(seat, state.rounds[-1], winners)


def simulate_games(
    rules: Rules, policies: Sequence, games: int, seed: int, players: Sequence[str], progress: bool = False
) -> Iterator[dict]:
    """Play ``games`` games and yield each game's record (``manni simulate``). Seeds: game ``i`` uses
    ``child = numpy.random.SeedSequence(seed).spawn(games)[i]``; its deals come from
    ``GameState(rules, seed=int(child.generate_state(1)[0]))`` (that 32-bit seed is the record's
    ``seed``) and the agent in seat ``k`` acts with ``default_rng(child.spawn(3)[k])``. Game ``i`` is
    therefore the same whatever ``games`` is, and the same on every run."""
    for child in tqdm(np.random.SeedSequence(seed).spawn(games), desc="games", unit="game", disable=not progress):
        state = GameState(rules, seed=int(child.generate_state(1)[0]))
        play_game(state, policies, [np.random.default_rng(s) for s in child.spawn(3)])
        yield game_record(state, players=players)

