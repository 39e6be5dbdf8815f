"""The vector env plays by the engine's rules: identical deals and actions give identical
masks, observations, rewards, terminal flags and records, for thousands of games."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from manni_env import actions as A
from manni_env.engine import GameState
from manni_env.observation import ObservationEncoder
from manni_env.records import game_record, validate_record
from manni_env.rules import make_rules
from manni_env.vector import VectorManni

try:
    import numba  # noqa: F401

    BACKENDS = ["numpy", "numba"]
except ImportError:  # the numba backend is optional
    BACKENDS = ["numpy"]

# (rules, history, slots, steps); small targets and a deal cap make many games end and reset
CASES = [
    (make_rules("hornafjardar", target=3), "summary", 48, 1500),
    (make_rules("hornafjardar", max_deals=2), "full", 48, 1300),
    (make_rules("basic", target=3), "full", 48, 900),
    (make_rules("basic", target=2, negative=True, max_deals=3), "summary", 48, 900),
]


def _play(rules, history, n, steps, seed, backend="numpy"):
    """Random legal play in the vector env; returns the env and every step's inputs and outputs."""
    venv = VectorManni(rules, n, history=history, log_games=True, backend=backend)
    obs, mask, to_move = venv.reset(seed)
    rng = np.random.default_rng(seed)
    steps_log = []
    for _ in range(steps):
        actions = (rng.random(mask.shape) * mask).argmax(1)
        out = venv.step(actions)
        steps_log.append((obs, mask, to_move, actions, *out[3:]))
        obs, mask, to_move = out[:3]
    return venv, steps_log


# every case with numpy; one case per variant with numba (same kernels for all cases)
BACKEND_CASES = [("numpy", *case) for case in CASES] + [("numba", *CASES[i]) for i in (0, 2) if "numba" in BACKENDS]


@pytest.mark.parametrize("backend,rules,history,n,steps", BACKEND_CASES,
                         ids=lambda c: getattr(c, "variant", c if isinstance(c, str) else None))
def test_vector_env_matches_engine(backend, rules, history, n, steps):
    venv, steps_log = _play(rules, history, n, steps, seed=11, backend=backend)
    encoder = ObservationEncoder(rules, history)
    games_by_slot: dict[int, list] = {}
    for log in venv.finished_logs + venv.logs:
        games_by_slot.setdefault(log.slot, []).append(log)
    finished = 0
    for i in range(n):
        logs = iter(games_by_slot[i])
        log = next(logs)
        state = _fresh(rules, log)
        for obs, mask, to_move, actions, rewards, terminated, truncated, infos in steps_log:
            assert state.to_move == to_move[i]
            assert np.flatnonzero(mask[i]).tolist() == state.legal_actions()
            assert encoder.encode(state.view(state.to_move)).tobytes() == obs[i].tobytes()
            rounds = len(state.rounds)
            state.apply(int(actions[i]))
            if len(state.rounds) > rounds:
                result = state.rounds[-1]
                assert infos["deal_over"][i] and tuple(rewards[i]) == result.points
                for name in ("tricks_won", "points", "plus", "minus", "totals"):
                    assert tuple(infos[name][i]) == getattr(result, name)
            else:
                assert not infos["deal_over"][i] and not rewards[i].any()
            assert bool(terminated[i] or truncated[i]) == state.finished
            if state.finished:
                assert bool(truncated[i]) == state.truncated
                assert tuple(np.flatnonzero(infos["winners"][i])) == state.winners
                # the vector env's own log replays into the same record
                record = game_record(log.replay(rules))
                assert record == game_record(state)
                validate_record(record)
                finished += 1
                log = next(logs)
                state = _fresh(rules, log)
    assert finished >= 300


def _fresh(rules, log) -> GameState:
    """An engine game fed the slot's deals as explicit deals (actions applied by the test)."""
    return GameState(make_rules(rules.variant, **{**rules.options(), "first_dealer": log.first_dealer}),
                     deals=list(log.deals))


@pytest.mark.skipif("numba" not in BACKENDS, reason="numba not installed")
@pytest.mark.parametrize("rules,history,reward", [(make_rules("hornafjardar", target=3), "full", "deal"),
                                                  (make_rules("basic", target=2, max_deals=3), "summary", "outcome")],
                         ids=["hornafjardar", "basic"])
def test_numba_backend_plays_the_numpy_backends_games(rules, history, reward):
    """Same seed, same actions: identical outputs of every step, ``infos`` included."""
    envs = [VectorManni(rules, 32, history=history, reward=reward, backend=b) for b in ("numpy", "numba")]
    outs = [env.reset(seed=7) for env in envs]
    rng = np.random.default_rng(7)
    for _ in range(400):
        for a, b in zip(outs[0], outs[1]):
            assert a.dtype == b.dtype and np.array_equal(a, b)
        actions = (rng.random(outs[0][1].shape) * outs[0][1]).argmax(1)
        steps = [env.step(actions) for env in envs]
        infos = [step[-1] for step in steps]
        assert list(infos[0]) == list(infos[1])
        for key in infos[0]:
            assert infos[0][key].dtype == infos[1][key].dtype and np.array_equal(infos[0][key], infos[1][key])
        outs = [step[:-1] for step in steps]


def test_same_seed_same_games_and_slots_independent_of_batch_size():
    rules = make_rules("hornafjardar")
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


@pytest.mark.parametrize("backend", BACKENDS)
def test_illegal_action_is_rejected_and_changes_nothing(backend):
    venv = VectorManni(make_rules("basic"), 4, backend=backend)
    obs, mask, _ = venv.reset(seed=0)
    actions = mask.argmax(1)
    actions[2] = A.EXCHANGE_DONE  # not legal in Basic's swap phase
    with pytest.raises(ValueError, match="illegal action 52 in game 2"):
        venv.step(actions)
    assert np.array_equal(venv.action_mask(), mask)
    assert np.array_equal(venv._observe(), obs)
    with pytest.raises(ValueError, match="shape"):
        venv.step(actions[:3])


def test_announcement_variants_are_refused_clearly():
    with pytest.raises(ValueError, match="not vectorized"):
        VectorManni(make_rules("trjamann"), 2)


@pytest.mark.parametrize("variant", ["hornafjardar", "basic"])
def test_views_and_waiting_seats_match_the_engine(variant):
    """``view(i, seat)`` equals the engine's view of every seat, and ``encode(..., seats)`` (used to
    bootstrap values of seats not on turn) encodes it."""
    rules = make_rules(variant, target=3)
    venv, steps_log = _play(rules, "summary", 6, 250, seed=5)
    games = {}
    for log in venv.finished_logs + venv.logs:
        games.setdefault(log.slot, []).append(log)
    states = {i: _fresh(rules, logs.pop(0)) for i, logs in games.items()}
    encoder = ObservationEncoder(rules)
    replay = VectorManni(rules, 6)
    replay.reset(5)
    for _, _, _, actions, *_ in steps_log:
        for seat in range(3):
            seats = np.full(6, seat)
            batch = replay.encoder.encode(replay, np.arange(6), seats)
            for i, state in states.items():
                # the engine replays with first_dealer fixed in its rules; everything else must match
                assert dataclasses.replace(replay.view(i, seat), rules=state.rules) == state.view(seat)
                assert encoder.encode(state.view(seat)).tobytes() == batch[i].tobytes()
        replay.step(actions)
        for i in states:
            states[i].apply(int(actions[i]))
            if states[i].finished:
                states[i] = _fresh(rules, games[i].pop(0))


def test_outcome_rewards_match_the_aec_env():
    from manni_env.env import outcome_rewards

    venv = VectorManni(make_rules("basic", target=2, max_deals=3), 32, reward="outcome")
    _, mask, _ = venv.reset(seed=2)
    rng = np.random.default_rng(2)
    ended = 0
    for _ in range(600):
        _, mask, _, rewards, terminated, truncated, infos = venv.step((rng.random(mask.shape) * mask).argmax(1))
        done = terminated | truncated
        assert not rewards[~done].any()
        for i in np.flatnonzero(done):
            winners = tuple(int(s) for s in np.flatnonzero(infos["winners"][i]))
            assert tuple(rewards[i]) == pytest.approx(outcome_rewards(winners))
            ended += 1
    assert ended > 20
