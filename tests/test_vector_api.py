"""The vector env's API: state arrays, errors, backends, Gymnasium's vector API."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as vector_wrappers

from manni_env import actions as A
from manni_env.engine import Phase
from manni_env.rules import VARIANT_TABLE, VARIANTS, make_rules
from manni_env.vector import VectorManni, resolve_backend
from manni_env.vector_gym import ManniVectorEnv

MODES = [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP]
# the phases each exchange scheme goes through (Phase.EXCHANGE, SWAP, PICKUP are the schemes' first)
PHASES = {Phase.EXCHANGE: {Phase.EXCHANGE, Phase.PLAY}, Phase.SWAP: {Phase.SWAP, Phase.PLAY},
          Phase.PICKUP: {Phase.PICKUP, Phase.DISCARD, Phase.ANNOUNCE, Phase.PLAY}}


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_illegal_action_is_rejected_and_changes_nothing(variant, backend):
    venv = VectorManni(make_rules(variant), 4, backend=backend)
    obs, mask, _ = venv.reset(seed=0)
    rng = np.random.default_rng(0)
    seen = set()
    for _ in range(60):
        actions = (rng.random(mask.shape) * mask).argmax(1)
        before = [a.copy() for a in venv.state]
        for i in range(4):  # one illegal action in game i, the other games' actions legal
            bad = actions.copy()
            bad[i] = rng.choice([*np.flatnonzero(~mask[i]), -1, A.NUM_ACTIONS])
            with pytest.raises(ValueError, match=rf"illegal action {bad[i]} in game {i} \(phase "):
                venv.step(bad)
            seen.add(Phase(int(venv.phase[i])))
        assert all(np.array_equal(a, b) for a, b in zip(before, venv.state))
        assert np.array_equal(venv.action_mask(), mask) and np.array_equal(venv.observe(np.arange(4)), obs)
        obs, mask, *_ = venv.step(actions)
    assert seen == PHASES[Phase(VARIANT_TABLE[variant].exchange)]


def test_bad_arguments_are_refused_clearly():
    venv = VectorManni(make_rules("basic"), 3)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(3, np.int64))
    venv.reset(seed=1)
    with pytest.raises(ValueError, match="shape"):
        venv.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="integer array"):
        venv.step(np.zeros(3))
    with pytest.raises(ValueError, match="seats must be in 0..2"):
        venv.observe([0], [3])
    with pytest.raises(ValueError, match="games must be in 0..2"):
        venv.observe([3])
    with pytest.raises(ValueError, match="backend must be one of auto, numba, python, got 'numpy'"):
        VectorManni(make_rules("basic"), 2, backend="numpy")
    with pytest.raises(ValueError, match="reward must be"):
        VectorManni(make_rules("basic"), 2, reward="trick")
    with pytest.raises(ValueError, match="num_envs"):
        VectorManni(make_rules("basic"), 0)


def test_state_arrays_are_attributes_of_one_state():
    venv = VectorManni(make_rules("trjamann"), 5)
    venv.reset(seed=2)
    for name in ("hands", "dealt", "used", "passed", "taker", "declarer", "kind", "tricks_won", "totals"):
        assert getattr(venv, name) is getattr(venv.state, name)
    assert venv.hands.shape == (5, 3, 52) and venv.manni.shape == (5, 4) and venv.used.shape == (5, 3, 6)
    assert (venv.kind == -1).all() and (venv.phase == Phase.PICKUP).all()  # no contract before the announcement
    assert venv.observe(np.arange(5), np.arange(5) % 3).shape == (5, venv.obs_size)


def test_uncompiled_kernels_without_numba(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # makes `import numba` fail
    assert resolve_backend("auto") == "python"
    with pytest.raises(ValueError, match="needs numba"):
        resolve_backend("numba")
    venv = VectorManni(make_rules("laugarvatn"), 2)
    assert venv.backend == "python"
    _, mask, _ = venv.reset(seed=3)
    for _ in range(20):
        _, mask, *_ = venv.step(mask.argmax(1))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("variant", VARIANTS)
def test_gymnasium_vector_env_spaces_and_rewards(variant, mode):
    options = {"target": 2} if "target" in VARIANT_TABLE[variant].options else {}
    env = ManniVectorEnv(variant, num_envs=8, autoreset_mode=mode, **options)
    assert env.metadata["autoreset_mode"] == mode
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    deals = 0
    for _ in range(300):
        actions = (rng.random((8, 63)) * obs["action_mask"]).argmax(1)
        acting = info["to_move"]
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert env.observation_space.contains(obs)
        assert obs["action_mask"].any(1)[~(terminated | truncated)].all()  # NEXT_STEP: a final mask is empty
        assert np.array_equal(info["acting_seat"], acting)
        assert np.array_equal(rewards, info["seat_rewards"][np.arange(8), acting])
        deals += int(info["deal_over"].sum())
    assert deals > 30


@pytest.mark.parametrize("episode", ["game", "deal"])
def test_next_step_autoreset_follows_gymnasium_protocol(episode):
    """The step that ends an episode returns its final observation (zero mask); the next step
    ignores that slot's action and starts the next episode (a new game, or the game's next deal)
    with reward 0. Deal rewards add up to the game totals (game episodes) or the deal's points."""
    n = 4
    env = ManniVectorEnv("basic", num_envs=n, target=2, episode=episode)
    assert env.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = env.reset(seed=5)
    paid = np.zeros((n, 3))
    ended = np.zeros(n, bool)
    episodes = continued = 0
    for _ in range(600):
        actions = env.sample()
        actions[ended] = 62  # ignored in the reset step, even though illegal
        games = list(env.core.games)
        obs, rewards, terminated, truncated, info = env.step(actions)
        assert np.all(info["acting_seat"][ended] == -1) and np.all(rewards[ended] == 0)
        assert not (terminated[ended] | truncated[ended]).any() and obs["action_mask"][ended].any(1).all()
        for i in np.flatnonzero(ended):  # a finished game is replaced; an unfinished one goes on
            continued += env.core.games[i] is games[i]
            assert (env.core.games[i] is games[i]) != games[i].finished
        paid[ended] = 0
        paid += info["seat_rewards"]
        done = terminated | truncated
        for i in np.flatnonzero(done):
            game = env.core.games[i]  # the game stays in its slot until the reset step
            expected = game.totals if episode == "game" else game.rounds[-1].points
            assert np.array_equal(paid[i], expected) and (game.finished or episode == "deal")
            view = game.view(int(info["acting_seat"][i]))
            assert np.array_equal(obs["observation"][i], env.core.encoder.encode(view))
            assert not obs["action_mask"][i].any() and info["to_move"][i] == -1
        ended = done
        episodes += int(done.sum())
    assert episodes >= 8 and (continued >= 4 if episode == "deal" else continued == 0)


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
            assert (info["episode"]["l"][info["_episode"]] > 30).all()  # a deal: 36 cards played and more
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


@pytest.mark.parametrize("backend", ["python", "numba"])
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
