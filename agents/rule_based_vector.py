"""The ``rule_based`` policy for every game of a :class:`~manni_env.vector.VectorManni` at once.

``VectorRuleBased().act(venv, games)`` returns, for each game ``g`` of ``games`` (default: all),
the action :class:`agents.rule_based.RuleBasedAgent` chooses on ``venv.view(g, venv.to_move[g])``
— the same action in every state (a test plays thousands of deals of both variants against the
scalar agent). With numba (the ``fast`` extra) one compiled loop over the games computes it from
the env's state arrays (:mod:`agents.rule_based_numba`); without numba, or with
``backend="python"``, it asks the scalar agent game by game through ``venv.view`` (correct, slow).

**What it reads, and why that is no leak.** For game ``g`` and the seat on turn ``s``, exactly
the fields of ``venv.view(g, s)`` that the scalar agent uses:

- ``hands[g, s]``, ``discards[g, s]``: the seat's own hand and own discards (the view's ``hand``,
  ``discards``); never another seat's row;
- ``pending[g, :n_pending[g]]`` and ``exchange_limit(g)``: the seat's own exchange choices so far
  and its remaining allowance (the view's ``pending`` and ``exchange_limit``, given to the seat on
  turn, which ``s`` is);
- ``played[g]`` (all three seats), ``voids[g]``, ``trick[g, :trick_len[g]]``, ``led_suit[g]``:
  cards played and voids shown, public to every seat (the view's ``played``, ``voids``, ``trick``);
- ``phase``, ``to_move``, ``kind``, ``trump``: public (the contract follows from the cut card).

Opponents' hands, their discards and the undrawn Manni (``hands[g, s']``, ``discards[g, s']``,
``manni``, ``drawn`` of others) are never read.

Speed (``-m benchmarks``-free measurement in this module's tests' style, one core, N = 1024
Hornafjarðarmanni games under random play): see the ``measure`` note at the end of the README
section on the vector env; the compiled policy decides hundreds of times faster than the loop of
``RuleBasedAgent.act(venv.view(...))``.
"""

from __future__ import annotations

import numpy as np

from agents.rule_based import RuleBasedAgent, mean_estimate
from manni_env.vector import _KINDS, VectorManni

BACKENDS = ("auto", "numba", "python")


def resolve_backend(backend: str) -> str:
    """``numba`` (raises if numba is not installed), ``python``, or ``auto`` (numba when installed)."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if backend == "python":
        return backend
    try:
        import numba  # noqa: F401
    except ImportError:
        if backend == "numba":
            raise ValueError("backend 'numba' needs numba: pip install numba (the 'fast' extra)") from None
        return "python"
    return "numba"


class VectorRuleBased:
    """The ``rule_based`` agent acting for the seats on turn of a vector env (see the module docstring)."""

    def __init__(self, backend: str = "auto") -> None:
        self.name = "rule_based"
        self.backend = resolve_backend(backend)
        self._agent = RuleBasedAgent()
        self._means: dict[str, np.ndarray] = {}
        self._kernel = None
        if self.backend == "numba":
            from agents.rule_based_numba import act_kernel

            self._kernel = act_kernel

    def act(self, venv: VectorManni, games: np.ndarray | None = None) -> np.ndarray:
        """Actions (int64) of the seats on turn (``venv.to_move``) in ``games`` (default: all)."""
        games = np.arange(venv.num_envs) if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
        if games.size and (games.min() < 0 or games.max() >= venv.num_envs):
            raise ValueError(f"games must be indices in 0..{venv.num_envs - 1}")
        if self._kernel is None:
            return np.array([self._agent.act(venv.view(g, int(venv.to_move[g]))) for g in games.tolist()],
                            dtype=np.int64)
        out = np.empty(games.size, np.int64)
        rules = venv.rules
        self._kernel(games, venv.exchange_limit(games), venv.phase, venv.to_move, venv.hands, venv.discards,
                     venv.played, venv.voids, venv.trick, venv.trick_len, venv.led_suit, venv.kind, venv.trump,
                     venv.pending, venv.n_pending, rules.pack, rules.hand_size, self._mean_table(venv), out)
        return out

    def _mean_table(self, venv: VectorManni) -> np.ndarray:
        """``mean_estimate`` by the env's contract kind index (NaN for kinds the variant never plays)."""
        rules = venv.rules
        if rules.variant not in self._means:
            kinds = _KINDS if venv.horn else ("trump",)
            self._means[rules.variant] = np.array(
                [mean_estimate(k, rules.pack, rules.hand_size) if k in kinds else np.nan for k in _KINDS])
        return self._means[rules.variant]
