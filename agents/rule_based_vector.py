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

Exchange plans are memoized per game slot (a pure function of hand, pending discards,
contract and allowance), so a seat's successive exchange decisions compute the plan once.

Speed (measured on one core of a shared 2-core machine, N = 1024 games in rule_based self-play,
``act`` alone, after compilation; ranges over repeated runs): Hornafjarðarmanni 1.4–1.9 M
decisions/s against 6–7 k/s for the loop of ``RuleBasedAgent().act(venv.view(g, s))`` (200–300×);
Basic 3.6–4.5 M/s against 12–18 k/s.
"""

from __future__ import annotations

import numpy as np

from agents.rule_based import RuleBasedAgent, mean_estimate
from manni_env.rules import ContractKind
from manni_env.vector import VectorManni, resolve_backend



class VectorRuleBased:
    """The ``rule_based`` agent acting for the seats on turn of a vector env (see the module docstring)."""

    def __init__(self, backend: str = "auto") -> None:
        self.name = "rule_based"
        self.backend = resolve_backend(backend, fallback="python")
        self._agent = RuleBasedAgent()
        self._means: dict[str, np.ndarray] = {}
        self._kernel = None
        self._memo_key = np.full((0, 6), -1, np.int64)  # exchange plans by game slot (see the kernel)
        self._memo_plan = np.zeros((0, 12), np.int64)
        self._memo_len = np.zeros(0, np.int64)
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
        n = venv.num_envs
        if len(self._memo_len) < n:
            self._memo_key = np.full((n, 6), -1, np.int64)
            self._memo_plan = np.zeros((n, 12), np.int64)
            self._memo_len = np.zeros(n, np.int64)
        out = np.empty(games.size, np.int64)
        rules = venv.rules
        self._kernel(games, venv.exchange_limit(games), venv.phase, venv.to_move, venv.hands, venv.discards,
                     venv.played, venv.voids, venv.trick, venv.trick_len, venv.led_suit, venv.kind, venv.trump,
                     venv.pending, venv.n_pending, rules.pack, rules.hand_size, self._mean_table(venv),
                     self._memo_key, self._memo_plan, self._memo_len, out)
        return out

    def _mean_table(self, venv: VectorManni) -> np.ndarray:
        """``mean_estimate`` by the env's contract kind index (NaN for kinds the variant never plays)."""
        rules = venv.rules
        if rules.variant not in self._means:
            kinds = ContractKind if venv.horn else (ContractKind.TRUMP,)
            self._means[rules.variant] = np.array(
                [mean_estimate(k, rules.pack, rules.hand_size) if k in kinds else np.nan for k in ContractKind])
        return self._means[rules.variant]
