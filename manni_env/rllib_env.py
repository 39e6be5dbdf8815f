"""Manni as an RLlib ``MultiAgentEnv`` (new API stack), with frozen baselines as RLlib modules.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``); nothing else in :mod:`manni_env`
imports this module.

The env is a thin turn-based adapter over the engine (like the PettingZoo env, it is one more
adapter of :class:`~manni_env.engine.GameState`, not a wrapper of it: RLlib's ``PettingZooEnv``
would need the observation keys renamed and adds an AEC round trip per step). Agents are
``player_0..2`` (= seats 0..2), the PettingZoo env's names.

=================  ==========================================================================
Observation        ``Dict``: ``"observations"`` ``Box(float32, (encoder.size,))`` (the acting
                   seat's :class:`~manni_env.observation.ObservationEncoder` vector) and
                   ``"action_mask"`` ``Box(0, 1, (63,), float32)``, the keys of RLlib's
                   action-masking example (:class:`MaskedPPOTorchRLModule`); with a baseline
                   also ``"baseline_action"`` ``Discrete(63)`` (see below)
Turns              only the agent on turn gets an observation; at the episode's end all three
                   get a final one (RLlib needs it to bootstrap values after truncation)
Action space       ``Discrete(63)`` (:mod:`manni_env.actions`)
Reward             each seat's deal score when a deal ends (every step gives all three seats a
                   reward, 0 between deals; RLlib credits it to the seat's last action)
Episode            ``"game"``: a whole game (truncated at the deal cap); ``"deal"``: one deal of
                   an ongoing game, which continues at the next ``reset()``
=================  ==========================================================================

**Frozen baselines, the RLlib way.** Every seat is mapped to an RLModule by the algorithm's
policy-mapping function (:class:`SeatMapping`): the shared trainable self-play module ``"main"``,
or a frozen baseline module that is not in ``policies_to_train``. Our baselines (``rule_based``
and the other registry agents) act on a :class:`~manni_env.view.SeatView`, which exists only
inside the env process, next to the game state: an RLModule only ever sees the observation. So
with ``baseline="rule_based"`` the env asks its own copy of that agent (one per seat, each given
only its seat's view, with the env's own generator) for the seat on turn and puts the answer in
the observation as ``"baseline_action"``; :class:`BaselineRLModule` plays exactly that action.
Which seats the baseline plays is decided where RLlib decides it, by the mapping function, per
episode; the trainable module ignores the key (:class:`MaskedPPOTorchRLModule` reads only
``"observations"`` and ``"action_mask"``). Nothing leaks: the key derives from the acting seat's
own view. The price is one baseline move per step, also on the trained module's turns (the env
does not know the mapping); ``rule_based`` takes under a millisecond per move.
"""

from __future__ import annotations

import zlib
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.rl_module import RLModule
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN

from .actions import NUM_ACTIONS
from .engine import GameState
from .observation import ObservationEncoder
from .rules import make_rules

AGENTS = ("player_0", "player_1", "player_2")
EPISODES = ("game", "deal")
MAIN = "main"
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
    - ``episode``: ``"game"`` (default) or ``"deal"``;
    - ``baseline``: a registry spec (``"rule_based"``) or ``None`` (pure self-play, no key);
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
        self.episode = config.get("episode", "game")
        if self.episode not in EPISODES:
            raise ValueError(f"episode must be one of {', '.join(EPISODES)}; got {self.episode!r}")
        self.encoder = ObservationEncoder(self.rules, history=config.get("history", "summary"))
        self.baseline_spec = config.get("baseline")
        self.baselines = [_make_agent(self.baseline_spec) for _ in AGENTS] if self.baseline_spec else None
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
        points = state.rounds[-1].points if deal_over else (0, 0, 0)
        rewards = {a: float(points[s]) for s, a in enumerate(AGENTS)}
        done = state.finished or (deal_over and self.episode == "deal")
        truncated = state.truncated and state.finished
        if done:
            obs = {a: self._observe(s) for s, a in enumerate(AGENTS)}
        else:
            obs = {AGENTS[state.to_move]: self._observe(state.to_move)}
        return obs, rewards, {"__all__": done and not truncated}, {"__all__": truncated}, {}

    def _observe(self, seat: int) -> dict[str, np.ndarray | int]:
        view = self.state.view(seat)
        obs: dict[str, np.ndarray | int] = {
            OBS: self.encoder.encode(view),
            MASK: self.encoder.action_mask(view).astype(np.float32),
        }
        if self.baselines is not None:
            obs[BASELINE_ACTION] = int(self.baselines[seat].act(view, self.rng)) if view.legal_actions else 0
        return obs


def _make_agent(spec: str):
    from agents.registry import make_agent  # only for named baselines: adapters do not need agents

    return make_agent(spec)


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO module with illegal actions masked out of its logits.

    The recipe of RLlib's ``ActionMaskingTorchRLModule`` example, on the current
    ``DefaultPPOTorchRLModule`` (the example extends a deprecated class): the networks are built
    for the ``"observations"`` Box, and every forward pass adds ``log(action_mask)`` (clamped to
    the most negative float) to the action logits, so an illegal action is never sampled and PPO's
    probabilities are those of the masked distribution.
    """

    def __init__(self, *, observation_space: gym.spaces.Dict | None = None, **kwargs):
        if not isinstance(observation_space, gym.spaces.Dict) or {OBS, MASK} - set(observation_space.spaces):
            raise ValueError(f"{type(self).__name__} needs a Dict observation space with keys {OBS!r} and {MASK!r}, "
                             f"got {observation_space}")
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space[OBS], **kwargs)

    def setup(self) -> None:
        super().setup()  # networks for the "observations" Box
        self.observation_space = self.observation_space_with_mask

    def _forward(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split_mask(batch)
        return _masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        mask, batch = _split_mask(batch)
        return _masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict, embeddings: Any = None):
        if embeddings is None:
            batch = _split_mask(batch)[1]
        return super().compute_values(batch, embeddings)


def _split_mask(batch: dict) -> tuple[torch.Tensor, dict]:
    """(action mask, a shallow copy of ``batch`` whose observation is the vector alone)."""
    obs = batch[Columns.OBS]
    return obs[MASK], {**batch, Columns.OBS: obs[OBS]}


def _masked(out: dict, mask: torch.Tensor) -> dict:
    out[Columns.ACTION_DIST_INPUTS] = out[Columns.ACTION_DIST_INPUTS] + torch.clamp(torch.log(mask), min=FLOAT_MIN)
    return out


class BaselineRLModule(RLModule):
    """A frozen baseline: plays the ``"baseline_action"`` its seat's env-side agent chose.

    Not trainable (leave it out of ``policies_to_train``); it has no parameters.
    """

    def _forward(self, batch: dict, **kwargs) -> dict:
        obs = batch[Columns.OBS]
        if BASELINE_ACTION not in obs:
            raise ValueError(f"{type(self).__name__} needs env_config['baseline'] set (no {BASELINE_ACTION!r} key)")
        return {Columns.ACTIONS: obs[BASELINE_ACTION]}

    def _forward_train(self, batch: dict, **kwargs) -> dict:
        raise NotImplementedError("a frozen baseline is not trainable: keep it out of policies_to_train")


class SeatMapping:
    """The policy-mapping function: per episode, ``baseline_seats`` seats (0, 1 or 2) play the
    baseline module and the others the shared ``"main"`` module. Which seats is a rotation
    drawn from the episode id, so the learner meets the baseline from every position."""

    def __init__(self, baseline_seats: int = 0, baseline_module: str = "rule_based"):
        if baseline_seats not in (0, 1, 2):
            raise ValueError(f"baseline_seats must be 0, 1 or 2 (main keeps at least one seat), got {baseline_seats!r}")
        self.baseline_seats = baseline_seats
        self.baseline_module = baseline_module

    def __call__(self, agent_id: str, episode: Any, **kwargs) -> str:
        shift = zlib.crc32(str(episode.id_).encode()) % 3
        seat = AGENTS.index(agent_id)
        return self.baseline_module if (seat + shift) % 3 < self.baseline_seats else MAIN
