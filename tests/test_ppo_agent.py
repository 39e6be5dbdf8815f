"""The ``ppo`` agent's checkpoint format: safe loading, clear errors, legal play, SB3 fidelity."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers.checkpoints import random_checkpoint
from manni_agents.evaluation.arena import run_arena
from manni_agents.evaluation.match import play_game
from manni_agents.ppo_agent import CheckpointError, PPOAgent, checkpoint_paths
from manni_agents.registry import make_agent
from manni_env.engine import GameState
from manni_env.observation import ObservationEncoder
from manni_env.rules import make_rules

RULES = make_rules("hornafjardar")


@pytest.fixture
def checkpoint(tmp_path):
    return random_checkpoint(tmp_path / "net")


def test_round_trip_plays_only_legal_moves_in_whole_games(checkpoint):
    for spec in (f"ppo:{checkpoint.with_suffix('')}", f"ppo:{checkpoint},sample"):
        agents = [make_agent(spec), make_agent("random"), make_agent("rule_based")]
        for seed in range(3):
            state = GameState(RULES, seed=seed)
            rngs = [np.random.default_rng([seed, k]) for k in range(3)]
            play_game(state, agents, rngs)  # an illegal action would raise
            assert state.finished


def test_loading_is_exact_and_argmax_is_deterministic(checkpoint):
    a, b = PPOAgent(checkpoint), PPOAgent(checkpoint_paths(checkpoint)[1])
    for x, y in zip(a.layers, b.layers):
        assert np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1])
    state = GameState(RULES, seed=4)
    view = state.view(state.to_move)
    legal = np.array(view.legal_actions)
    logits = a.logits(ObservationEncoder(RULES).encode(view))
    assert a.act(view, np.random.default_rng(0)) == legal[np.argmax(logits[legal])]


def test_action_probabilities_are_the_masked_softmax_and_leave_play_unchanged(checkpoint):
    agent = PPOAgent(checkpoint)
    state = GameState(RULES, seed=5)
    encoder = ObservationEncoder(RULES)
    for _ in range(40):  # exchange decisions, then trick play
        view = state.view(state.to_move)
        probs = agent.action_probabilities(view)
        assert sorted(probs) == list(view.legal_actions)
        assert sum(probs.values()) == pytest.approx(1.0) and min(probs.values()) > 0
        legal = np.array(view.legal_actions)
        scores = agent.logits(encoder.encode(view))[legal]
        expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
        assert np.allclose([probs[a] for a in legal], expected)
        action = agent.act(view, np.random.default_rng(0))
        assert probs[action] == max(probs.values())
        state.apply(action)
    with pytest.raises(ValueError, match="no legal action"):
        agent.action_probabilities(state.view((state.to_move + 1) % 3))


def test_tampered_weights_are_rejected(checkpoint):
    data = bytearray(checkpoint.read_bytes())
    data[-5] ^= 0x01
    checkpoint.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=rf"{checkpoint.name}: checksum mismatch"):
        PPOAgent(checkpoint)


def test_truncated_weights_are_rejected(checkpoint):
    checkpoint.write_bytes(checkpoint.read_bytes()[:100])
    with pytest.raises(CheckpointError, match=rf"{checkpoint.name}: checksum mismatch"):
        PPOAgent(checkpoint)


def test_garbage_with_a_matching_checksum_is_not_a_safetensors_file(checkpoint):
    import hashlib

    _, meta_path = checkpoint_paths(checkpoint)
    checkpoint.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not a header}")
    meta = json.loads(meta_path.read_text())
    meta["weights_sha256"] = hashlib.sha256(checkpoint.read_bytes()).hexdigest()
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="not a readable safetensors file"):
        PPOAgent(checkpoint)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: m.update(net_arch=[32]), "do not match the metadata's network"),
        (lambda m: m.update(net_arch=[32, 17]), r"layer pi.1 has shapes"),
        (lambda m: m.update(format="something/9"), "format is 'something/9'"),
        (lambda m: m.pop("obs_size"), "metadata lacks 'obs_size'"),
        (lambda m: m.update(activation="gelu"), "activation must be one of tanh, relu, got 'gelu'"),
        (lambda m: m.update(activation=["tanh"]), r"activation must be one of tanh, relu, got \['tanh'\]"),
        (lambda m: m.update(net_arch=5), "net_arch must be a list of positive integers"),
        (lambda m: m.update(net_arch=None), "net_arch must be a list of positive integers"),
        (lambda m: m.update(net_arch=[{}]), "net_arch must be a list of positive integers"),
        (lambda m: m.update(net_arch=[32, 16.0]), "net_arch must be a list of positive integers"),
        (lambda m: m.update(net_arch=[32, 0]), "net_arch must be a list of positive integers"),
        (lambda m: m.update(obs_size=None), "obs_size must be a positive integer, got None"),
        (lambda m: m.update(obs_size=[616]), "obs_size must be a positive integer"),
        (lambda m: m.update(obs_size=616.7), "obs_size must be a positive integer, got 616.7"),
        (lambda m: m.update(obs_size=True), "obs_size must be a positive integer, got True"),
        (lambda m: m.update(obs_size=615), r"layer pi.0 has shapes \(32, 616\)"),
        (lambda m: m.update(history="ful"), "history must be one of summary, full, got 'ful'"),
        (lambda m: m.update(variant="whist"), "variant must be one of hornafjardar, basic"),
        (lambda m: m.update(variant=None), "variant must be one of"),
        (lambda m: m.update(weights_sha256=7), "weights_sha256 must be a SHA-256 hex digest"),
        (lambda m: m.update(layout_sha256=[]), "layout_sha256 must be a SHA-256 hex digest"),
        (lambda m: m.update(num_actions=64), "num_actions must be the integer 63, got 64"),
        (lambda m: m.update(num_actions=63.0), "num_actions must be the integer 63, got 63.0"),
        (lambda m: m.update(num_actions=True), "num_actions must be the integer 63, got True"),
        (lambda m: m.update(net_arch=[2**40, 256]), "net_arch must be at most 64 hidden layers of at most 65,536"),
        (lambda m: m.update(net_arch=[32] * 65), "net_arch must be at most 64 hidden layers"),
        (lambda m: m.update(obs_size=10**18), "obs_size must be at most 65,536, got 1000000000000000000"),
        (lambda m: m.update(net_arch=[65_536] * 3), "its shapes imply 34,538,520,828 bytes of weights, more than 2,147,483,648"),
        (lambda m: m.update(play="mirrored"), "play must be one of plain, symmetric, got 'mirrored'"),
        (lambda m: m.update(play=True), "play must be one of plain, symmetric, got True"),
        (lambda m: m.update(rule_options=[]), "rule_options .* do not fit 'hornafjardar'"),
        (lambda m: m.update(rule_options={"target": 0}), "rule_options .* target must be a positive integer"),
        (lambda m: m.update(rule_options={"variant": "basic"}), "rule_options .* do not fit"),
        (lambda m: m.update(format=["x" * 1000]), r"format is \['xxx.*\.\.\..*, expected 'manni-ppo/1'"),
    ],
)
def test_inconsistent_metadata_is_rejected(checkpoint, edit, message):
    _, meta_path = checkpoint_paths(checkpoint)
    meta = json.loads(meta_path.read_text())
    edit(meta)
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=message) as err:
        PPOAgent(checkpoint)
    assert str(checkpoint.parent) in str(err.value)


@pytest.mark.parametrize(
    "text, detail",
    [
        ("{broken", "Expecting property name"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"format": "manni-ppo/1", "obs_size": ' + "6" * 5000 + "}", "digits"),
        (b"\xff\xfe{}", "utf-8"),
    ],
)
def test_unreadable_metadata(checkpoint, text, detail):
    _, meta_path = checkpoint_paths(checkpoint)
    meta_path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(CheckpointError, match=rf"{meta_path}: metadata is not valid JSON \(.*{detail}"):
        PPOAgent(checkpoint)


def test_missing_files(checkpoint, tmp_path):
    with pytest.raises(CheckpointError, match="nothing.json: no such checkpoint file"):
        PPOAgent(tmp_path / "nothing")


def test_a_run_directory_is_its_agent_checkpoint(tmp_path):
    """``ppo:runs/<run>`` (the directory ``manni train`` writes) plays ``runs/<run>/agent``."""
    run = tmp_path / "runs" / "my_model"
    random_checkpoint(run / "agent")
    by_dir, by_file = make_agent(f"ppo:{run}"), make_agent(f"ppo:{run / 'agent'}")
    for x, y in zip(by_dir.layers, by_file.layers):
        assert np.array_equal(x[0], y[0]) and np.array_equal(x[1], y[1])
    assert make_agent(f"ppo:{run},sample").sample
    empty = tmp_path / "runs" / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=r"empty/agent.json: no such checkpoint file"):
        make_agent(f"ppo:{empty}")


def test_wrong_variant_and_wrong_observation_size(tmp_path):
    basic = PPOAgent(random_checkpoint(tmp_path / "basic", variant="basic"))
    state = GameState(RULES, seed=1)
    with pytest.raises(CheckpointError, match=r"basic.safetensors: trained for variant 'basic', cannot play 'hornafjardar'"):
        basic.act(state.view(state.to_move), np.random.default_rng(0))
    small = PPOAgent(random_checkpoint(tmp_path / "small", obs_size=100))
    with pytest.raises(CheckpointError, match="expects observations of size 100"):
        small.act(state.view(state.to_move), np.random.default_rng(0))


def forced_position(rules, seed=0) -> GameState:
    """A game of ``rules`` played at random up to a decision with a single legal action."""
    state, rng = GameState(rules, seed=seed), np.random.default_rng(seed)
    while len(state.legal_actions()) > 1:
        state.apply(int(rng.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize("options", ["", ",symmetric", ",sample"])
def test_a_forced_move_is_played_without_a_network_pass(checkpoint, monkeypatch, options):
    agent = make_agent(f"ppo:{checkpoint.with_suffix('')}{options}")
    state = forced_position(RULES)
    monkeypatch.setattr(agent, "_legal_scores", lambda *_: pytest.fail("the network was asked about a forced move"))
    assert agent.act(state.view(state.to_move), np.random.default_rng(0)) == state.legal_actions()[0]


def test_a_forced_move_of_other_rules_is_still_refused(tmp_path):
    basic = PPOAgent(random_checkpoint(tmp_path / "basic", variant="basic"))
    state = forced_position(RULES)
    with pytest.raises(CheckpointError, match="cannot play 'hornafjardar'"):
        basic.act(state.view(state.to_move), np.random.default_rng(0))


def test_registry_options(checkpoint):
    base = checkpoint.with_suffix("")
    assert make_agent(f"ppo:{base},sample").sample and not make_agent(f"ppo:{base},greedy").sample
    with pytest.raises(ValueError, match=r"net,fast.json: no such checkpoint file"):
        make_agent(f"ppo:{base},fast")


def test_usable_in_the_arena(checkpoint):
    spec = f"ppo:{checkpoint.with_suffix('')}"
    result = run_arena([spec, "random", "rule_based"], RULES, deals=2, seed=0, progress=False)
    assert {a.spec for a in result.agents} == {spec, "random", "rule_based"}
    assert sum(a.moves for a in result.agents) > 0
