"""The ``rule_based`` policy for every game of a :class:`~manni_env.vector.VectorManni` at once.

``VectorRuleBased().act(venv, games)`` (a :class:`~manni_agents.vector_policy.VectorPolicy`) returns,
for each game ``g`` of ``games`` (default: all), the action :class:`manni_agents.rule_based.RuleBasedAgent`
chooses on ``venv.view(g, venv.to_move[g])`` — the same action in every state, in all four
variants (tests play thousands of decisions of each against the scalar agent). One loop over the
games computes it from the env's state structure ``venv.state``
(:func:`manni_agents.rule_based_kernels.act_kernel`), compiled by numba
(``backend="numba"``, what ``"auto"`` picks when numba imports) or run by Python
(``backend="python"``: the same functions uncompiled, slow).

**What it reads, and why that is no leak.** For game ``g`` and the seat on turn ``s``, exactly
the fields of ``venv.view(g, s)`` that the scalar agent uses:

- ``hands[g, s]``, ``discards[g, s]``: the seat's own hand and own discards (the view's ``hand``,
  ``discards``); never another seat's row;
- ``pending[g, :n_pending[g]]``: the seat's own discards chosen so far in an exchange or after
  taking the Manni (the view's ``pending``, given to the seat on turn, which ``s`` is), and
  ``decision``, ``manni_pos``: how many seats have exchanged and how much of the Manni is used,
  which with the variant's limits give the seat's allowance (the view's ``exchange_limit``);
- ``played[g]`` (all three seats), ``voids[g]``, ``trick[g, :trick_len[g]]``, ``led_suit[g]``:
  cards played and voids shown, public to every seat (the view's ``played``, ``voids``, ``trick``);
- ``used[g]``: the contracts each seat has announced this game, public (the view's
  ``used_contracts``): the seat's own for its announcement, the forehand's for a discard;
- ``phase``, ``to_move``, ``dealer``, ``kind``, ``trump``: public (the contract follows from the
  cut card, the deal number or the announcement; ``dealer`` gives the forehand; a discarding
  seat is the taker, so ``taker`` and ``declarer`` are not needed).

Opponents' hands, their discards and the undrawn Manni (``hands[g, s']``, ``dealt``,
``discards[g, s']``, ``drawn``, ``manni``, the packs) are never read: tests compute every action
from states filled from the seat's view alone and from the env's state with those arrays erased.

Exchange and discard plans are memoized per game slot (a pure function of hand, pending discards,
contract or contract options and allowance), so a seat's successive discards compute the plan once.

Its speed, against the loop of ``RuleBasedAgent().act(venv.view(g, s))`` on the same games, is
on the documentation's results page (Time per decision).
"""

from __future__ import annotations

import numpy as np

from manni_agents import rule_based_kernels
from manni_env.rules import Rules, VariantSpec
from manni_env.vector import VectorManni, resolve_backend
from manni_env.vector_kernels import new_state


class VectorRuleBased:
    """The ``rule_based`` agent acting for the seats on turn of a vector env (see the module docstring)."""

    def __init__(self, backend: str = "auto") -> None:
        self.name = "rule_based"
        self.backend = resolve_backend(backend)
        self._kernels = rule_based_kernels if self.backend == "numba" else rule_based_kernels.plain_kernels()
        self._spec: VariantSpec | None = None  # the variant of the memo and table
        self._memo = self._table = None

    def act(self, venv: VectorManni, games: np.ndarray | None = None, obs: np.ndarray | None = None,
            mask: np.ndarray | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
        """Actions (int64) of the seats on turn (``venv.to_move``) in ``games`` (default: all). The
        signature is :class:`~manni_agents.vector_policy.VectorPolicy`'s; ``obs``, ``mask`` and
        ``rng`` are not needed (the state is read, and the choice is deterministic)."""
        games = np.arange(venv.num_envs) if games is None else np.asarray(games, dtype=np.int64).reshape(-1)
        if games.size and (games.min() < 0 or games.max() >= venv.num_envs):
            raise ValueError(f"games must be indices in 0..{venv.num_envs - 1}")
        k = self._kernels
        if self._spec is not venv.rules.spec or len(self._memo.length) < venv.num_envs:
            self._memo = k.Memo.empty(venv.num_envs)
            self._table = k.rule_table(venv.rules)
            self._spec = venv.rules.spec
        out = np.empty(games.size, np.int64)
        k.act_kernel(venv.state, self._table, self._memo, games, out)
        return out

    def compile(self, rules: Rules) -> None:
        """Compile the kernel for the env state of ``rules`` (or load it from numba's cache) without
        building an env, by running it on no games: a process that needs it soon can do this while
        another compiles the env's kernels, and each then loads the other's from the cache."""
        k, none = self._kernels, np.empty(0, np.int64)
        k.act_kernel(new_state(rules, 1), k.rule_table(rules), k.Memo.empty(1), none, none.copy())

