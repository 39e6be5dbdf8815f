"""The batched rule_based policy decides exactly as the scalar agent on the vector env's seat views."""

from __future__ import annotations

import importlib.util
import sys
from typing import NamedTuple

import numpy as np
import pytest

from agents.rule_based import RuleBasedAgent
from agents.rule_based_vector import VectorRuleBased
from manni_env.engine import GameState
from manni_env.rules import VARIANTS, ExchangeScheme, Phase, make_rules
from manni_env.vector import VectorManni, resolve_backend
from manni_env.view import SeatView

N = 64
needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba not installed")


_PHASES = {ExchangeScheme.EXCHANGE: {Phase.EXCHANGE}, ExchangeScheme.SWAP: {Phase.SWAP},
           ExchangeScheme.PICKUP: {Phase.PICKUP, Phase.DISCARD, Phase.ANNOUNCE}}


class ViewState(NamedTuple):
    """The fields of the vector env's state that the kernel may read, filled from seat views only."""

    phase: np.ndarray
    to_move: np.ndarray
    dealer: np.ndarray
    decision: np.ndarray
    manni_pos: np.ndarray
    kind: np.ndarray
    trump: np.ndarray
    trick_len: np.ndarray
    led_suit: np.ndarray
    n_pending: np.ndarray
    trick: np.ndarray
    pending: np.ndarray
    hands: np.ndarray
    discards: np.ndarray
    played: np.ndarray
    voids: np.ndarray
    used: np.ndarray


def _cards(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def _view_state(views: list[SeatView]) -> ViewState:
    """A state of ``len(views)`` games holding, for game ``g``, only what ``views[g]`` (the view of
    the seat on turn) shows: other seats' hands, discards and the Manni stay empty."""
    n = len(views)
    ints = [np.zeros(n, np.int64) for _ in range(10)]
    state = ViewState(*ints, np.zeros((n, 3), np.int64), np.zeros((n, 12), np.int64),
                      *(np.zeros((n, 3, 52), bool) for _ in range(3)), np.zeros((n, 3, 4), bool),
                      np.zeros((n, 3, 6), bool))
    for g, v in enumerate(views):
        s, c = v.seat, v.contract
        state.phase[g], state.to_move[g], state.dealer[g] = v.phase, v.to_move, v.dealer
        state.decision[g] = sum(k >= 0 for k in v.exchange_counts)
        state.manni_pos[g] = v.manni_used
        state.kind[g] = -1 if c is None else c.kind
        state.trump[g] = -1 if c is None or c.trump is None else c.trump
        state.trick_len[g], state.led_suit[g], state.n_pending[g] = len(v.trick), v.led_suit, len(v.pending)
        state.trick[g, :len(v.trick)] = v.trick
        state.pending[g, :len(v.pending)] = v.pending
        state.hands[g, s, _cards(v.hand)] = True
        state.discards[g, s, _cards(v.discards)] = True
        slot = {a.name: a.slot for a in v.rules.spec.announcements}
        for t in range(3):
            state.played[g, t, _cards(v.played[t])] = True
            state.voids[g, t] = [v.voids[t] >> u & 1 for u in range(4)]
            state.used[g, t, [slot[name] for name in v.used_contracts[t]]] = True
    return state


@needs_numba
@pytest.mark.parametrize("variant", VARIANTS)
def test_kernel_decides_as_the_scalar_agent_from_the_seat_view(variant):
    """Whole engine games, each action the agent's (90%) or a random legal one: the kernel's action
    computed from the on-turn seat's view alone equals RuleBasedAgent's, in every phase and contract."""
    from agents.rule_based_numba import Memo, act_kernel, rule_table

    rules = make_rules(variant)
    games = [GameState(rules, seed=100 + i) for i in range(24)]
    memo, agent, rng = Memo.empty(len(games)), RuleBasedAgent(), np.random.default_rng(0)
    seen = {"decisions": 0, "phases": set(), "kinds": set(), "discarders": set()}
    while live := [i for i, g in enumerate(games) if not g.finished]:
        views = [g.view(0 if g.finished else g.to_move) for g in games]  # finished games are not asked
        out = np.empty(len(live), np.int64)
        act_kernel(_view_state(views), rule_table(rules), memo, np.array(live, np.int64), out)
        for j, i in enumerate(live):
            v = views[i]
            expected = agent.act(v)
            assert out[j] == expected, (i, v.phase.name, out[j], expected)
            seen["decisions"] += 1
            seen["phases"].add(v.phase)
            if v.phase == Phase.PLAY:
                seen["kinds"].add(v.contract.kind)
            if v.phase == Phase.DISCARD:
                seen["discarders"].add(v.seat == v.forehand)
            games[i].apply(expected if rng.random() < 0.9 else int(rng.choice(v.legal_actions)))
    assert seen["decisions"] >= 3000
    assert seen["phases"] == _PHASES[rules.spec.exchange] | {Phase.PLAY}
    assert seen["kinds"] == ({1} if variant == "basic" else {0, 1, 2})
    if rules.is_announcement:
        assert seen["discarders"] == {True, False}  # the forehand and another taker


def _play(variant: str, seed: int, steps: int, policy: VectorRuleBased, p_policy: float, num_envs: int = N) -> dict:
    """Step ``num_envs`` games for ``steps`` steps, each game's action being the batched policy's
    (probability ``p_policy``) or a uniformly random legal one; at every step assert that the
    batched actions equal the scalar agent's on every game. Returns counts of what was checked."""
    venv = VectorManni(make_rules(variant), num_envs)
    _, mask, _ = venv.reset(seed=seed)
    agent = RuleBasedAgent()
    rng = np.random.default_rng(seed)
    seen = {"deals": 0, "phases": set(), "kinds": set()}
    for _ in range(steps):
        actions = policy.act(venv)
        expected = [agent.act(venv.view(i, int(venv.to_move[i]))) for i in range(num_envs)]
        assert actions.dtype == np.int64 and actions.shape == (num_envs,)
        assert actions.tolist() == expected
        seen["phases"].update(venv.phase.tolist())
        seen["kinds"].update(venv.kind.tolist())
        random_actions = (rng.random(mask.shape) * mask).argmax(1)
        chosen = np.where(rng.random(num_envs) < p_policy, actions, random_actions)
        _, mask, _, _, _, _, infos = venv.step(chosen)
        seen["deals"] += int(infos["deal_over"].sum())
    return seen


@needs_numba
@pytest.mark.parametrize("variant, seed, p_policy", [
    ("hornafjardar", 0, 0.5), ("hornafjardar", 1, 0.9), ("basic", 2, 0.5), ("basic", 3, 0.9),
])
def test_batched_actions_equal_the_scalar_agent(variant, seed, p_policy):
    policy = VectorRuleBased("numba")
    seen = _play(variant, seed, 400, policy, p_policy)
    assert seen["deals"] >= 400  # a few thousand deals over the four cases
    if variant == "hornafjardar":
        assert seen["phases"] == {Phase.EXCHANGE, Phase.PLAY} and seen["kinds"] == {0, 1, 2}
    else:
        assert seen["phases"] == {Phase.SWAP, Phase.PLAY}


@pytest.mark.parametrize("backend", [pytest.param("numba", marks=needs_numba), "python"])
def test_subset_of_games(backend):
    venv = VectorManni(make_rules("hornafjardar"), 8)
    venv.reset(seed=5)
    policy = VectorRuleBased(backend)
    every = policy.act(venv)
    games = np.array([6, 1, 1])
    assert policy.act(venv, games).tolist() == every[games].tolist()
    assert policy.act(venv, np.array([], np.int64)).shape == (0,)
    with pytest.raises(ValueError, match="games must be indices"):
        policy.act(venv, [8])


@pytest.mark.parametrize("variant", ["hornafjardar", "basic"])
def test_python_fallback_decides_the_same(variant):
    policy = VectorRuleBased("python")
    assert policy.backend == "python"
    seen = _play(variant, 7, 60, policy, 0.7, num_envs=8)
    assert Phase.PLAY in seen["phases"]


def test_backend_choice_without_numba(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # makes `import numba` fail
    assert resolve_backend("auto", fallback="python") == "python"
    assert VectorRuleBased().backend == "python"
    with pytest.raises(ValueError, match="needs numba"):
        VectorRuleBased("numba")
    with pytest.raises(ValueError, match="backend must be one of"):
        VectorRuleBased("numpy")
