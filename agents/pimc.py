"""The ``pimc`` agent: Perfect-Information Monte Carlo search.

For a decision with more than one legal action, sample ``worlds`` full states consistent with the
seat's view (:func:`manni_agents.sampler.sample_worlds`; the same worlds for every action), apply each
action in each world, play the deal out with a fast rollout policy, and choose the action with
the best mean outcome (ties: the lowest action number).

- **Outcome**: the acting seat's deal points minus the mean of the two others' (at the end of the
  deal, from :meth:`GameState.deal_points`; the rollout stops there and never starts the next
  deal). In the zero-sum variants this ranks actions exactly like the seat's own points; in Basic
  Manni with the default ``max(0, t − 4)`` scoring it also values keeping opponents below five.
- **Rollout**: ``rule_based`` (default; it plays from each seat's information in the world — its
  hand, all played cards, its own discards and the shown voids — as it would through that seat's
  view) or ``random``. The last trick is forced and is scored directly.
- **Which decisions are searched**: card play, the Basic swap and the announcement. The
  Hornafjarðarmanni exchange and the announcement discards (sequences of card choices) and the
  Manni pickup (taking is weakly dominant) are delegated to :class:`manni_agents.rule_based.RuleBasedAgent`.
- **Budget**: ``worlds`` (default 16) sampled worlds per decision; with ``time_budget`` seconds,
  worlds are evaluated one at a time until the budget is spent (at least one world; at most
  ``worlds``). A time budget makes the choice depend on machine speed, so it is not reproducible.

Spec: ``pimc``, ``pimc:worlds=32``, ``pimc:worlds=64,rollout=random,time_budget=0.5``.
"""

from __future__ import annotations

import time

import numpy as np

from manni_agents.base import legal_actions_of
from manni_agents.rule_based import RuleBasedAgent, choose_card
from manni_agents.sampler import sample_worlds
from manni_agents.spec_options import check_choice, check_worlds, one_of, parse_options, positive_float, positive_int
from manni_env.engine import GameState, Phase
from manni_env.episodes import relative_points
from manni_env.view import SeatView

ROLLOUTS = ("rule_based", "random")
_DELEGATED = (Phase.EXCHANGE, Phase.DISCARD, Phase.PICKUP)


def make_pimc_agent(arg: str | None) -> PIMCAgent:
    """Registry factory: ``pimc[:worlds=N,rollout=rule_based|random,time_budget=SECONDS]``."""
    options = parse_options(arg, {"worlds": positive_int, "rollout": one_of("rollout", ROLLOUTS),
                                  "time_budget": positive_float})
    return PIMCAgent(**options)


class PIMCAgent:
    """Perfect-Information Monte Carlo search over sampled worlds (see the module docstring)."""

    def __init__(self, worlds: int = 16, rollout: str = "rule_based", time_budget: float | None = None) -> None:
        check_worlds(worlds)
        check_choice("rollout", rollout, ROLLOUTS)
        if time_budget is not None and not time_budget > 0:
            raise ValueError(f"time_budget must be a positive number of seconds, got {time_budget!r}")
        self.worlds = worlds
        self.rollout = rollout
        self.time_budget = time_budget
        self.name = "pimc"
        self._rule_based = RuleBasedAgent()

    def reset(self) -> None:
        """Nothing to forget between games."""

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_actions_of(view)
        if len(legal) == 1:
            return legal[0]
        if view.phase in _DELEGATED:
            return self._rule_based.act(view, rng)
        return self.evaluate(view, rng)[0]

    def evaluate(self, view: SeatView, rng: np.random.Generator) -> tuple[int, dict[int, float], int]:
        """The chosen action, the mean outcome of every legal action and the worlds used."""
        legal = view.legal_actions
        deadline = None if self.time_budget is None else time.perf_counter() + self.time_budget
        totals = dict.fromkeys(legal, 0.0)
        used = 0
        worlds = sample_worlds(view, rng, self.worlds if deadline is None else 1)
        while True:
            for world in worlds:
                for action in legal:
                    state = world.clone()
                    state.apply(action)
                    totals[action] += self._play_out(state, view.seat, rng)
                used += 1
            if deadline is None or used >= self.worlds or time.perf_counter() >= deadline:
                break
            worlds = sample_worlds(view, rng, 1)
        means = {a: totals[a] / used for a in legal}
        best = max(legal, key=lambda a: (means[a], -a))
        return best, means, used

    def _play_out(self, state: GameState, seat: int, rng: np.random.Generator) -> float:
        """Play ``state`` to the end of its deal; the outcome for ``seat``."""
        rules = state.rules
        last_trick = rules.hand_size - 1
        pack = rules.pack
        use_rules = self.rollout == "rule_based"
        while True:
            phase = state.phase
            if phase != Phase.PLAY:  # a rollout through the exchange / announcement
                v = state.view(state.to_move)
                state.apply(self._rule_based.act(v, rng) if use_rules else _random_action(v.legal_actions, rng))
                continue
            if sum(state.tricks_won) == last_trick:
                break
            if use_rules:
                s = state.to_move
                played = state.played
                gone = played[0] | played[1] | played[2] | state.discards_mask(s)
                c = state.contract
                card = choose_card(state.hand_mask(s), s, state.trick, state.led_suit, c.trump, c.nullo, gone,
                                   state.voids, pack)
            else:
                card = _random_action(state.legal_actions(), rng)
            state.apply(card)
        # the last trick is forced: each seat still to play holds exactly one card
        points = state.last_trick_points()
        return float(relative_points(points)[seat])


def _random_action(legal, rng: np.random.Generator) -> int:
    return legal[int(rng.integers(len(legal)))]
