"""The vector env plays by the engine's rules in every variant: identical deals and actions give
identical masks, observations, rewards, infos, terminal flags and records, for thousands of deals."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pytest

from manni_env.engine import GameState
from manni_env.env import outcome_rewards
from manni_env.observation import ObservationEncoder
from manni_env.records import game_record, validate_record
from manni_env.rules import VARIANT_TABLE, VARIANTS, make_rules
from manni_env.vector import VectorManni

# (rules, history, reward, slots, steps): small targets and deal caps make many games end and reset;
# the announcement variants have a fixed length (12 or 18 deals of about 55 decisions)
CASES = [
    (make_rules("hornafjardar", max_deals=1), "full", "deal", 64, 700),
    (make_rules("hornafjardar", target=3, first_dealer=2), "summary", "outcome", 32, 1400),
    (make_rules("basic", target=2, negative=True, max_deals=3), "summary", "outcome", 64, 700),
    (make_rules("basic", target=3), "full", "deal", 32, 1200),
    (make_rules("trjamann"), "full", "deal", 16, 3000),
    (make_rules("laugarvatn"), "summary", "outcome", 16, 3000),
]
IDS = [f"{rules.variant}-{history}-{reward}" for rules, history, reward, *_ in CASES]


def _play(rules, history, reward, n, steps, seed, deals=None, layout="v0"):
    """Random legal play in the vector env; returns the env and every step's inputs and outputs."""
    venv = VectorManni(rules, n, history=history, reward=reward, log_games=True, layout=layout)
    obs, mask, to_move = venv.reset(seed, deals)
    rng = np.random.default_rng(seed)
    steps_log = []
    for _ in range(steps):
        actions = (rng.random(mask.shape) * mask).argmax(1)
        out = venv.step(actions)
        steps_log.append((obs, mask, to_move, actions, *out[3:]))
        obs, mask, to_move = out[:3]
    return venv, steps_log


def _games_by_slot(venv: VectorManni) -> dict[int, list]:
    games: dict[int, list] = {}
    for log in venv.finished_logs + venv.logs:
        games.setdefault(log.slot, []).append(log)
    return games


def _fresh(rules, log) -> GameState:
    """An engine game fed the slot's deals as explicit deals (actions applied by the test)."""
    return GameState(make_rules(rules.variant, **{**rules.options(), "first_dealer": log.first_dealer}),
                     deals=list(log.deals))


def _check_against_engine(venv: VectorManni, steps_log, reward: str, validate: int = 2) -> tuple[int, int]:
    """Replay every slot's games in the engine step by step and compare everything the vector env
    returned; returns (games finished, deals finished)."""
    rules = venv.rules
    encoder = ObservationEncoder(rules, venv.encoder.history, venv.encoder.layout)
    games, deals = 0, 0
    for i, logs in _games_by_slot(venv).items():
        logs = iter(logs)
        log = next(logs)
        state = _fresh(rules, log)
        for obs, mask, to_move, actions, rewards, terminated, truncated, infos in steps_log:
            assert state.to_move == to_move[i]
            assert np.flatnonzero(mask[i]).tolist() == state.legal_actions()
            assert encoder.encode(state.view(state.to_move)).tobytes() == obs[i].tobytes()
            rounds = len(state.rounds)
            state.apply(int(actions[i]))
            over = len(state.rounds) > rounds
            assert infos["deal_over"][i] == over and infos["new_deal"][i] == over
            assert infos["new_game"][i] == state.finished
            expected = (0.0, 0.0, 0.0)
            if over:
                result = state.rounds[-1]
                for name in ("tricks_won", "points", "plus", "minus", "totals"):
                    assert tuple(infos[name][i]) == getattr(result, name)
                expected = result.points if reward == "deal" else expected
                deals += 1
            else:
                assert not infos["points"][i].any()
            if state.finished and reward == "outcome":
                expected = outcome_rewards(state.winners)
            assert rewards[i].tobytes() == np.array(expected, np.float32).tobytes()
            assert bool(terminated[i]) == (state.finished and not state.truncated)
            assert bool(truncated[i]) == state.truncated
            if state.finished:
                assert tuple(np.flatnonzero(infos["winners"][i])) == state.winners
                record = game_record(log.replay(rules))  # the vector env's own log replays into the same record
                assert record == game_record(state)
                if games < validate:
                    validate_record(record)
                games += 1
                log = next(logs)
                state = _fresh(rules, log)
            else:
                assert not infos["winners"][i].any()
    return games, deals


@pytest.mark.parametrize("rules,history,reward,n,steps", CASES, ids=IDS)
def test_vector_env_matches_engine(rules, history, reward, n, steps):
    venv, steps_log = _play(rules, history, reward, n, steps, seed=11)
    games, deals = _check_against_engine(venv, steps_log, reward)
    assert deals >= 350 and games >= (10 if rules.is_announcement else 150)


# layout v1 (the trick-play segments): fewer steps, every variant, both histories
V1_CASES = [
    (make_rules("hornafjardar", max_deals=2), "summary", 32, 400),
    (make_rules("basic", target=2, max_deals=3), "full", 32, 300),
    (make_rules("trjamann"), "summary", 8, 600),
    (make_rules("laugarvatn"), "full", 8, 400),
]


@pytest.mark.parametrize("rules,history,n,steps", V1_CASES, ids=[f"{r.variant}-{h}" for r, h, *_ in V1_CASES])
def test_v1_layout_matches_engine_and_extends_v0(rules, history, n, steps):
    venv, steps_log = _play(rules, history, "deal", n, steps, seed=11, layout="v1")
    games, deals = _check_against_engine(venv, steps_log, "deal", validate=0)
    assert deals > 0
    _, v0 = _play(rules, history, "deal", n, steps, seed=11)  # the same games: v0 is v1's prefix
    for (obs1, *_), (obs0, *_) in zip(steps_log, v0):
        assert obs1[:, : obs0.shape[1]].tobytes() == obs0.tobytes()


@pytest.mark.parametrize("rules", [make_rules("hornafjardar", max_deals=1), make_rules("basic", max_deals=1),
                                   make_rules("trjamann"), make_rules("laugarvatn")], ids=lambda r: r.variant)
def test_uncompiled_kernels_play_the_same_games(rules):
    """``backend="python"`` runs the same kernel functions uncompiled: identical outputs and state
    (one-deal games: many game ends, ties on top among them), in layout v1, whose prefix is v0."""
    envs = [VectorManni(rules, 4, history="full", reward="outcome", backend=b, layout="v1")
            for b in ("numba", "python")]
    assert envs[1].backend == "python"
    outs = [env.reset(seed=5) for env in envs]
    rng = np.random.default_rng(5)
    deals = 0
    for _ in range(200):
        for a, b in zip(outs[0], outs[1]):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        actions = (rng.random(outs[0][1].shape) * outs[0][1]).argmax(1)
        steps = [env.step(actions) for env in envs]
        for key in steps[0][-1]:
            assert np.array_equal(steps[0][-1][key], steps[1][-1][key])
        deals += int(steps[0][-1]["deal_over"].sum())
        outs = [step[:-1] for step in steps]
    for name in envs[0].state._fields:
        assert np.array_equal(getattr(envs[0].state, name), getattr(envs[1].state, name)), name
    assert np.array_equal(envs[0].observe([0, 1, 1], [2, 0, 1]), envs[1].observe([0, 1, 1], [2, 0, 1]))
    assert deals >= 2


@pytest.mark.parametrize("variant", VARIANTS)
def test_views_and_waiting_seats_match_the_engine(variant):
    """``view(i, seat)`` equals the engine's view of every seat, and ``observe(games, seats)``
    (used to bootstrap the values of seats not on turn) encodes it."""
    rules = make_rules(variant, **({"target": 3} if "target" in VARIANT_TABLE[variant].options else {}))
    venv, steps_log = _play(rules, "full", "deal", 4, 300, seed=5)
    games = _games_by_slot(venv)
    states = {i: _fresh(rules, logs.pop(0)) for i, logs in games.items()}
    encoder = ObservationEncoder(rules, "full")
    replay = VectorManni(rules, 4, history="full")
    replay.reset(5)
    for _, _, _, actions, *_ in steps_log:
        for seat in range(3):
            batch = replay.observe(np.arange(4), seat)
            for i, state in states.items():
                # the engine replays with first_dealer fixed in its rules; everything else must match
                assert dataclasses.replace(replay.view(i, seat), rules=state.rules) == state.view(seat)
                assert encoder.encode(state.view(seat)).tobytes() == batch[i].tobytes()
        replay.step(actions)
        for i in states:
            states[i].apply(int(actions[i]))
            if states[i].finished:
                states[i] = _fresh(rules, games[i].pop(0))


@pytest.mark.parametrize("variant", VARIANTS)
def test_explicit_deals_are_played_first(variant):
    """``reset(seed, deals)`` plays the given deals first (as ``GameState(deals=...)``), then random ones."""
    rules = make_rules(variant, first_dealer=1)
    source = GameState(rules, seed=3)
    rng = np.random.default_rng(3)
    given = [source.deal]
    while len(given) < 3:  # the engine's next deals
        source.apply(int(rng.choice(source.legal_actions())))
        if source.deal is not given[-1]:
            given.append(source.deal)
    deals = [given, given[:2], [], given[:1]]
    venv, steps_log = _play(rules, "summary", "deal", 4, 250, seed=8, deals=deals)
    logs = _games_by_slot(venv)
    for i, slot_deals in enumerate(deals):
        assert logs[i][0].deals[: len(slot_deals)] == slot_deals
        assert len(logs[i][0].deals) > len(slot_deals)  # random deals follow
    assert logs[0][0].deals[3] != logs[1][0].deals[2]  # each slot its own random deals
    _check_against_engine(venv, steps_log, "deal")


def test_bad_explicit_deals_are_refused_and_change_nothing():
    rules = make_rules("hornafjardar", first_dealer=0)
    venv = VectorManni(rules, 2)
    obs, mask, _ = venv.reset(seed=1)
    before = [a.copy() for a in venv.state]
    deal = venv.deal(0)
    with pytest.raises(ValueError, match="one list of deals per game slot"):
        venv.reset(2, [[deal]])
    with pytest.raises(ValueError, match=r"deals\[1\]\[0\]: cards dealt twice"):
        venv.reset(2, [[], [dataclasses.replace(deal, manni=(deal.hands[0][0], *deal.manni[1:]))]])
    with pytest.raises(ValueError, match=r"deals\[0\]\[1\]: the cut card .* must be in the dealer's \(seat 1\) hand"):
        venv.reset(2, [[deal, deal], []])  # the second deal has another dealer
    assert all(np.array_equal(a, b) for a, b in zip(before, venv.state))
    assert np.array_equal(venv.observe(np.arange(2)), obs) and np.array_equal(venv.action_mask(), mask)


def test_same_seed_same_games_and_slots_independent_of_batch_size():
    rules = make_rules("trjamann")
    runs = []
    for n in (3, 5, 3):
        venv = VectorManni(rules, n)
        obs, mask, _ = venv.reset(seed=4)
        trace = [obs[:3].copy()]
        for _ in range(300):
            obs, mask, *_ = venv.step(mask.argmax(1))  # first legal action: depends on the slot only
            trace.append(obs[:3].copy())
        runs.append(np.stack(trace))
    assert np.array_equal(runs[0], runs[1]) and np.array_equal(runs[0], runs[2])
    assert not np.array_equal(runs[0][:, 0], runs[0][:, 1])


@pytest.mark.parametrize("variant,digest", [("hornafjardar", "9f22e388f4167457"), ("basic", "74a1578504445aa5")])
def test_seeding_scheme_is_unchanged(variant, digest):
    """The same seed gives the same games as earlier releases (digest of observations and rewards)."""
    venv = VectorManni(make_rules(variant, target=3), 8, history="full")
    obs, mask, _ = venv.reset(seed=2024)
    sha = hashlib.sha256()
    for _ in range(400):
        sha.update(obs.tobytes())
        obs, mask, _, rewards, *_ = venv.step(mask.argmax(1))
        sha.update(rewards.tobytes())
    assert sha.hexdigest()[:16] == digest
