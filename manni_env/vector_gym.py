"""Gymnasium's vector API for Manni self-play: N games, one decision per game per step.

``ManniVectorEnv(variant="hornafjardar", num_envs=64)`` (or ``gymnasium.make_vec(
"manni_env/ManniSelfPlay-v0", num_envs=64)``; ``layout="v1"``: observation layout v1) is a
``gymnasium.vector.VectorEnv``. In every game
the seat on turn decides: the observation is a dict, as in the AEC env, of ``"observation"``
(N, obs_size) float32 (that seat's :class:`~manni_env.observation.ObservationEncoder` vector) and
``"action_mask"`` (N, 63) int8 (its legal actions); ``step(actions)`` takes one action per game.
An illegal action raises ``ValueError`` naming the game, and nothing is applied.

**Rewards per seat.** A three-player game has three rewards, a vector env one per game:
``rewards[i]`` is what the seat that made step's decision in game ``i`` received (its deal score
when its action ended a deal with ``reward="deal"``; its game outcome with ``reward="outcome"``).
The other two seats are paid in the same step, so ``infos`` carries the full picture:
``seat_rewards`` (N, 3) by absolute seat, ``acting_seat`` (N,) (who decided; −1 in a reset step)
and ``to_move`` (N,) (whose view the new observation is; −1 for an ended episode). Self-play
trainers should credit ``seat_rewards`` to each seat's own last decision, as
``train/ppo_vector.py`` does.

**Episodes** (``episode``, :mod:`manni_env.episodes`): ``"deal"`` (default) ends a slot's
episode when a deal ends, and its next episode is the next deal of the same game (a new game
starts when one ends); ``"game"``: a whole game, truncated at the deal cap.

**Autoreset** (``autoreset_mode``):

- ``NEXT_STEP`` (default, Gymnasium's default, what its vector wrappers expect): the step that ends
  an episode returns its final observation (the acting seat's view, an all-zero mask) with
  ``terminated`` / ``truncated``; the next step ignores that slot's action and returns the first
  observation of the next episode (the next deal, or a new game) with reward 0. A slot must wait
  one step while the others play, which the lockstep :class:`~manni_env.vector.VectorManni` cannot
  do, so this mode steps the engine's games one by one (every variant; about as fast as N single
  envs).
- ``SAME_STEP``: the batched :class:`~manni_env.vector.VectorManni` (numba kernels, or the same
  kernels uncompiled with ``backend="python"``; every variant): the next episode starts within the
  step that ends one, the returned observation is already the next deal's (or new game's);
  ``infos`` also holds VectorManni's arrays (``deal_over``, ``points``, ``totals``, ``new_game``,
  ...). Much faster for large N.

Both modes draw each slot's games from ``np.random.SeedSequence(seed).spawn(num_envs + 1)[i]``
(the last child seeds :meth:`ManniVectorEnv.sample`). ``reset`` accepts no options (a non-empty
``options`` raises ``ValueError``). ``action_space.sample()`` draws legal actions (Gymnasium's
masked sampling with the current masks); :meth:`ManniVectorEnv.sample` does the same from the env's
own generator. ``render_mode="rgb_array"``: ``render()`` returns one picture per game
(:mod:`manni_env.render`), seen by the seat on turn.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from manni_env.actions import NUM_ACTIONS
from manni_env.engine import GameState
from manni_env.episodes import (DEFAULT_EPISODE, DEFAULT_REWARD, TABLE_REWARDS, check_episode, check_reward, engine_rewards,
                       episode_end)
from manni_env.observation import ObservationEncoder
from manni_env.rules import make_rules
from manni_env.vector import VectorManni, random_legal_actions, resolve_backend


class LegalMultiDiscrete(spaces.MultiDiscrete):
    """``MultiDiscrete([63] * N)`` whose ``sample()`` without a mask draws one *legal* action per
    game from the env's current masks (an all-zero mask, a finished game, gives 0)."""

    def __init__(self, num_envs: int, masks):
        super().__init__(np.full(num_envs, NUM_ACTIONS))
        self._masks = masks

    def sample(self, mask=None, probability=None):
        if mask is None and probability is None and self._masks is not None:
            mask = tuple(self._masks().astype(np.int8))
        return super().sample(mask=mask, probability=probability)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_masks"] = None  # a copy elsewhere samples like a plain MultiDiscrete
        return state


class ManniVectorEnv(gymnasium.vector.VectorEnv):
    """N Manni games for Gymnasium's vector API (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": ["rgb_array"], "render_fps": 1}

    def __init__(self, variant: str = "hornafjardar", num_envs: int = 64, history: str = "summary",
                 reward: str = DEFAULT_REWARD, backend: str = "auto",
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, render_mode: str | None = None,
                 episode: str = DEFAULT_EPISODE, layout: str = "v0", **options):
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            valid = ", ".join(m.value for m in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP))
            raise ValueError(f"autoreset_mode must be one of {valid}, got {autoreset_mode!r}") from None
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"autoreset_mode {mode.value} is not supported; use NextStep or SameStep")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        check_episode(episode)
        check_reward(reward, TABLE_REWARDS, episode)
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        rules = make_rules(variant, **options)
        resolve_backend(backend)  # checked in every autoreset mode (NextStep runs the engine and ignores it)
        self.metadata = {**type(self).metadata, "autoreset_mode": mode}
        self.render_mode = render_mode
        self.num_envs = num_envs
        self.episode = episode
        self.core = (_EngineGames(rules, num_envs, reward, history, episode, layout)
                     if mode == AutoresetMode.NEXT_STEP
                     else _BatchGames(rules, num_envs, reward, history, backend, episode, layout))
        enc = self.core.encoder
        self.single_observation_space = spaces.Dict({
            "observation": spaces.Box(enc.low, enc.high, dtype=np.float32),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        })
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = gymnasium.vector.utils.batch_space(self.single_observation_space, num_envs)
        self.action_space = LegalMultiDiscrete(num_envs, self.action_mask)
        self._mask = np.zeros((num_envs, NUM_ACTIONS), np.int8)
        self._sampler = np.random.default_rng()

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if options:
            raise ValueError(f"ManniVectorEnv.reset takes no options, got {sorted(options)}")
        children = np.random.SeedSequence(seed).spawn(self.num_envs + 1)
        self._sampler = np.random.default_rng(children[-1])
        obs, self._mask, to_move = self.core.reset(seed, children[:-1])
        return {"observation": obs, "action_mask": self._mask}, {"to_move": to_move}

    def step(self, actions):
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), "
                             f"got {actions.dtype} {actions.shape}")
        obs, self._mask, seat_rewards, terminated, truncated, infos = self.core.step(actions.astype(np.int64))
        acting = infos["acting_seat"]
        rewards = np.where(acting >= 0, seat_rewards[np.arange(self.num_envs), np.maximum(acting, 0)], 0.0)
        infos["seat_rewards"] = seat_rewards
        return ({"observation": obs, "action_mask": self._mask}, rewards.astype(np.float32), terminated, truncated,
                infos)

    def action_mask(self) -> np.ndarray:
        """(N, 63) int8: the legal actions of the seat on turn in each game (zeros for a finished game)."""
        return self._mask.copy()

    def sample(self) -> np.ndarray:
        """One uniformly random legal action per game from the env's own generator (0 for a finished
        game, whose action the next step ignores)."""
        return random_legal_actions(self._mask.astype(bool), self._sampler)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """``rgb_array``: one picture per game, seen by the seat on turn (or the last to act)."""
        if self.render_mode is None:
            return None
        from manni_env.render import render_rgb

        return tuple(render_rgb(self.core.view(i)) for i in range(self.num_envs))


class _EngineGames:
    """NEXT_STEP: one engine ``GameState`` per slot, so a slot whose episode ended can wait for its
    reset step."""

    def __init__(self, rules, num_envs: int, reward: str, history: str, episode: str, layout: str):
        self.rules, self.num_envs, self.reward, self.episode = rules, num_envs, reward, episode
        self.encoder = ObservationEncoder(rules, history, layout)
        self.games: list[GameState] = []
        self.rngs: list[np.random.Generator] = []
        self.viewer = np.zeros(num_envs, np.int64)  # seat on turn, or the last to act in an ended episode
        self.ended = np.zeros(num_envs, bool)  # the slot's episode ended in the last step

    def reset(self, seed, children):
        self.rngs = [np.random.default_rng(c) for c in children]
        self.games = [self._new_game(i) for i in range(self.num_envs)]
        self.ended[:] = False
        obs, mask = self._observe()
        return obs, mask, self._to_move()

    def _new_game(self, i: int) -> GameState:
        return GameState(self.rules, seed=int(self.rngs[i].integers(2**63)))

    def step(self, actions: np.ndarray):
        if not self.games:
            raise RuntimeError("call reset() before step()")
        n = self.num_envs
        for i, (game, a) in enumerate(zip(self.games, actions.tolist())):
            if not self.ended[i] and not game.is_legal(a):
                raise ValueError(f"illegal action {a} in game {i} (phase {game.phase.name}, seat {game.to_move}); "
                                 "nothing applied")
        seat_rewards = np.zeros((n, 3), np.float32)
        terminated, truncated = np.zeros(n, bool), np.zeros(n, bool)
        acting = np.full(n, -1, np.int64)
        deal_over = np.zeros(n, bool)
        for i, a in enumerate(actions.tolist()):
            game = self.games[i]
            if self.ended[i]:  # the reset step of an episode that ended in the previous step
                if game.finished:
                    self.games[i] = self._new_game(i)
                continue  # else the game goes on: its next deal is dealt already
            acting[i] = self.viewer[i] = game.to_move
            deals = len(game.rounds)
            game.apply(a)
            if len(game.rounds) > deals:  # rewards are paid and episodes end only when a deal ends
                deal_over[i] = True
                seat_rewards[i] = engine_rewards(self.reward, game, True)
                terminated[i], truncated[i] = episode_end(self.episode, True, game.finished, game.truncated)
        self.ended = terminated | truncated
        obs, mask = self._observe()
        infos = {"acting_seat": acting, "to_move": self._to_move(), "deal_over": deal_over}
        return obs, mask, seat_rewards, terminated, truncated, infos

    def _observe(self) -> tuple[np.ndarray, np.ndarray]:
        obs = np.empty((self.num_envs, self.encoder.size), np.float32)
        mask = np.zeros((self.num_envs, NUM_ACTIONS), np.int8)
        for i, game in enumerate(self.games):
            if not self.ended[i]:
                self.viewer[i] = game.to_move
            view = game.view(int(self.viewer[i]))
            self.encoder.encode(view, out=obs[i])
            if not self.ended[i]:
                mask[i, list(view.legal_actions)] = 1
        return obs, mask

    def _to_move(self) -> np.ndarray:
        return np.where(self.ended, -1, [g.to_move for g in self.games]).astype(np.int64)

    def view(self, i: int):
        return self.games[i].view(int(self.viewer[i]))


class _BatchGames:
    """SAME_STEP: the lockstep :class:`VectorManni`."""

    def __init__(self, rules, num_envs: int, reward: str, history: str, backend: str, episode: str, layout: str):
        self.venv = VectorManni(rules, num_envs, reward=reward, history=history, backend=backend, layout=layout)
        self.episode = episode
        self.encoder = self.venv.encoder
        self.to_move = np.zeros(num_envs, np.int64)

    def reset(self, seed, children):
        obs, mask, self.to_move = self.venv.reset(seed)
        return obs, mask.astype(np.int8), self.to_move

    def step(self, actions: np.ndarray):
        acting = self.to_move
        obs, mask, self.to_move, seat_rewards, finished, capped, infos = self.venv.step(actions)
        terminated, truncated = episode_end(self.episode, infos["deal_over"], finished | capped, capped)
        infos = {**infos, "acting_seat": acting, "to_move": self.to_move}
        return obs, mask.astype(np.int8), seat_rewards, terminated, truncated, infos

    def view(self, i: int):
        return self.venv.view(i, int(self.to_move[i]))
