"""Manni as an RLlib ``MultiAgentEnv`` (new API stack).

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``); nothing else in :mod:`manni_env`
imports this module. The RLModules that play it (masked PPO, frozen baselines) and the seat →
module mapping are training code: :mod:`manni_train.rllib_modules`.

The env is a thin turn-based adapter over the engine (like the PettingZoo env, it is one more
adapter of :class:`~manni_env.engine.GameState`, not a wrapper of it: RLlib's ``PettingZooEnv``
would need the observation keys renamed and adds an AEC round trip per step). Agents are
``player_0..2`` (= seats 0..2), the PettingZoo env's names.

=================  ==========================================================================
Observation        ``Dict``: ``"observations"`` ``Box(float32, (encoder.size,))`` (the acting
                   seat's :class:`~manni_env.observation.ObservationEncoder` vector) and
                   ``"action_mask"`` ``Box(0, 1, (63,), float32)``, the keys of RLlib's
                   action-masking example; with a baseline also ``"baseline_action"``
                   ``Discrete(63)`` (see below)
Turns              only the agent on turn gets an observation; at the episode's end all three
                   get a final one (RLlib needs it to bootstrap values after truncation)
Action space       ``Discrete(63)`` (:mod:`manni_env.actions`)
Reward             each seat's deal score when a deal ends (every step gives all three seats a
                   reward, 0 between deals; RLlib credits it to the seat's last action)
Episode            ``"deal"`` (default, :data:`~manni_env.episodes.DEFAULT_EPISODE`): one deal of
                   an ongoing game, which continues at the next ``reset()``; ``"game"``: a whole
                   game (truncated at the deal cap)
=================  ==========================================================================

**Frozen baselines, the RLlib way.** The algorithm's policy-mapping function maps every seat to an
RLModule: a shared trainable one, or a frozen baseline module. Our baselines (``rule_based`` and
the other agents of :mod:`agents`) act on a :class:`~manni_env.view.SeatView`, which exists only
inside the env process, next to the game state: an RLModule only ever sees the observation. So
``config["baseline"]``, a factory of :class:`~manni_agents.base.Policy` objects (any zero-argument
callable, e.g. ``functools.partial(manni_agents.registry.make_agent, "rule_based")``), gives the env its
own copy of that agent for each seat (each given only its seat's view, with the env's own
generator); the env asks the copy of the seat on turn and puts the answer in the observation as
``"baseline_action"``, which the frozen baseline module plays. Which seats the baseline plays is
decided where RLlib decides it, by the mapping function, per episode; the trainable module
ignores the key. Nothing leaks: the key derives from the acting seat's own view. The price is one
baseline move per step, also on the trained module's turns (the env does not know the mapping);
``rule_based`` is cheap (its time per move is on the documentation's results page).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from manni_env.actions import NUM_ACTIONS
from manni_env.engine import GameState
from manni_env.episodes import DEFAULT_EPISODE, check_episode, engine_rewards, episode_end
from manni_env.observation import ObservationEncoder
from manni_env.rules import make_rules

AGENTS = ("player_0", "player_1", "player_2")
#: Keys of the observation dict.
OBS, MASK, BASELINE_ACTION = "observations", "action_mask", "baseline_action"


def observation_space(encoder: ObservationEncoder, baseline: bool) -> gym.spaces.Dict:
    """The per-agent observation space (see the module docstring)."""
    spaces: dict[str, gym.Space] = {
        OBS: gym.spaces.Box(encoder.low, encoder.high, dtype=np.float32),
        MASK: gym.spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
    }
    if baseline:
        spaces[BASELINE_ACTION] = gym.spaces.Discrete(NUM_ACTIONS)
    return gym.spaces.Dict(spaces)


class ManniMultiAgentEnv(MultiAgentEnv):
    """Turn-based Manni for RLlib. ``config`` (RLlib's ``env_config``) keys, all optional:

    - ``variant`` (default ``"hornafjardar"``) and ``options`` (dict for :func:`make_rules`);
    - ``history``: ``"summary"`` or ``"full"`` (the observation encoder's option);
    - ``episode``: ``"deal"`` (default) or ``"game"``;
    - ``baseline``: a zero-argument callable returning a fresh :class:`~manni_agents.base.Policy` (one
      is made per seat), or ``None`` (pure self-play, no ``"baseline_action"`` key);
    - ``seed``: seeds the env's generator (``reset(seed=...)`` reseeds it).
    """

    def __init__(self, config: dict[str, Any] | None = None):
        super().__init__()
        config = dict(config or {})
        unknown = set(config) - {"variant", "options", "history", "episode", "baseline", "seed"}
        if unknown:
            raise ValueError(f"unknown env_config keys {sorted(unknown)}; valid: variant, options, history, "
                             "episode, baseline, seed")
        self.rules = make_rules(config.get("variant", "hornafjardar"), **(config.get("options") or {}))
        self.episode = config.get("episode", DEFAULT_EPISODE)
        check_episode(self.episode)
        self.encoder = ObservationEncoder(self.rules, history=config.get("history", "summary"))
        self.baselines = _baselines(config.get("baseline"))
        self.agents = self.possible_agents = list(AGENTS)
        space = observation_space(self.encoder, self.baselines is not None)
        self.observation_spaces = {a: space for a in AGENTS}
        self.action_spaces = {a: gym.spaces.Discrete(NUM_ACTIONS) for a in AGENTS}
        self.rng = np.random.default_rng(config.get("seed"))
        self.state: GameState | None = None

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        if seed is not None or self.episode == "game" or self.state is None or self.state.finished:
            self.state = GameState(self.rules, seed=int(self.rng.integers(2**63)))
            for baseline in self.baselines or ():
                baseline.reset()
        seat = self.state.to_move
        return {AGENTS[seat]: self._observe(seat)}, {}

    def step(self, action_dict: dict[str, int]):
        state = self.state
        if state is None or state.finished:
            raise RuntimeError("no game under way: call reset() before step()")
        seat = state.to_move
        agent = AGENTS[seat] if seat >= 0 else None
        if set(action_dict) != {agent}:
            raise ValueError(f"it is {agent}'s turn: step() needs exactly its action, got agents {sorted(action_dict)}")
        deals_before = len(state.rounds)
        state.apply(int(action_dict[agent]))  # IllegalActionError leaves the state unchanged
        deal_over = len(state.rounds) > deals_before
        paid = engine_rewards("deal", state, True) if deal_over else (0.0, 0.0, 0.0)
        rewards = dict(zip(AGENTS, paid))
        terminated, truncated = episode_end(self.episode, deal_over, state.finished, state.truncated)
        if terminated or truncated:
            obs = {a: self._observe(s) for s, a in enumerate(AGENTS)}
        else:
            obs = {AGENTS[state.to_move]: self._observe(state.to_move)}
        return obs, rewards, {"__all__": terminated}, {"__all__": truncated}, {}

    def _observe(self, seat: int) -> dict[str, np.ndarray | int]:
        view = self.state.view(seat)
        obs: dict[str, np.ndarray | int] = {
            OBS: self.encoder.encode(view),
            MASK: self.encoder.action_mask(view).astype(np.float32),
        }
        if self.baselines is not None:
            obs[BASELINE_ACTION] = int(self.baselines[seat].act(view, self.rng)) if view.legal_actions else 0
        return obs


def _baselines(factory: Callable[[], Any] | None) -> list | None:
    """One policy per seat from ``factory`` (see :class:`ManniMultiAgentEnv`), or ``None``."""
    if factory is None:
        return None
    if not callable(factory):
        raise TypeError("env_config['baseline'] must be a zero-argument callable returning a Policy, e.g. "
                        f"functools.partial(manni_agents.registry.make_agent, 'rule_based'); got {factory!r}")
    policies = [factory() for _ in AGENTS]
    for policy in policies:
        if not (callable(getattr(policy, "act", None)) and callable(getattr(policy, "reset", None))):
            raise TypeError(f"env_config['baseline'] returned {policy!r}, not a Policy with act(view, rng) and reset()")
    return policies
