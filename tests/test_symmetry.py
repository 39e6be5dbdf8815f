"""Suit relabellings (manni_env.symmetry) and the ``symmetric`` option of the ``ppo`` agent.

The relabelled copy of an observation must be exactly the observation of the relabelled game (the
same deal with the plain suits renamed, the same moves renamed), at every decision taken with the
contract known, in every variant and both history layouts; the symmetric agent's choice must follow the renaming.
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers.checkpoints import random_checkpoint
from manni_agents import ppo_agent
from manni_agents.evaluation.vector_arena import checkpoint_policy
from manni_agents.ppo_agent import make_ppo_agent, split_options
from manni_agents.registry import make_agent
from manni_agents.vector_policy import make_vector_policy
from manni_env.engine import Deal, GameState
from manni_env.observation import ObservationEncoder
from manni_env.rules import Contract, make_rules
from manni_env.symmetry import SuitRelabelling, card_map, suit_maps
from manni_env.vector import VectorManni

VARIANTS = ("basic", "hornafjardar", "trjamann", "laugarvatn")


def first_deal_moves(rules, seed: int) -> tuple[GameState, list[int], Contract]:
    """A game of ``rules``, the random legal moves of its first deal and its contract (played on a copy)."""
    rng = np.random.default_rng(seed)
    game, played = GameState(rules, seed=seed), GameState(rules, seed=seed)
    moves = []
    while not played.rounds:
        moves.append(int(rng.choice(played.legal_actions())))
        played.apply(moves[-1])
    return game, moves, played.rounds[0].contract


def renamed_deal(deal: Deal, cards: np.ndarray) -> Deal:
    rename = lambda held: tuple(int(cards[c]) for c in held)  # noqa: E731
    return Deal(tuple(rename(h) for h in deal.hands), rename(deal.manni),
                None if deal.cut_card is None else int(cards[deal.cut_card]))


@pytest.mark.parametrize("history,layout", [("summary", "v0"), ("full", "v0"), ("summary", "v1")])
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_relabelled_observation_is_the_observation_of_the_relabelled_game(variant, history, layout):
    rules = make_rules(variant)
    encoder = ObservationEncoder(rules, history, layout)
    relabelling = SuitRelabelling(encoder)
    checked = 0
    for seed in range(4):
        game, moves, contract = first_deal_moves(rules, seed)
        maps = suit_maps(contract.trump)
        k = 1 + seed % (len(maps) - 1)  # a relabelling other than the identity
        sources, actions = relabelling.tables(contract.trump)
        cards = card_map(maps[k])
        other = GameState(rules, seed=seed, deals=[renamed_deal(game.deal, cards)])
        for move in moves:
            seat = game.to_move
            obs = encoder.encode(game.view(seat))
            copies, renamings = relabelling.copies(obs[None])
            if game.contract is not None:
                np.testing.assert_array_equal(encoder.encode(other.view(seat)), obs[sources[k]])
                np.testing.assert_array_equal(copies[0, k], obs[sources[k]])
                assert sorted(other.legal_actions()) == sorted(actions[k, game.legal_actions()])
                checked += 1
            else:  # before the announcement the suits differ: no relabelling
                assert (copies[0] == obs).all() and (renamings[0] == np.arange(renamings.shape[2])).all()
            game.apply(move)
            other.apply(int(actions[k, move]))
    assert checked > 100


def test_the_relabellings_fix_the_trump_suit_or_spades_and_start_with_the_identity():
    for trump in (0, 1, 2, 3, None):
        maps = suit_maps(trump)
        fixed = 3 if trump is None else trump
        assert len(set(maps)) == 6 and maps[0] == (0, 1, 2, 3)
        assert all(m[fixed] == fixed and sorted(m) == [0, 1, 2, 3] for m in maps)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_symmetric_agent_renames_its_card_when_the_game_is_renamed(variant):
    rules = make_rules(variant)
    agent = make_agent("ppo:symmetric", rules)
    relabelling = SuitRelabelling(ObservationEncoder(rules))
    rng = np.random.default_rng(0)
    differs_from_plain = 0
    plain = make_agent("ppo:plain", rules)
    for seed in range(3):
        game, moves, contract = first_deal_moves(rules, seed)
        _, actions = relabelling.tables(contract.trump)
        k = 1 + seed % 5
        other = GameState(rules, seed=seed, deals=[renamed_deal(game.deal, card_map(suit_maps(contract.trump)[k]))])
        for move in moves:
            if game.contract is not None and len(game.legal_actions()) > 1:
                choice = agent.act(game.view(game.to_move), rng)
                assert agent.act(other.view(other.to_move), rng) == actions[k, choice]
                differs_from_plain += choice != plain.act(game.view(game.to_move), rng)
            game.apply(move)
            other.apply(int(actions[k, move]))
    assert differs_from_plain > 0  # the average over relabellings is not the plain network


@pytest.mark.parametrize("batched", ["spec", "checkpoint"])
def test_the_batched_symmetric_policy_plays_as_the_agent(batched, tmp_path):
    """The vector env's policy of a symmetric spec, and the trainers' evaluation policy of a checkpoint
    whose ``play`` is symmetric (``checkpoint_policy``), play the agent's moves."""
    rules = make_rules("basic")
    if batched == "spec":
        agent, policy = make_agent("ppo:basic,symmetric", rules), make_vector_policy("ppo:basic,symmetric", rules)
    else:
        path = random_checkpoint(tmp_path / "net", "basic", play="symmetric")
        agent, policy = make_agent(f"ppo:{path.with_suffix('')}", rules), checkpoint_policy(path, rules)
        assert agent.symmetric
    venv = VectorManni(rules, 16)
    obs, mask, to_move = venv.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(40):
        actions = policy.act(venv, np.arange(16), obs, mask, rng)
        np.testing.assert_array_equal(actions, [agent.act(venv.view(g, int(to_move[g])), rng) for g in range(16)])
        obs, mask, to_move = venv.step(actions)[:3]


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("variant, network", [(v, "shipped") for v in VARIANTS] + [("trjamann", "random tanh")])
def test_a_single_position_scores_as_it_does_in_a_batch(variant, network, compiled, tmp_path, monkeypatch):
    """The per-move path (the compiled kernel, or without numba the batched path) against the batched policy."""
    if not compiled:
        monkeypatch.setattr(ppo_agent, "compiled_symmetric_scores", lambda: None)
    rules = make_rules(variant)
    path = variant if network == "shipped" else random_checkpoint(tmp_path / "net", variant, hidden=(48, 40))
    agent = make_agent(f"ppo:{path},symmetric", rules)
    assert (agent._kernel is not None) == compiled
    venv = VectorManni(rules, 32)
    obs, mask, to_move = venv.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(30):
        batch = agent.policy_logits(obs, mask, rules)
        for g in range(len(obs)):
            legal = np.flatnonzero(mask[g])
            p = np.exp(batch[g, legal] - batch[g, legal].max())
            probabilities = agent.action_probabilities(venv.view(g, int(to_move[g])))
            np.testing.assert_allclose([probabilities[a] for a in legal], p / p.sum(), rtol=1e-4, atol=1e-6)
        obs, mask, to_move = venv.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))[:3]


@pytest.mark.parametrize("arg, path, options", [
    ("", "", set()), ("sample", "", {"sample"}), ("symmetric", "", {"symmetric"}),
    ("basic,symmetric", "basic", {"symmetric"}), ("runs/a,b,sample,symmetric", "runs/a,b", {"sample", "symmetric"}),
    ("plain", "", {"plain"}), ("runs/x,plain,sample", "runs/x", {"plain", "sample"}),
])
def test_ppo_spec_options(arg, path, options):
    assert split_options(arg) == (path, options)


def test_sample_and_greedy_together_are_refused():
    with pytest.raises(ValueError, match="sample and greedy exclude each other"):
        make_ppo_agent("basic,sample,greedy")
    with pytest.raises(ValueError, match="ppo:basic,symmetric,plain: plain and symmetric exclude each other"):
        make_ppo_agent("basic,symmetric,plain")


@pytest.mark.parametrize("play", [None, "plain", "symmetric"])
def test_the_checkpoints_play_mode_is_the_default_and_options_override_it(play, tmp_path):
    rules = make_rules("trjamann")
    path = random_checkpoint(tmp_path / "net", "trjamann", play=play).with_suffix("")
    assert make_agent(f"ppo:{path}", rules).symmetric == (play == "symmetric")
    assert make_agent(f"ppo:{path},symmetric", rules).symmetric
    assert not make_agent(f"ppo:{path},plain", rules).symmetric
    assert make_ppo_agent(str(path), symmetric=True).symmetric
    assert not make_ppo_agent(str(path), symmetric=False).symmetric
    assert not make_ppo_agent(f"{path},plain", symmetric=True).symmetric  # the spec's option wins


def test_the_shipped_basic_agent_plays_symmetric_and_the_others_plain():
    """As their checkpoints' ``play`` says (agents/models/README.md); ``ppo:plain`` plays any of them plain."""
    for variant in VARIANTS:
        rules = make_rules(variant)
        shipped = make_agent("ppo", rules).agent_for(rules)
        expected = variant == "basic"
        assert shipped.symmetric == expected == make_agent(f"ppo:{variant}", rules).symmetric
        assert not make_agent("ppo:plain", rules).agent_for(rules).symmetric
