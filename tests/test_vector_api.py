"""Gymnasium vector API over the vector env, and a short run of the fast PPO trainer."""

from __future__ import annotations

import numpy as np
import pytest

from agents.registry import make_agent
from manni_env.engine import GameState
from manni_env.rules import make_rules
from manni_env.vector_gym import ManniVectorEnv


def test_gymnasium_vector_env_spaces_and_rewards():
    env = ManniVectorEnv("basic", num_envs=8, target=5)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    games = 0
    for _ in range(400):
        actions = (rng.random((8, 63)) * obs["action_mask"]).argmax(1)
        acting = info["to_move"]
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert env.observation_space.contains(obs)
        assert obs["action_mask"].any(1).all()
        assert np.array_equal(info["acting_seat"], acting)
        assert np.array_equal(rewards, info["seat_rewards"][np.arange(8), acting])
        games += int(terminated.sum() + truncated.sum())
    assert games > 5


def test_fast_trainer_writes_a_loadable_ppo_agent(tmp_path):
    torch = pytest.importorskip("torch")
    from train.ppo_vector import Args, train

    args = Args(runs_dir=str(tmp_path), run_name="tiny", total_steps=3000, num_envs=16, num_steps=16,
                net_arch=[32], snapshot_every=1000, eval_every=0, eval_deals=1, backend="numpy",
                bc_samples=300, bc_epochs=1, p_snapshot=0.3, p_rule_based=0.3, p_random=0.1,
                final_eval_deals=2, torch_threads=1, progress_bar=False)
    run_dir = train(args)
    torch.set_num_threads(1)
    agent = make_agent(f"ppo:{run_dir / 'agent'}")
    state = GameState(make_rules("hornafjardar"), seed=1)
    rng = np.random.default_rng(0)
    for _ in range(60):
        view = state.view(state.to_move)
        action = agent.act(view, rng)
        assert action in view.legal_actions
        state.apply(action)
    assert (run_dir / "learning_curve.png").is_file() and (run_dir / "history.json").is_file()
    assert "vs 2 × rule_based" in (run_dir / "arena_final.md").read_text()


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_writing_into_a_returned_mask_cannot_make_an_illegal_action_legal(backend):
    if backend == "numba":
        pytest.importorskip("numba")
    from manni_env.vector import VectorManni

    venv = VectorManni(make_rules("hornafjardar"), num_envs=4, backend=backend)
    _, mask, _ = venv.reset(seed=5)
    for _ in range(30):  # into trick play, where most cards are illegal
        _, mask, *_ = venv.step(mask.argmax(1))
    card = int(np.flatnonzero(~mask[0, :52])[0])  # a card game 0's seat on turn may not play
    hands = venv.hands.copy()
    mask[0, card] = True
    actions = mask.argmax(1)
    actions[0] = card
    with pytest.raises(ValueError, match=f"illegal action {card} in game 0"):
        venv.step(actions)
    assert np.array_equal(venv.hands, hands) and not venv.action_mask()[0, card]
