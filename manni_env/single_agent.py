"""A single-agent Gymnasium env for SB3 / sb3-contrib: one learner, two embedded opponents.

The learner sits in a seat drawn per episode from the env's own generator; the other two seats
are :class:`manni_agents.base.Policy` objects. ``step(action)`` applies the learner's action, then lets
the opponents play until it is the learner's turn again or the episode is over, and returns the
learner's own reward: its deal score whenever a deal ends during that step (the final deal's
score included, even when an opponent's card ends it). Turn-based seats are never interleaved in
one trajectory, so every deal result reaches the learner.

=================  ==========================================================================
Observation        ``Box(float32, (encoder.size,))``: :class:`~manni_env.observation.ObservationEncoder`
                   of the learner's :class:`~manni_env.view.SeatView` (see ``manni layout``), in
                   the observation layout ``layout`` (``"v0"``, the default, or ``"v1"``)
Action space       ``Discrete(63)`` (:mod:`manni_env.actions`); ``action_space.sample()`` is legal
Legal actions      ``action_masks()`` (int8 → bool) for ``MaskablePPO``; never all zeros
Reward             ``reward="deal"``: the learner's deal score when a deal ends, else 0;
                   ``reward="trick"`` (shaped, same sum, :mod:`manni_env.episodes`): each trick
                   the learner wins pays at once what it adds to the deal score (+1, or −1 in
                   Nullo), and the deal's end pays the rest of the deal score
Episode            ``"deal"`` (default): one deal of an ongoing game (the game continues on the next
                   ``reset()`` so scores in the observation look like real games; a new game
                   starts when one ends or when ``reset`` gets a seed); ``"game"``: a whole game
=================  ==========================================================================

``opponents`` (required) is either two :class:`~manni_agents.base.Policy` objects or a callable
``opponents(rng) -> (Policy, Policy)`` asked at every episode (opponent pools). This package does
not know the agents' registry: :func:`manni_agents.envs.single_agent_env` builds the env from agent
specs such as ``"rule_based"``. An illegal learner action raises
:class:`~manni_env.engine.IllegalActionError` and leaves the state unchanged.

An illegal learner action never changes the game. ``illegal_action="penalize"`` (default, what
Gymnasium's ``check_env`` and unmasked algorithms need) ends the episode with reward
:data:`ILLEGAL_REWARD` (−1) and ``info["illegal_action"] = True``; the next ``reset()`` starts a new
game. ``illegal_action="raise"`` raises :class:`~manni_env.engine.IllegalActionError` instead.
Masked play never meets either.

``gymnasium.make("manni_env/Manni-v0", ...)`` (``layout="v1"``: observation layout v1) builds this env with opponents named by agent specs
(registered by ``import manni_env``; built by :func:`manni_agents.envs.single_agent_env`). Render modes:
``ansi`` (the learner's information as text), ``rgb_array`` (the table from the learner's seat,
:mod:`manni_env.render`) and ``human`` (that picture in a window).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from manni_env.actions import NUM_ACTIONS, action_to_str
from manni_env.engine import GameState, IllegalActionError
from manni_env.episodes import (DEFAULT_EPISODE, DEFAULT_REWARD, LEARNER_REWARDS, check_episode, check_reward, engine_rewards,
                       episode_end)
from manni_env.observation import ObservationEncoder
from manni_env.rules import Rules, make_rules

Policy = Any  # a manni_agents.base.Policy: act(view, rng) -> action, reset()
OpponentFactory = Callable[[np.random.Generator], Sequence[Policy]]
ILLEGAL_ACTIONS = ("penalize", "raise")
ILLEGAL_REWARD = -1.0


class LegalActionSpace(gym.spaces.Discrete):
    """``Discrete(63)`` whose ``sample()`` without a mask draws a *legal* action of the env's
    current state, so random-action loops (and SB3's ``check_env``) never trip the illegal-action
    error. Pickled copies (e.g. sent from a ``SubprocVecEnv`` worker) sample like a plain ``Discrete``."""

    def __init__(self, n: int, mask_fn: Callable[[], np.ndarray] | None = None):
        super().__init__(n)
        self._mask_fn = mask_fn

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None and self._mask_fn is not None:
            legal = self._mask_fn().astype(np.int8)
            if legal.any():
                mask = legal
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_mask_fn"] = None
        return state


def check_policy(policy: Policy, rules: Rules | None = None) -> Policy:
    """``policy`` itself if it has ``act`` and ``reset`` (else ``TypeError``) and, with ``rules``,
    can play them (its ``check_rules``, if it has one, raises ``ValueError`` otherwise)."""
    if callable(getattr(policy, "act", None)) and callable(getattr(policy, "reset", None)):
        check = getattr(policy, "check_rules", None)
        if rules is not None and callable(check):
            check(rules)
        return policy
    hint = " (build the env with manni_agents.envs.single_agent_env to name agents by spec)" if isinstance(policy, str) else ""
    raise TypeError(f"an opponent is a Policy with act(view, rng) and reset(), got {policy!r}{hint}")


def _action_index(action) -> int:
    """``action`` as an int if it is an integer (numpy integers and one-element integer arrays too);
    ``IllegalActionError`` (a ``ValueError``) for anything else, e.g. ``3.9`` or ``"3"``."""
    if isinstance(action, np.ndarray) and action.size == 1 and action.dtype.kind in "iu":
        return int(action.reshape(()))
    if isinstance(action, bool) or not isinstance(action, (numbers.Integral, np.integer)):
        raise IllegalActionError(f"an action is an integer in 0..{NUM_ACTIONS - 1}, got {action!r}")
    return int(action)


class SingleAgentManniEnv(gym.Env):
    """One learner against two embedded opponents (see the module docstring)."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 1}

    def __init__(
        self,
        variant: str = "hornafjardar",
        *,
        opponents: Sequence[Policy] | OpponentFactory,
        history: str = "summary",
        episode: str = DEFAULT_EPISODE,
        seed: int | None = None,
        reward: str = DEFAULT_REWARD,
        render_mode: str | None = None,
        illegal_action: str = "penalize",
        layout: str = "v0",
        **rule_options,
    ):
        check_episode(episode)
        check_reward(reward, LEARNER_REWARDS, episode)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {', '.join(self.metadata['render_modes'])}, "
                             f"got {render_mode!r}")
        if illegal_action not in ILLEGAL_ACTIONS:
            raise ValueError(f"illegal_action must be one of {', '.join(ILLEGAL_ACTIONS)}, got {illegal_action!r}")
        self.illegal_action = illegal_action
        self._illegal_end = False  # the episode ended on an illegal action (penalize)
        self._window = None
        self.rules = make_rules(variant, **rule_options)
        self.encoder = ObservationEncoder(self.rules, history=history, layout=layout)
        self.history = history
        self.episode = episode
        self.reward = reward
        self.render_mode = render_mode
        if callable(opponents) and not isinstance(opponents, (str, Sequence)):
            self._factory: OpponentFactory | None = opponents
            self._fixed: list | None = None
        else:
            if isinstance(opponents, str) or len(opponents) != 2:
                raise ValueError(f"opponents must be two agents or a callable returning two, got {opponents!r}")
            self._factory, self._fixed = None, [check_policy(p, self.rules) for p in opponents]
        self.observation_space = gym.spaces.Box(self.encoder.low, self.encoder.high, dtype=np.float32)
        self.action_space = LegalActionSpace(NUM_ACTIONS, self.action_masks)
        self._rng = np.random.default_rng(seed)
        self.state: GameState | None = None
        self.seat = 0
        self.policies: list = [None, None, None]
        self._rounds_seen = 0  # deals whose score the learner has been given
        self._episode_start = 0  # deals finished before this episode began
        self._paid = np.zeros(3)  # reward "trick": paid so far for the deal under way, by seat
        self._tricks = np.zeros(3, np.int64)  # reward "trick": tricks paid for in the deal under way

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if options:
            raise ValueError(f"reset takes no options, got {sorted(options)}")
        super().reset(seed=seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        # "deal" episodes continue the game only from a deal boundary (the previous episode's end)
        new_game = (
            seed is not None or self.episode == "game" or self.state is None or self.state.finished
            or not self._episode_over() or self._illegal_end
        )
        self._illegal_end = False
        self.seat = int(self._rng.integers(3))
        pair = self._factory(self._rng) if self._factory is not None else self._fixed
        if len(pair) != 2:
            raise ValueError(f"the opponent factory must return two policies, got {len(pair)}")
        others = [s for s in range(3) if s != self.seat]
        self.policies = [None, None, None]
        for s, policy in zip(others, pair):
            self.policies[s] = check_policy(policy, self.rules)
            self.policies[s].reset()  # stateless policies between deals; memory-keeping ones restart
        if new_game:
            self.state = GameState(self.rules, seed=int(self._rng.integers(2**63)))
        self._rounds_seen = self._episode_start = len(self.state.rounds)
        self._paid[:], self._tricks[:] = 0.0, 0
        reward = self._play_opponents()
        if self._episode_over():
            # cannot happen: the learner holds cards in every deal; guard against silent empty episodes
            raise RuntimeError(f"episode ended before the learner (seat {self.seat}) could act (reward {reward})")
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        state = self.state
        if state is None:
            raise RuntimeError("call reset() before step()")
        if self._episode_over() or self._illegal_end:
            raise RuntimeError("the episode is over: call reset()")
        action = _action_index(action)
        if not state.is_legal(action):
            if self.illegal_action == "penalize":
                self._illegal_end = True
                info = {**self._info(), "illegal_action": True}
                return self._obs(), ILLEGAL_REWARD, True, False, info
            legal = " ".join(action_to_str(a) for a in state.legal_actions())
            name = action_to_str(action) if 0 <= action < NUM_ACTIONS else "out of range"
            raise IllegalActionError(
                f"illegal action {action} ({name}) for the learner (seat {self.seat}) in phase "
                f"{state.phase.name}; legal: {legal}"
            )
        state.apply(action)
        reward = self._collect_rewards() + self._play_opponents()
        terminated, truncated = self._episode_end()
        if self.render_mode == "human":
            self.render()
        return self._obs(), float(reward), terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner as bools (sb3-contrib's ``MaskablePPO`` hook)."""
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        if self.state is not None and self.state.to_move == self.seat:
            mask[self.state.legal_actions()] = True
        return mask

    def render(self) -> str | np.ndarray | None:
        """The learner's seat: text (``ansi``), an image (``rgb_array``) or a window (``human``)."""
        if self.render_mode is None or self.state is None:
            return None
        from manni_env.render import HumanWindow, render_rgb, view_text

        view = self.state.view(self.seat)
        if self.render_mode == "ansi":
            return view_text(view)
        if self.render_mode == "rgb_array":
            return render_rgb(view)
        self._window = self._window or HumanWindow(self.metadata["render_fps"])
        self._window.show(lambda: render_rgb(view), view_text(view))
        return None

    def close(self) -> None:
        if self._window is not None:
            self._window.close()

    # ------------------------------------------------------------------ internals
    def _obs(self) -> np.ndarray:
        return self.encoder.encode(self.state.view(self.seat))

    def _info(self) -> dict:
        # only what the learner may know: its seat and its own legal actions
        return {"seat": self.seat, "action_mask": self.action_masks()}

    def _episode_end(self) -> tuple[bool, bool]:
        """(terminated, truncated): the episode ends with the game, or with its deal (``"deal"``)."""
        state = self.state
        return episode_end(self.episode, len(state.rounds) > self._episode_start, state.finished, state.truncated)

    def _episode_over(self) -> bool:
        return any(self._episode_end())

    def _collect_rewards(self) -> float:
        """The learner's reward for the action just applied (:func:`~manni_env.episodes.engine_rewards`):
        the (rest of the) deal points if it ended a deal, and with ``reward="trick"`` the worth of
        the tricks it won in the deal under way."""
        state = self.state
        if len(state.rounds) > self._rounds_seen:
            self._rounds_seen = len(state.rounds)
            paid = engine_rewards(self.reward, state, True, paid=self._paid)
            self._paid[:], self._tricks[:] = 0.0, 0
        elif self.reward == "trick" and state.tricks_won != tuple(self._tricks):  # tricks won: public
            won = np.subtract(state.tricks_won, self._tricks)
            paid = engine_rewards(self.reward, state, False, won=won)
            self._paid += paid
            self._tricks += won
        else:
            return 0.0
        return paid[self.seat]

    def _play_opponents(self) -> float:
        """Opponents move until the learner is on turn or the episode is over; their rewards to the
        learner (deal ends caused by an opponent's card) are returned."""
        reward = 0.0
        state = self.state
        while not self._episode_over() and state.to_move != self.seat:
            seat = state.to_move
            state.apply(self.policies[seat].act(state.view(seat), self._rng))
            reward += self._collect_rewards()
        return reward
