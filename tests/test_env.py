"""The PettingZoo AEC environment manni_v0: API conformance, seeding, rewards, episodes, errors."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

from manni_env import IllegalActionError, manni_v0
from manni_env.engine import Phase
from manni_env.env import AGENTS, outcome_rewards
from manni_env.rules import VARIANTS
from helpers.global_rngs import disturb_global_rngs

pytestmark = [
    # api_test's advice for Box/Discrete observations: a dict with an action mask is PettingZoo's classic format
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
    pytest.mark.filterwarnings("ignore:render_mode='human' needs an interactive matplotlib backend"),
]




def play(env, rng: np.random.Generator, max_steps: int = 10**6) -> list[tuple]:
    """Random legal play in the canonical agent_iter loop; returns the trajectory."""
    trajectory = []
    for agent in env.agent_iter(max_steps):
        obs, reward, termination, truncation, info = env.last()
        trajectory.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward,
                           termination, truncation))
        if termination or truncation:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[int(rng.integers(len(legal)))])
        env.step(action)
    return trajectory


@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_api(variant):
    api_test(manni_v0.env(variant=variant), num_cycles=300)


def test_pettingzoo_api_options():
    api_test(manni_v0.env(variant="hornafjardar", history="full", episode="game"), num_cycles=100)
    api_test(manni_v0.env(variant="basic", reward="outcome", episode="game", target=3), num_cycles=300)


@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_seed(variant):
    seed_test(lambda: manni_v0.env(variant=variant), num_cycles=100)


@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_render(variant, capsys):
    render_test(lambda render_mode=None: manni_v0.env(variant=variant, render_mode=render_mode),
                custom_tests={"ansi": lambda text: text.startswith(f"Manni ({variant})")})
    assert "on turn" in capsys.readouterr().out  # human mode prints the table


def test_render_shows_only_the_hand_on_turn():
    env = manni_v0.raw_env(variant="hornafjardar", render_mode="ansi")
    env.reset(seed=5)
    text = env.render()
    game = env.game
    seat = game.to_move
    assert f"Hand of {AGENTS[seat]}" in text
    assert sum(line.startswith("Hand of") for line in text.splitlines()) == 1
    hand_line = next(line for line in text.splitlines() if line.startswith("Hand of"))
    tokens = hand_line.split(":", 1)[1].split()
    ranks = [t for t in tokens if t not in ("S:", "H:", "D:", "C:", "-")]
    assert len(ranks) == len(game.hand(seat))  # the own hand, one rank per card, nothing more
    assert "tricks won" in text and "total" in text
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert manni_v0.raw_env().render() is None


@pytest.mark.parametrize("variant", VARIANTS)
def test_pickle_round_trip(variant):
    env = manni_v0.env(variant=variant, history="full")
    copy = pickle.loads(pickle.dumps(env))
    env.reset(seed=3)
    copy.reset(seed=3)
    assert play(env, np.random.default_rng(0), 200) == play(copy, np.random.default_rng(0), 200)


def test_same_seed_same_game_despite_global_rngs():
    def run(disturb: int):
        env = manni_v0.env(variant="hornafjardar")
        disturb_global_rngs(disturb)
        env.reset(seed=11)
        disturb_global_rngs(disturb + 10)
        first = play(env, np.random.default_rng(1), 400)
        env.reset()  # no seed: the next deal (default one-deal episodes) of the same game
        disturb_global_rngs(disturb + 20)
        return first, play(env, np.random.default_rng(2), 400)

    a, b = run(1), run(2)
    assert a == b
    assert a[0] != a[1]  # the second episode is another deal


def test_unseeded_resets_differ():
    a, b = manni_v0.raw_env(), manni_v0.raw_env()
    a.reset()
    b.reset()
    assert a.game.deal != b.game.deal


@pytest.mark.parametrize("variant", VARIANTS)
def test_mask_equals_legal_actions(variant):
    env = manni_v0.raw_env(variant=variant, episode="deal")
    rng = np.random.default_rng(4)
    for episode in range(2):
        env.reset(seed=episode)
        for agent in env.agent_iter():
            obs, _, termination, truncation, _ = env.last()
            masks = {a: env.observe(a)["action_mask"] for a in env.agents}
            if termination or truncation:
                assert all(not m.any() for m in masks.values())
                env.step(None)
                continue
            legal = env.game.legal_actions()
            assert AGENTS[env.game.to_move] == agent
            assert np.flatnonzero(obs["action_mask"]).tolist() == legal
            assert all(not masks[a].any() for a in env.agents if a != agent)
            env.step(legal[int(rng.integers(len(legal)))])


def test_illegal_action_in_raw_env_raises_and_changes_nothing():
    env = manni_v0.raw_env(variant="basic")
    env.reset(seed=8)
    rng = np.random.default_rng(0)
    while env.game.phase != Phase.PLAY or not env.game.trick:
        legal = env.game.legal_actions()
        env.step(legal[int(rng.integers(len(legal)))])
    seat = env.game.to_move
    hand = env.game.hand(seat)
    not_held = next(c for c in range(52) if c not in hand and c % 13)
    off_suit = [c for c in hand if c not in env.game.legal_actions()]
    before = (env.game.to_dict(), env.agent_selection, dict(env.rewards), dict(env._cumulative_rewards),
              env.observe(AGENTS[seat])["observation"].tobytes())
    for bad, message in [(not_held, "does not hold"), (99, "out of range"), (None, "integer"),
                         *[(c, "must follow suit") for c in off_suit[:1]]]:
        with pytest.raises(IllegalActionError, match=message):
            env.step(bad)
        after = (env.game.to_dict(), env.agent_selection, dict(env.rewards), dict(env._cumulative_rewards),
                 env.observe(AGENTS[seat])["observation"].tobytes())
        assert after == before


def test_illegal_action_through_wrappers_ends_the_game():
    env = manni_v0.env()
    env.reset(seed=1)
    agent = env.agent_selection
    mask = env.last()[0]["action_mask"]
    env.step(int(np.flatnonzero(mask == 0)[0]))
    assert all(env.terminations.values())
    assert env._cumulative_rewards[agent] == -1


def test_deal_episode_rewards_are_zero_sum_and_games_continue():
    env = manni_v0.raw_env(variant="hornafjardar", episode="deal")
    rng = np.random.default_rng(6)
    env.reset(seed=21)
    game = env.game
    totals = np.zeros(3)
    for deal in range(3):
        returns = dict.fromkeys(AGENTS, 0.0)
        steps = 0
        for agent in env.agent_iter():
            obs, reward, termination, truncation, _ = env.last()
            returns[agent] += reward
            env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
        assert len(game.rounds) == deal + 1  # one deal per episode
        points = game.rounds[-1].points
        assert [returns[a] for a in AGENTS] == list(points)
        assert sum(points) == 0
        totals += points
        env.reset()
        assert env.game is game and game.deal_index == deal + 1  # the same game goes on
    assert list(totals) == game.totals
    env.reset(seed=21)
    assert env.game is not game and env.game.deal_index == 0


@pytest.mark.parametrize("variant", VARIANTS)
def test_deal_rewards_add_up_to_the_game_totals(variant):
    env = manni_v0.raw_env(variant=variant, episode="game")
    env.reset(seed=2)
    returns = dict.fromkeys(AGENTS, 0.0)
    rng = np.random.default_rng(3)
    for agent in env.agent_iter():
        obs, reward, termination, truncation, _ = env.last()
        returns[agent] += reward
        assert env.infos[agent] == {}  # nothing hidden travels in infos
        env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert env.game.finished
    assert [returns[a] for a in AGENTS] == env.game.totals
    if variant != "basic":
        assert sum(returns.values()) == 0


def test_outcome_reward_is_zero_sum_at_game_end():
    env = manni_v0.raw_env(variant="hornafjardar", reward="outcome", episode="game", target=4)
    rng = np.random.default_rng(5)
    for seed in range(3):
        env.reset(seed=seed)
        returns = dict.fromkeys(AGENTS, 0.0)
        for agent in env.agent_iter():
            obs, reward, termination, truncation, _ = env.last()
            if not (termination or truncation):
                assert reward == 0
            returns[agent] += reward
            env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert tuple(returns[a] for a in AGENTS) == outcome_rewards(env.game.winners)
        assert abs(sum(returns.values())) < 1e-9


def test_outcome_formula():
    assert outcome_rewards((1,)) == (-0.5, 1.0, -0.5)
    assert outcome_rewards((0, 2)) == (0.5, -1.0, 0.5)
    assert outcome_rewards((0, 1, 2)) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize("episode, truncated", [("game", True), ("deal", False)])
def test_the_deal_cap_truncates_game_episodes_only(episode, truncated):
    env = manni_v0.raw_env(variant="hornafjardar", target=1000, max_deals=2, episode=episode)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    while True:
        last = None
        for agent in env.agent_iter():
            last = env.last()
            obs, _, termination, truncation, _ = last
            env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if env.game.finished:
            break
        assert last[2] is True and last[3] is False  # the first deal's episode
        env.reset()
    assert (last[2], last[3]) == (not truncated, truncated)
    assert env.game.truncated and len(env.game.rounds) == 2


def test_state_is_privileged_full_state():
    env = manni_v0.env(variant="trjamann")
    env.reset(seed=4)
    state = env.state()
    assert env.state_space.contains(state)
    hands = state[:156].reshape(3, 52)
    game = env.unwrapped.game
    for seat in range(3):
        assert np.flatnonzero(hands[seat]).tolist() == game.hand(seat)


def test_bad_options_raise_clear_errors():
    with pytest.raises(ValueError, match="valid variants"):
        manni_v0.env(variant="whist")
    with pytest.raises(ValueError, match="valid options"):
        manni_v0.env(variant="trjamann", target=5)
    with pytest.raises(ValueError, match="target"):
        manni_v0.env(variant="basic", target=0)
    with pytest.raises(ValueError, match="history"):
        manni_v0.env(history="long")
    with pytest.raises(ValueError, match="episode"):
        manni_v0.env(episode="trick")
    with pytest.raises(ValueError, match="reward"):
        manni_v0.env(reward="money")
    with pytest.raises(ValueError, match="episode='game'"):
        manni_v0.env(reward="outcome", episode="deal")
    with pytest.raises(ValueError, match="render_mode"):
        manni_v0.env(render_mode="video")


def test_explicit_deals_option_and_spaces():
    env = manni_v0.raw_env(variant="basic", first_dealer=0)
    env.reset(seed=1)
    deal = env.game.deal
    other = manni_v0.raw_env(variant="basic", first_dealer=0)
    other.reset(seed=99, options={"deals": [deal]})
    assert other.game.deal == deal
    with pytest.raises(ValueError, match="Deal"):
        other.reset(options={"deals": ["not a deal"]})
    space = env.observation_space("player_1")
    assert space["observation"].shape == (env.encoder.size,) and env.action_space("player_1").n == 63
    assert env.metadata["name"] == "manni_v0"


def test_registered_with_pettingzoo():
    env = pettingzoo.make("aec", manni_v0.ENV_ID, variant="basic", target=5)
    env.reset(seed=0)
    assert env.unwrapped.rules.target == 5 and env.unwrapped.rules.variant == "basic"


def test_unknown_reset_options_are_reported():
    env = manni_v0.raw_env(variant="basic")
    with pytest.warns(UserWarning, match=r"ignores unknown options \['deal'\]; it understands 'deals'"):
        env.reset(seed=0, options={"deal": []})  # a misspelt key is not silently ignored
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env.reset(seed=0, options={"options": 1})  # what PettingZoo's api_test passes: ignored, as Gymnasium envs do
