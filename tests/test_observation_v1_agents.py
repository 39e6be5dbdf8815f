"""Observation layout v1 and the agents: old (v0) checkpoints keep loading and playing the same moves
in v1 envs, scalar and batched; ``manni train --observation v1`` makes a checkpoint that records its
layout, loads and plays; a v0 checkpoint starts a v1 run by widening."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from manni_agents.evaluation.vector_arena import checkpoint_policy, duplicate_scores  # noqa: E402
from manni_agents.ppo_agent import CheckpointError, shipped_model  # noqa: E402
from manni_agents.registry import make_agent  # noqa: E402
from manni_agents.vector_policy import make_vector_policy  # noqa: E402
from manni_env import manni_v1  # noqa: E402
from manni_env.rules import VARIANTS, make_rules  # noqa: E402
from manni_env.vector import VectorManni  # noqa: E402
from manni_train.args import parse_args  # noqa: E402
from manni_train.init_from import load_actor  # noqa: E402
from manni_train.networks import Actor  # noqa: E402
from manni_train.ppo_vector import Args, train  # noqa: E402

REFERENCE = Path(__file__).resolve().parent.parent / "benchmarks" / "reference_agents"
TINY = dict(num_envs=16, num_steps=24, hidden=[32], eval_every=0, eval_deals=4, bc_samples=400, bc_epochs=1,
            final_eval_deals=0, torch_threads=1, progress_bar=False)


def _vector_moves(spec: str, rules, layout: str, steps: int = 60) -> np.ndarray:
    """The moves ``spec`` makes playing every seat of 16 vector games of seed 5 in ``layout``."""
    venv = VectorManni(rules, 16, layout=layout)
    policy = make_vector_policy(spec, rules, layout=layout)
    obs, mask, _ = venv.reset(seed=5)
    rng, games, moves = np.random.default_rng(5), np.arange(16), []
    for _ in range(steps):
        actions = policy.act(venv, games, obs, mask, rng)
        moves.append(actions)
        obs, mask = venv.step(actions)[:2]
    return np.array(moves)


@pytest.mark.parametrize("variant", VARIANTS)
def test_shipped_and_reference_v0_agents_make_the_same_vector_moves_in_v1_games(variant):
    rules = make_rules(variant)
    for spec in (f"ppo:{variant}", f"ppo:{REFERENCE / f'{variant}_ppo'},sample"):
        assert make_agent(spec).layout == "v0"  # the files predate the field
        assert np.array_equal(_vector_moves(spec, rules, "v1"), _vector_moves(spec, rules, "v0")), spec


def test_a_v0_agent_scores_the_same_in_the_v1_vector_arena():
    rules = make_rules("hornafjardar")
    policy = {layout: checkpoint_policy(shipped_model("hornafjardar"), rules, layout) for layout in ("v0", "v1")}
    scores = [duplicate_scores(policy[layout], rules, 24, 3, "ppo", layout=layout) for layout in ("v0", "v1")]
    assert np.array_equal(*scores)


def test_a_v0_agent_in_the_v1_aec_env_reads_the_prefix_and_plays_its_own_moves():
    agent = make_agent("ppo:trjamann")
    env = manni_v1.raw_env(variant="trjamann")
    env.reset(seed=2)
    rng, moves = np.random.default_rng(0), 0
    while not any(env.terminations.values()):  # one deal: every phase, every trick
        seat = env.game.to_move
        observed = env.observe(env.agent_selection)
        logits = np.where(observed["action_mask"], agent.logits(observed["observation"][:agent.meta["obs_size"]]),
                          -np.inf)
        move = agent.act(env.game.view(seat), rng)  # the scalar agent encodes its own layout
        assert move == int(logits.argmax())
        env.step(move)
        moves += 1
    assert moves > 50


@pytest.fixture(scope="module")
def v1_run(tmp_path_factory):
    return train(Args(runs_dir=str(tmp_path_factory.mktemp("runs")), run_name="v1", observation="v1",
                      total_steps=200, **TINY))


def test_a_v1_run_exports_a_checkpoint_that_records_its_layout_loads_and_plays(v1_run):
    agent = make_agent(f"ppo:{v1_run.agent}")
    assert agent.meta["layout"] == agent.layout == "v1" and agent.meta["obs_size"] == 830
    assert agent.meta["training"]["args"]["observation"] == "v1"
    rules = make_rules("hornafjardar")
    assert _vector_moves(f"ppo:{v1_run.agent}", rules, "v1", steps=10).shape == (10, 16)
    env = manni_v1.raw_env()
    env.reset(seed=1)
    view = env.game.view(env.game.to_move)
    assert agent.act(view, np.random.default_rng(0)) in view.legal_actions
    search = make_agent(f"search:worlds=2,model={v1_run.agent}")  # its play-outs observe in v1
    assert search.act(view, np.random.default_rng(0)) in view.legal_actions
    # a v1 network cannot read v0 observations: one clear line, wherever it is asked to
    with pytest.raises(CheckpointError, match=r"reads observation layout v1, the games are seen in layout v0$"):
        make_vector_policy(f"ppo:{v1_run.agent}", rules)
    with pytest.raises(CheckpointError, match="--opponents ppo:.* reads observation layout v1"):
        Args(opponents=[f"ppo:{v1_run.agent}"]).check()
    Args(opponents=["ppo"], eval_against=["ppo", "rule_based"], observation="v1").check()  # v0 agents in a v1 run


def test_init_from_a_v0_network_into_a_v1_run_starts_with_the_same_moves():
    shipped = make_agent("ppo:hornafjardar")
    args = Args(init_from="ppo", observation="v1", hidden=shipped.meta["net_arch"])
    actor = Actor(830, shipped.meta["net_arch"], shipped.meta["activation"])
    record = load_actor(actor, args.init_from, args)
    assert record["weights_sha256"] == shipped.meta["weights_sha256"]
    venv = VectorManni(args.rules(), 8, layout="v1")
    obs, mask, _ = venv.reset(seed=3)
    for _ in range(40):
        with torch.no_grad():
            logits = actor(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()
        np.testing.assert_allclose(logits[mask], shipped.logits(obs[:, :616])[mask], rtol=1e-4, atol=1e-4)
        obs, mask = venv.step(logits.argmax(1))[:2]


def test_init_from_a_v1_network_into_a_v0_run_is_refused(v1_run):
    with pytest.raises(CheckpointError, match="has layout='v1', the run has 'v0'"):
        load_actor(Actor(616, [32], "relu"), f"ppo:{v1_run.agent}", Args(init_from=f"ppo:{v1_run.agent}", hidden=[32]))


def test_a_bad_observation_layout_is_one_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        parse_args(Args, ["--observation", "v2"])
    assert exit_info.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.endswith("--observation must be one of v0, v1, got 'v2'")
    assert parse_args(Args, ["--observation", "v1"]).observation == "v1" and Args().observation == "v0"
    from manni_train import rllib_ppo

    with pytest.raises(ValueError, match="^--observation v1: the rllib trainer reads observation layout v0 only$"):
        rllib_ppo.Args(observation="v1").check()
