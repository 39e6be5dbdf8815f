"""The batched rule_based policy decides exactly as the scalar agent on the vector env's seat views."""

from __future__ import annotations

import importlib.util
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from manni_agents.rule_based import RuleBasedAgent
from manni_agents.rule_based_vector import VectorRuleBased
from manni_env.engine import GameState
from manni_env.rules import VARIANTS, ExchangeScheme, Phase, Rules, make_rules
from manni_env.vector import VectorManni, random_legal_actions, resolve_backend
from manni_env.vector_kernels import VectorState, new_state
from manni_env.view import SeatView

N = 64
needs_numba = pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba not installed")


#: VectorState fields that hold other seats' cards or the undealt cards
_HIDDEN = ("hands", "dealt", "discards", "drawn", "deal_hands", "manni", "decks", "queued_hands", "queued_manni",
           "queued_cut")
_PHASES = {ExchangeScheme.EXCHANGE: {Phase.EXCHANGE}, ExchangeScheme.SWAP: {Phase.SWAP},
           ExchangeScheme.PICKUP: {Phase.PICKUP, Phase.DISCARD, Phase.ANNOUNCE}}


def _cards(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def _view_state(rules: Rules, views: list[SeatView]) -> VectorState:
    """A vector state of ``len(views)`` games holding, for game ``g``, only the fields the kernel
    reads, filled from ``views[g]`` (the view of the seat on turn): other seats' hands, discards
    and the Manni stay empty."""
    state = new_state(rules, len(views))
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
    from manni_agents.rule_based_kernels import Memo, act_kernel, rule_table

    rules = make_rules(variant)
    games = [GameState(rules, seed=100 + i) for i in range(24)]
    memo, agent, rng = Memo.empty(len(games)), RuleBasedAgent(), np.random.default_rng(0)
    seen = {"decisions": 0, "phases": set(), "kinds": set(), "discarders": set()}
    while live := [i for i, g in enumerate(games) if not g.finished]:
        views = [g.view(0 if g.finished else g.to_move) for g in games]  # finished games are not asked
        out = np.empty(len(live), np.int64)
        act_kernel(_view_state(rules, views), rule_table(rules), memo, np.array(live, np.int64), out)
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


def _seat_only(venv: VectorManni) -> SimpleNamespace:
    """A stand-in for ``venv`` whose state holds, in each game, only the seat on turn's own cards:
    other seats' hands, dealt hands, discards and draws, the Manni and the packs are erased."""
    state = venv.state._replace(**{f: np.zeros_like(getattr(venv.state, f)) for f in _HIDDEN})
    games, seats = np.arange(venv.num_envs), venv.to_move
    for f in ("hands", "dealt", "discards", "drawn"):
        getattr(state, f)[games, seats] = getattr(venv.state, f)[games, seats]
    return SimpleNamespace(state=state, rules=venv.rules, num_envs=venv.num_envs)


def _play(variant: str, seed: int, steps: int, backend: str, p_policy: float, num_envs: int = N) -> dict:
    """Step ``num_envs`` games for ``steps`` steps, each game's action being the batched policy's
    (probability ``p_policy``) or a uniformly random legal one; at every step assert that the
    batched actions equal the scalar agent's on every game, and are the same when the state holds
    only the seat on turn's own cards. Returns counts of what was checked."""
    venv = VectorManni(make_rules(variant), num_envs, backend=backend)
    _, mask, _ = venv.reset(seed=seed)
    policy, blind, agent = VectorRuleBased(backend), VectorRuleBased(backend), RuleBasedAgent()
    rng = np.random.default_rng(seed)
    seen = {"decisions": 0, "deals": 0, "phases": set(), "kinds": set(), "discarders": set()}
    for _ in range(steps):
        actions = policy.act(venv)
        expected = [agent.act(venv.view(i, int(venv.to_move[i]))) for i in range(num_envs)]
        assert actions.dtype == np.int64 and actions.shape == (num_envs,)
        assert actions.tolist() == expected
        assert blind.act(_seat_only(venv)).tolist() == expected
        seen["decisions"] += num_envs
        seen["phases"].update(venv.phase.tolist())
        seen["kinds"].update(venv.kind[venv.phase == Phase.PLAY].tolist())
        discarding = venv.phase == Phase.DISCARD
        seen["discarders"].update((venv.to_move[discarding] == (venv.dealer[discarding] + 1) % 3).tolist())
        chosen = np.where(rng.random(num_envs) < p_policy, actions, random_legal_actions(mask, rng))
        _, mask, _, _, _, _, infos = venv.step(chosen)
        seen["deals"] += int(infos["deal_over"].sum())
    return seen


def _check_coverage(variant: str, seen: dict) -> None:
    rules = make_rules(variant)
    assert seen["phases"] == _PHASES[rules.spec.exchange] | {Phase.PLAY}
    assert seen["kinds"] == ({1} if variant == "basic" else {0, 1, 2})
    if rules.is_announcement:
        assert seen["discarders"] == {True, False}  # the forehand and another taker


@needs_numba
@pytest.mark.parametrize("variant", VARIANTS)
def test_batched_actions_equal_the_scalar_agent(variant):
    seen = _play(variant, VARIANTS.index(variant), 300, "numba", 0.8)
    assert seen["decisions"] >= 19_000 and seen["deals"] >= 300
    _check_coverage(variant, seen)


@pytest.mark.parametrize("variant", VARIANTS)
def test_uncompiled_kernels_decide_the_same(variant):
    seen = _play(variant, 7, 70, "python", 0.8, num_envs=8)
    assert Phase.PLAY in seen["phases"] and seen["deals"] >= 8


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


@needs_numba
def test_one_policy_serves_envs_of_several_variants_and_sizes():
    """The plan memo is per variant and env size: switching envs never reuses a stale plan."""
    policy, agent = VectorRuleBased("numba"), RuleBasedAgent()
    envs = [VectorManni(make_rules(v), n) for v, n in (("trjamann", 4), ("laugarvatn", 4), ("trjamann", 6),
                                                        ("hornafjardar", 4))]
    for i, venv in enumerate(envs):
        venv.reset(seed=i)
    rng = np.random.default_rng(1)
    for _ in range(120):
        for venv in envs:
            actions = policy.act(venv)
            assert actions.tolist() == [agent.act(venv.view(g, int(venv.to_move[g]))) for g in range(venv.num_envs)]
            venv.step(np.where(rng.random(venv.num_envs) < 0.8, actions, random_legal_actions(venv.action_mask(), rng)))


@needs_numba
@pytest.mark.parametrize("variant", VARIANTS)
def test_compile_readies_the_kernel_an_env_will_call(variant):
    """``compile`` compiles for exactly the types of a reset env's state: acting after it adds no
    signature (no second compile), and the actions are those of a policy never compiled ahead."""
    from manni_agents import rule_based_kernels

    policy = VectorRuleBased("numba")
    policy.compile(make_rules(variant))
    compiled = list(rule_based_kernels.act_kernel.signatures)
    venv = VectorManni(make_rules(variant), 6)
    venv.reset(seed=2)
    assert policy.act(venv).tolist() == VectorRuleBased("numba").act(venv).tolist()
    assert rule_based_kernels.act_kernel.signatures == compiled


def test_backend_choice_without_numba(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # makes `import numba` fail
    assert resolve_backend("auto") == "python"
    assert VectorRuleBased().backend == "python"
    with pytest.raises(ValueError, match="needs numba"):
        VectorRuleBased("numba")
    with pytest.raises(ValueError, match="backend must be one of"):
        VectorRuleBased("numpy")
