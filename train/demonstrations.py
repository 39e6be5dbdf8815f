"""Warm-start data for imitation: a teacher's decisions with their returns to go.

Both PPO trainers start by cloning a baseline (the actor learns its moves, the critic their
returns) before self-play; :func:`collect_demonstrations` makes that data set on the vector env,
where the teacher plays every seat of many games at once.
"""

from __future__ import annotations

import numpy as np

from agents.rule_based_vector import VectorRuleBased
from manni_env.actions import NUM_ACTIONS
from manni_env.rules import Rules
from manni_env.shaping import VectorTrickRewards
from manni_env.vector import VectorManni, random_legal_actions

#: teachers that act for a whole batch of vector games
TEACHERS = ("rule_based", "random")
#: most games stepped in lockstep, and fewest decisions per game (several deals, every phase)
MAX_GAMES, MIN_STEPS = 1024, 200


def collect_demonstrations(rules: Rules, samples: int, seed: int, history: str = "summary", reward: str = "trick",
                           teacher: str = "rule_based", backend: str = "auto") -> dict[str, np.ndarray]:
    """``samples`` decisions of ``teacher`` playing every seat of vector games: ``obs`` (samples,
    obs_size) float32, ``masks`` (samples, 63) bool, ``actions`` (samples,) int64, and ``returns``
    (samples,) float32, each decision's return to go under the training ``reward`` (its seat's
    rewards from that decision to the end of the deal; :mod:`manni_env.shaping`).

    ``min(1024, samples // 200)`` games (at least one) play side by side, each about 200
    decisions or more, so the data cover every phase of several deals; the games play on until
    every recorded deal is over. The same arguments give the same data.
    """
    if teacher not in TEACHERS:
        raise ValueError(f"the warm-start teacher must be one of {', '.join(TEACHERS)}, got {teacher!r}")
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    n = max(1, min(MAX_GAMES, samples // MIN_STEPS))
    steps = -(-samples // n)
    venv = VectorManni(rules, n, history=history, backend=backend)
    act = _teacher(teacher, np.random.default_rng(seed))
    shaping = VectorTrickRewards(venv, reward)
    obs, mask, to_move = venv.reset(seed=seed)
    b_obs = np.zeros((steps, n, venv.obs_size), np.float32)
    b_mask = np.zeros((steps, n, NUM_ACTIONS), bool)
    b_act = np.zeros((steps, n), np.int64)
    b_seat = np.zeros((steps, n), np.int64)
    step_rewards: list[np.ndarray] = []  # (n, 3) training rewards of each step
    deal_end: list[np.ndarray] = []  # (n,) deals over in each step
    closed = np.zeros(n, bool)  # the deal under way at the last recorded step is over
    t = 0
    while t < steps or not closed.all():
        actions = act(venv, mask)
        if t < steps:
            b_obs[t], b_mask[t], b_act[t], b_seat[t] = obs, mask, actions, to_move
        shaping.before_step()
        obs, mask, to_move, rewards, _, _, infos = venv.step(actions)
        step_rewards.append(shaping.after_step(rewards, infos["deal_over"]))
        deal_end.append(infos["deal_over"])
        if t >= steps - 1:
            closed |= infos["deal_over"]
        t += 1
    # return to go of each decision: its seat's rewards from that step to the end of the deal
    togo = np.zeros((n, 3), np.float32)
    returns = np.zeros((steps, n), np.float32)
    games = np.arange(n)
    for t in reversed(range(len(step_rewards))):
        togo[deal_end[t]] = 0.0
        togo += step_rewards[t]
        if t < steps:
            returns[t] = togo[games, b_seat[t]]
    keep = slice(0, samples)
    return {"obs": b_obs.reshape(steps * n, -1)[keep], "masks": b_mask.reshape(steps * n, -1)[keep],
            "actions": b_act.reshape(-1)[keep], "returns": returns.reshape(-1)[keep]}


def _teacher(name: str, rng: np.random.Generator):
    """``act(venv, mask) -> actions`` of all games."""
    if name == "random":
        return lambda venv, mask: random_legal_actions(mask, rng)
    rule_based = VectorRuleBased()
    return lambda venv, mask: rule_based.act(venv)
