"""The ``ismcts`` agent: OpenSpiel's Information Set MCTS bot playing Manni.

For a decision with more than one legal action the agent runs OpenSpiel's
:class:`~open_spiel.python.algorithms.ismcts.ISMCTSBot` on the OpenSpiel game of
:mod:`manni_env.openspiel_game` (``episode="deal"``: the search ends with the current deal and
maximizes the seat's deal points):

- **Determinizations**: the root and every simulation start from a world drawn by the belief
  sampler (:func:`manni_agents.sampler.sample_worlds` on the seat's view; the bot's resampler, i.e.
  OpenSpiel's ``resample_from_infostate``), wrapped by ``ManniGame.state_from``. Tree nodes are
  keyed by each player's information state string, so a node is shared by every world in which the
  player on turn knows the same.
- **Leaves**: OpenSpiel's :class:`~open_spiel.python.algorithms.mcts.RandomRolloutEvaluator`
  (random play to the end of the deal), ``rollouts`` per leaf.
- **Choice**: the most visited action (ties broken at random).
- **Randomness**: OpenSpiel's bots take a ``numpy.random.RandomState``; one is seeded from the
  agent's generator at each decision, so arena runs are reproducible.

Every phase is searched, the Hornafjarðarmanni exchange too (one card at a time). Needs the
``openspiel`` extra. Spec: ``ismcts``, ``ismcts:iterations=400,uct_c=4,rollouts=2``.
"""

from __future__ import annotations

import functools

import numpy as np

from manni_agents.base import legal_actions_of
from manni_agents.sampler import sample_worlds
from manni_agents.spec_options import parse_options, positive_float, positive_int
from manni_env.rules import Rules
from manni_env.view import SeatView


def make_ismcts_agent(arg: str | None) -> ISMCTSAgent:
    """Registry factory: ``ismcts[:iterations=N,uct_c=C,rollouts=R]``."""
    options = parse_options(arg, {"iterations": positive_int, "uct_c": positive_float, "rollouts": positive_int})
    return ISMCTSAgent(**options)


class ISMCTSAgent:
    """OpenSpiel's ISMCTS over sampled worlds (see the module docstring)."""

    def __init__(self, iterations: int = 100, uct_c: float = 2.0, rollouts: int = 1) -> None:
        for name, value in (("iterations", iterations), ("rollouts", rollouts)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not uct_c > 0:
            raise ValueError(f"uct_c must be positive, got {uct_c!r}")
        try:
            import pyspiel  # noqa: F401
        except ImportError:
            raise ValueError("the ismcts agent needs OpenSpiel: pip install open_spiel (the 'openspiel' extra)") from None
        self.iterations = iterations
        self.uct_c = uct_c
        self.rollouts = rollouts
        self.name = "ismcts"

    def reset(self) -> None:
        """Nothing to forget between games (each decision builds a new search tree)."""

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_actions_of(view)
        if len(legal) == 1:
            return legal[0]
        from open_spiel.python.algorithms import ismcts, mcts

        game = _deal_game(view.rules)
        random_state = np.random.RandomState(int(rng.integers(2**31)))
        bot = ismcts.ISMCTSBot(
            game, mcts.RandomRolloutEvaluator(self.rollouts, random_state), self.uct_c, self.iterations,
            random_state=random_state, final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
        )
        bot.set_resampler(lambda state, player: game.state_from(sample_worlds(view, rng, 1)[0]))
        action = int(bot.step(game.state_from(sample_worlds(view, rng, 1)[0])))
        if action not in legal:  # cannot happen: the root's legal actions are the view's
            raise RuntimeError(f"ISMCTS chose {action}, not one of the legal actions {legal}")
        return action


@functools.lru_cache(maxsize=8)
def _deal_game(rules: Rules):
    """The OpenSpiel game of ``rules`` with one-deal episodes (cached: loading builds encoders)."""
    from manni_env.openspiel_game import load_game

    options = {k: (-1 if v is None else v) for k, v in rules.options().items()}
    return load_game(rules.variant, **options, episode="deal")
