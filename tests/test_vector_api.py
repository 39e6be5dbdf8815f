"""Gymnasium vector API over the vector env, and a short run of the fast PPO trainer."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as vector_wrappers

from agents.registry import make_agent
from manni_env.engine import GameState
from manni_env.rules import make_rules
from manni_env.vector_gym import ManniVectorEnv

MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]


@pytest.mark.parametrize("mode", MODES)
def test_gymnasium_vector_env_spaces_and_rewards(mode):
    env = ManniVectorEnv("basic", num_envs=8, target=5, autoreset_mode=mode)
    assert env.metadata["autoreset_mode"] == mode
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    games = 0
    for _ in range(400):
        actions = (rng.random((8, 63)) * obs["action_mask"]).argmax(1)
        acting = info["to_move"]
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert env.observation_space.contains(obs)
        assert obs["action_mask"].any(1)[~(terminated | truncated)].all()  # NEXT_STEP: a final mask is empty
        assert np.array_equal(info["acting_seat"], acting)
        assert np.array_equal(rewards, info["seat_rewards"][np.arange(8), acting])
        games += int(terminated.sum() + truncated.sum())
    assert games > 5


def test_next_step_autoreset_follows_gymnasium_protocol():
    """The step that ends a game returns its final observation (zero mask); the next step ignores
    that game's action and starts a new game with reward 0. Deal rewards add up to the totals."""
    n = 4
    env = ManniVectorEnv("basic", num_envs=n, target=2)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=5)
    paid = np.zeros((n, 3))
    ended = np.zeros(n, bool)
    games = 0
    for _ in range(600):
        actions = env.sample()
        actions[ended] = 62  # ignored in the reset step, even though illegal
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert np.all(info["acting_seat"][ended] == -1) and np.all(rewards[ended] == 0)
        assert not (terminated[ended] | truncated[ended]).any() and obs["action_mask"][ended].any(1).all()
        paid[ended] = 0
        paid += info["seat_rewards"]
        done = terminated | truncated
        for i in np.flatnonzero(done):
            game = env.core.games[i]  # the finished game stays in its slot until the reset step
            assert game.finished and np.array_equal(paid[i], game.totals)
            view = game.view(int(info["acting_seat"][i]))
            assert np.array_equal(obs["observation"][i], env.core.encoder.encode(view))
            assert not obs["action_mask"][i].any() and info["to_move"][i] == -1
        ended = done
        games += int(done.sum())
    assert games >= 8


def test_gymnasium_vector_wrappers_run_on_next_step_autoreset():
    env = ManniVectorEnv("hornafjardar", num_envs=3, target=1)
    wrapped = vector_wrappers.RecordEpisodeStatistics(vector_wrappers.NormalizeReward(vector_wrappers.NormalizeObservation(
        vector_wrappers.FlattenObservation(vector_wrappers.FilterObservation(env, ["observation"])))))
    obs, _ = wrapped.reset(seed=2)
    assert obs.shape == (3, env.core.encoder.size)
    episodes = ends = 0
    for _ in range(400):
        obs, rewards, terminated, truncated, info = wrapped.step(env.sample())
        ends += int((terminated | truncated).sum())
        if "episode" in info:
            episodes += int(info["_episode"].sum())
            assert (info["episode"]["l"][info["_episode"]] > 30).all()  # a game: at least one deal
    assert episodes == ends >= 2


@pytest.mark.parametrize("mode", MODES)
def test_vector_env_errors_sampling_and_rendering(mode):
    env = ManniVectorEnv("hornafjardar", num_envs=3, autoreset_mode=mode, render_mode="rgb_array")
    with pytest.raises(ValueError, match="takes no options"):
        env.reset(seed=0, options={"deals": []})
    env.reset(seed=0, options={})
    good = env.sample()
    bad = good.copy()
    bad[1] = 55  # take the Manni: not a Hornafjarðarmanni action
    with pytest.raises(ValueError, match="illegal action 55 in game 1"):
        env.step(bad)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        env.step(np.zeros(2, np.int64))
    fresh = ManniVectorEnv("hornafjardar", num_envs=3, autoreset_mode=mode)
    fresh.reset(seed=0)
    # nothing was applied by the rejected steps: the same legal step gives the same games
    assert np.array_equal(env.step(good)[0]["observation"], fresh.step(good)[0]["observation"])
    frames = env.render()
    assert len(frames) == 3 and all(f.shape[2] == 3 and f.dtype == np.uint8 for f in frames)
    env.action_space.seed(1)
    for _ in range(200):
        for actions in (env.sample(), env.action_space.sample()):
            assert env.action_space.contains(actions)
            mask = env.action_mask()
            live = mask.any(1)
            assert mask[np.arange(3), actions][live].all()
        env.step(actions)
    with pytest.raises(ValueError, match="autoreset_mode"):
        ManniVectorEnv(autoreset_mode="Sometimes")


@pytest.mark.parametrize("mode", MODES)
def test_vector_env_same_seed_same_games(mode):
    def run():
        env = ManniVectorEnv("basic", num_envs=2, target=3, autoreset_mode=mode)
        obs, _ = env.reset(seed=11)
        out = [obs["observation"].tobytes()]
        for _ in range(150):
            obs, rewards, *_ = env.step(env.sample())
            out.append((obs["observation"].tobytes(), rewards.tobytes()))
        return out

    assert run() == run()


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
