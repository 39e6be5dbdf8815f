"""One rollout worker of the vector-env PPO trainers: games in lockstep, batched opponents, GAE.

:class:`VectorRollout` owns ``num_envs`` games of :class:`manni_env.vector.VectorManni`, who plays
each seat of each game (the learner, ``rule_based`` through :class:`manni_agents.rule_based_vector.VectorRuleBased`,
``random`` from the masks, a frozen snapshot of the learner from its pool
(:class:`~manni_train.snapshot_pool.SnapshotPool`, all snapshots in one pass), or the fixed
opponents of ``--opponents``, :mod:`manni_train.opponents`), the shaped reward
(:class:`manni_env.shaping.VectorTrickRewards`) and the rollout buffers. :meth:`VectorRollout.collect`
plays ``num_steps`` vector steps with the given actor and critic and returns the learner's
decisions with their advantages and returns (GAE along each (game, seat) trajectory) as a
:class:`RolloutBatch`, ready for the PPO update. It does so in two halves: :meth:`VectorRollout.play`
plays with the actor alone and keeps the trajectories (:class:`Played`), and :meth:`Played.batch`
runs the critic over all their decisions in one batch and walks GAE along them, so that another
process can take the second half (the rollout process leaves it to the update's).

The fast trainer (:mod:`manni_train.ppo_vector`) runs one in its own process; the Ray trainer
(:mod:`manni_train.ray_vector`) runs one in each of its runner actors and concatenates their batches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Protocol

import numpy as np
import torch
from torch import nn

from manni_agents.rule_based_vector import VectorRuleBased
from manni_agents.vector_policy import RandomPolicy, VectorPolicy, act_seats, make_vector_policy
from manni_env.actions import NUM_ACTIONS
from manni_env.shaping import VectorTrickRewards
from manni_env.vector import VectorManni
from manni_train.critic_view import UNSEEN_SIZE, pack_flags, unseen_cards
from manni_train.expert_iteration import ExpertIteration, target_rows
from manni_train.precision import autocast, compute_dtype, padded_rows, run_padded
from manni_train.snapshot_pool import SnapshotPool, sample

LEARNER, RULE_BASED, RANDOM = -1, -2, -3  # seat controllers; k >= 0 is pool snapshot k
FIXED = -4  # FIXED - i: fixed opponent i of --opponents
#: a RolloutBatch's rows
TENSORS = ("obs", "mask", "actions", "logp", "values", "advantages", "returns", "unseen", "target")


class Buffers:
    """Named tensor buffers (a dataclass's fields) that can move to shared memory."""

    def buffers(self) -> dict[str, torch.Tensor | None]:
        """The buffers by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def share_memory_(self) -> Buffers:
        """Move the buffers to shared memory (another process may then read them); ``self``."""
        for buffer in self.buffers().values():
            if buffer is not None:
                buffer.share_memory_()
        return self


@dataclass
class LearnerRows(Buffers):
    """Buffers of a rollout's learner decisions, one row each (``size`` rows at most)."""

    obs: torch.Tensor  # in the compute dtype
    mask: torch.Tensor
    actions: torch.Tensor
    logp: torch.Tensor
    unseen: torch.Tensor | None  # with --critic deal
    target: torch.Tensor | None = None  # with --search-share: the search's targets (manni_train.expert_iteration)

    @classmethod
    def allocate(cls, size: int, obs_size: int, dtype: torch.dtype, unseen: bool, target: bool = False) -> LearnerRows:
        return cls(obs=torch.zeros((size, obs_size), dtype=dtype),
                   mask=torch.zeros((size, NUM_ACTIONS), dtype=torch.bool),
                   actions=torch.zeros(size, dtype=torch.long), logp=torch.zeros(size),
                   unseen=torch.zeros((size, UNSEEN_SIZE)) if unseen else None,
                   target=target_rows(size) if target else None)

    @staticmethod
    def nbytes(size: int, obs_size: int, dtype: torch.dtype, unseen: bool, target: bool = False) -> int:
        """The bytes that :meth:`allocate` takes for these buffers."""
        return size * (obs_size * dtype.itemsize + NUM_ACTIONS + 8 + 4 + (UNSEEN_SIZE * 4 if unseen else 0)
                       + (NUM_ACTIONS * 4 if target else 0))

    def first(self, rows: int) -> dict[str, torch.Tensor | None]:
        """Views of the first ``rows`` rows of every buffer, by name (:class:`RolloutBatch`'s names): a
        rollout's learner decisions."""
        return {name: None if t is None else t[:rows] for name, t in self.buffers().items()}


@dataclass
class Paths(Buffers):
    """What GAE walks along in a rollout of ``steps`` vector steps of ``games`` games: per step and game
    whether it was a learner decision, its seat, the reward credited to it and whether it ends its
    episode; and the *tails*, the (game, seat) trajectories the rollout's end cut off, with the seat's
    view at the end (the critic's bootstrap)."""

    valid: torch.Tensor  # (steps, games) bool
    seat: torch.Tensor  # (steps, games) int64
    reward: torch.Tensor  # (steps, games) float32
    done: torch.Tensor  # (steps, games) bool
    tail_game: torch.Tensor  # (3 games,) int64: the first ``tails`` rows are a rollout's tails
    tail_seat: torch.Tensor
    tail_obs: torch.Tensor  # (3 games, obs_size) in the compute dtype
    tail_unseen: torch.Tensor | None  # with --critic deal

    @classmethod
    def allocate(cls, steps: int, games: int, obs_size: int, dtype: torch.dtype, unseen: bool) -> Paths:
        return cls(valid=torch.zeros((steps, games), dtype=torch.bool),
                   seat=torch.zeros((steps, games), dtype=torch.long), reward=torch.zeros((steps, games)),
                   done=torch.zeros((steps, games), dtype=torch.bool),
                   tail_game=torch.zeros(3 * games, dtype=torch.long), tail_seat=torch.zeros(3 * games, dtype=torch.long),
                   tail_obs=torch.zeros((3 * games, obs_size), dtype=dtype),
                   tail_unseen=torch.zeros((3 * games, UNSEEN_SIZE)) if unseen else None)

    @staticmethod
    def nbytes(steps: int, games: int, obs_size: int, dtype: torch.dtype, unseen: bool) -> int:
        """The bytes that :meth:`allocate` takes for these buffers."""
        return steps * games * (1 + 8 + 4 + 1) + 3 * games * (8 + 8 + obs_size * dtype.itemsize
                                                              + (UNSEEN_SIZE * 4 if unseen else 0))


@dataclass
class Played:
    """A rollout played but not yet valued: its learner decisions (``rows``, :meth:`LearnerRows.first`),
    their :class:`Paths` with ``tails`` tails, the learner's deal scores and the rollout's times.
    :meth:`batch` makes it a :class:`RolloutBatch`."""

    rows: dict[str, torch.Tensor | None]
    paths: Paths
    tails: int
    deal_scores: list[float]
    seconds: float
    cpu_seconds: float

    @torch.no_grad()
    def batch(self, critic: nn.Module, args) -> RolloutBatch:
        """The batch of these decisions with ``critic``'s values (all of them in one pass, under
        ``args.precision``) and GAE advantages and returns (``args.gamma``, ``args.gae_lambda``)."""
        dtype, paths, k, start = compute_dtype(args.precision), self.paths, self.tails, time.time()
        with autocast(dtype):
            values = run_padded(critic, dtype, *(t for t in (self.rows["obs"], self.rows["unseen"]) if t is not None))
            tails = [paths.tail_obs[:k]] + ([] if paths.tail_unseen is None else [paths.tail_unseen[:k]])
            tail_values = run_padded(critic, dtype, *tails)
        advantages = torch.from_numpy(gae(paths, k, values.numpy(), tail_values.numpy(), args.gamma, args.gae_lambda))
        # the rows stay views of the rollout's buffers (a fresh 30 MB tensor costs its page faults)
        return RolloutBatch(**self.rows, values=values, advantages=advantages, returns=advantages + values,
                            deal_scores=self.deal_scores, seconds=self.seconds, cpu_seconds=self.cpu_seconds,
                            value_seconds=time.time() - start)


def gae(paths: Paths, tails: int, values: np.ndarray, tail_values: np.ndarray, gamma: float,
        lam: float) -> np.ndarray:
    """GAE advantages of a rollout's learner decisions (in their order: by vector step, then game)
    along each (game, seat) trajectory of ``paths``, backwards in time; ``values`` are the decisions'
    values, ``tail_values`` those of the first ``tails`` tails (the bootstrap of a cut trajectory)."""
    valid, seat = paths.valid.numpy(), paths.seat.numpy()
    reward, done = paths.reward.numpy(), paths.done.numpy()
    steps, games = valid.shape
    value = np.zeros((steps, games), np.float32)
    value[valid] = values
    adv = np.zeros((steps, games), np.float32)
    next_value = np.zeros((games, 3), np.float32)
    next_value[paths.tail_game[:tails].numpy(), paths.tail_seat[:tails].numpy()] = tail_values
    next_adv = np.zeros((games, 3), np.float32)
    for t in reversed(range(steps)):
        g = np.flatnonzero(valid[t])
        s = seat[t, g]
        live = 1.0 - done[t, g]
        delta = reward[t, g] + gamma * next_value[g, s] * live - value[t, g]
        adv[t, g] = delta + gamma * lam * live * next_adv[g, s]
        next_value[g, s] = value[t, g]
        next_adv[g, s] = adv[t, g]
    return adv[valid]


@dataclass
class RolloutBatch:
    """The learner's decisions of one or more rollouts, one row each, with what PPO needs."""

    obs: torch.Tensor
    mask: torch.Tensor
    actions: torch.Tensor
    logp: torch.Tensor  # log-probability of the action when it was drawn
    values: torch.Tensor  # the critic's value when it was drawn
    advantages: torch.Tensor  # GAE
    returns: torch.Tensor  # advantages + values
    unseen: torch.Tensor | None = None  # with --critic deal: the cards hidden from the seat (critic_view)
    target: torch.Tensor | None = None  # with --search-share: the search's targets, zeros where none (expert_iteration)
    deal_scores: list[float] = field(default_factory=list)  # deal scores of the learner's seats in finished deals
    seconds: float = 0.0  # wall time of the rollouts (the longest, for rollouts run side by side)
    cpu_seconds: float = 0.0  # process time of the rollouts (summed over runners)
    value_seconds: float = 0.0  # wall time of valuing them (the critic's pass and the GAE: Played.batch)

    @property
    def steps(self) -> int:
        """Learner decisions in the batch."""
        return int(self.actions.shape[0])

    def first(self, rows: int) -> RolloutBatch:
        """The batch of its first ``rows`` learner decisions (in order of vector step, then game), with
        its deal scores and times."""
        tensors = {name: getattr(self, name) for name in TENSORS}
        return replace(self, **{name: t[:rows] for name, t in tensors.items() if t is not None})

    def split(self, parts: int) -> list[RolloutBatch]:
        """``parts`` batches of consecutive rows, sizes differing by at most one (no deal scores)."""
        names = [name for name in TENSORS if getattr(self, name) is not None]
        pieces = [getattr(self, name).tensor_split(parts) for name in names]
        return [RolloutBatch(**dict(zip(names, tensors))) for tensors in zip(*pieces)]

    @classmethod
    def concat(cls, batches: list[RolloutBatch]) -> RolloutBatch:
        """One batch of the rows of ``batches``, in order (rollouts run side by side)."""
        if len(batches) == 1:
            return batches[0]
        tensors = {name: torch.cat([getattr(b, name) for b in batches]) for name in TENSORS
                   if getattr(batches[0], name) is not None}
        return cls(**tensors, deal_scores=[s for b in batches for s in b.deal_scores],
                   seconds=max(b.seconds for b in batches), cpu_seconds=sum(b.cpu_seconds for b in batches),
                   value_seconds=sum(b.value_seconds for b in batches))


class Sampler(Protocol):
    """Where the fast trainer's rollouts come from: a :class:`VectorRollout` in its process, its
    rollout process (:class:`~manni_train.rollout_process.ProcessSampler`) or the Ray trainer's runner
    actors (:mod:`manni_train.ray_vector`)."""

    obs_size: int

    def collect(self, actor: nn.Module, critic: nn.Module) -> RolloutBatch: ...

    def add_snapshot(self, actor: nn.Module) -> None: ...


class VectorRollout:
    """``args.num_envs`` games with their seat controllers and snapshot pool (see the module docstring).

    ``args`` is a :class:`manni_train.vector_args.Args`; ``gen`` draws the networks' actions, ``rng`` the
    seat assignments and the ``random`` seats' moves, ``seed`` the deals. The learner's rows go to
    ``slots`` :class:`LearnerRows` used in turn (two: a rollout can fill one while the update reads
    the other). ``on_step`` is called before every vector step (the rollout process's heartbeat).
    """

    def __init__(self, args, gen: torch.Generator, rng: np.random.Generator, seed: int, slots: int = 1,
                 on_step: Callable[[], object] | None = None):
        self.args, self.gen, self.rng, self.on_step = args, gen, rng, on_step
        n, T = args.num_envs, args.num_steps
        self.venv = VectorManni(args.rules(), n, history=args.history, backend=args.backend, layout=args.observation)
        self.obs_size = self.venv.obs_size
        self.obs, self.mask, self.to_move = self.venv.reset(seed=seed)
        self.dtype = compute_dtype(args.precision)
        self.pool = SnapshotPool(args.pool_size, self.dtype, gen)
        self.rule_based = VectorRuleBased()
        self.opponents = [make_vector_policy(spec, args.rules(), args.history, args.backend, args.observation)
                          for spec in args.opponents]
        self.precision = autocast(self.dtype)
        self.shaping = VectorTrickRewards(self.venv, args.reward, args.reward_of)
        self.controller = np.full((n, 3), LEARNER, np.int64)
        self.assign_seats(np.arange(n))
        # rollout buffers, in ``slots`` sets used in turn: the learner's decisions one row each, in order
        # of vector step and game (at most every game at every step), so only its rows are copied; and
        # per vector step and game what the GAE walks along (Paths)
        self.pack = pack_flags(args.rules()) if args.critic == "deal" else None  # with --critic deal
        # with --search-share, the search's targets of a share of the learner's card play
        self.expert = ExpertIteration(args, seed, self.dtype) if args.search_share else None
        self.slots = [LearnerRows.allocate(T * n, self.obs_size, self.dtype, self.pack is not None,
                                           self.expert is not None) for _ in range(slots)]
        self.paths = [Paths.allocate(T, n, self.obs_size, self.dtype, self.pack is not None) for _ in range(slots)]
        self.turn = 0  # the slot of the next rollout

    def assign_seats(self, games: np.ndarray) -> None:
        """Who plays each seat of ``games``: LEARNER, RULE_BASED, RANDOM or pool snapshot k >= 0, each seat
        drawn from ``--opponent-mix`` (at least one stays the learner's); with
        ``--opponents``, the learner one random seat and fixed opponent i (``FIXED - i``) the others."""
        args, rng, pool = self.args, self.rng, self.pool
        if self.opponents:
            rows, learner = np.arange(games.size), rng.integers(3, size=games.size)
            first = rng.integers(len(self.opponents), size=games.size)  # which opponent sits on the learner's left
            who = np.empty((games.size, 3), np.int64)
            who[rows, learner] = LEARNER
            who[rows, (learner + 1) % 3] = FIXED - first
            who[rows, (learner + 2) % 3] = FIXED - (len(self.opponents) - 1 - first)
            self.controller[games] = who
            return
        u = rng.random((games.size, 3))
        mix = args.mix()  # --opponent-mix; until the pool has a snapshot the learner takes that share
        p_snap = mix.get("snapshot", 0.0) if pool else 0.0
        p_rule_based, p_random = mix.get("rule_based", 0.0), mix.get("random", 0.0)
        who = np.full((games.size, 3), LEARNER)
        who[u < p_snap] = rng.integers(max(1, len(pool)), size=(games.size, 3))[u < p_snap]
        who[(u >= p_snap) & (u < p_snap + p_rule_based)] = RULE_BASED
        who[(u >= p_snap + p_rule_based) & (u < p_snap + p_rule_based + p_random)] = RANDOM
        nobody = np.flatnonzero((who != LEARNER).all(1))
        who[nobody, rng.integers(3, size=nobody.size)] = LEARNER  # at least one learner seat
        self.controller[games] = who

    def add_snapshot(self, actor: nn.Module) -> None:
        """Add a frozen copy of ``actor`` to the pool; beyond ``pool_size`` the oldest leaves and its
        seats go to the learner."""
        if self.pool.add(actor):
            self.controller[self.controller == 0] = LEARNER
            self.controller[self.controller > 0] -= 1

    def unseen(self, games: np.ndarray, seats: np.ndarray) -> torch.Tensor:
        """The critic's extra inputs for ``seats`` of ``games`` (with ``--critic deal`` only)."""
        return torch.from_numpy(unseen_cards(self.venv.state, self.pack, games, seats))

    def others(self) -> dict[int, VectorPolicy]:
        """The controllers of the other non-learner seats (the pool's snapshots act apart) by code, in
        the order they act each step (the order of their draws from the run's generators)."""
        fixed = {FIXED - i: opponent for i, opponent in enumerate(self.opponents)}
        return {**fixed, RULE_BASED: self.rule_based, RANDOM: RandomPolicy()}

    def collect(self, actor: nn.Module, critic: nn.Module) -> RolloutBatch:
        """Play ``num_steps`` vector steps, the learner's seats with ``actor`` (sampled); the learner's
        decisions with ``critic``'s values and GAE advantages and returns (:meth:`play`, then
        :meth:`Played.batch`)."""
        return self.play(actor).batch(critic, self.args)

    @torch.no_grad()
    def play(self, actor: nn.Module) -> Played:
        """Play ``num_steps`` vector steps, the learner's seats with ``actor`` (sampled), under
        ``--precision`` (one autocast context for the whole rollout, so bf16 copies of the weights are
        made once). The rows and paths are views of this object's buffers (:attr:`slots`,
        :attr:`paths`), valid until ``len(slots)`` more calls (copy them to keep them longer); the
        observations are stored in the compute dtype (bfloat16 under bf16: what the networks' first
        layers read)."""
        with self.precision:
            return self._play(actor)

    def _play(self, actor: nn.Module) -> Played:
        args, venv, gen, rng, controller = self.args, self.venv, self.gen, self.rng, self.controller
        n, T = args.num_envs, args.num_steps
        slot, paths = self.slots[self.turn], self.paths[self.turn]
        self.turn = (self.turn + 1) % len(self.slots)
        f_obs, f_mask, f_act, f_logp, f_unseen = slot.obs, slot.mask, slot.actions, slot.logp, slot.unseen
        b_rew, b_done, b_valid, b_seat = (t.numpy() for t in (paths.reward, paths.done, paths.valid, paths.seat))
        obs, mask, to_move = self.obs, self.mask, self.to_move
        start, cpu_start = time.time(), time.process_time()
        deal_scores: list[float] = []
        last_t = np.full((n, 3), -1, np.int64)  # each (game, seat)'s latest learner decision in this rollout
        b_valid[:] = False
        b_rew[:] = 0.0
        b_done[:] = False
        others = self.others()
        filled = 0  # learner decisions so far: the next free row of the f_ buffers
        for t in range(T):
            if self.on_step is not None:
                self.on_step()
            ctrl = controller[np.arange(n), to_move]
            learner = ctrl == LEARNER
            obs_t, mask_t = torch.from_numpy(obs), torch.from_numpy(mask)
            actions = torch.zeros(n, dtype=torch.long)
            learner_rows = np.flatnonzero(learner)
            rows = torch.from_numpy(learner_rows)
            m = learner_rows.size
            here = slice(filled, filled + m)
            padded = padded_rows(rows, self.dtype)  # one gather (padded under bf16) for the network and the buffer
            # (index_select: faster than obs_t[padded]); cast once
            learner_obs = obs_t.index_select(0, padded).to(self.dtype)
            learner_mask = mask_t.index_select(0, padded)
            logits = actor(learner_obs, learner_mask)[:m]
            f_obs[here], f_mask[here] = learner_obs[:m], learner_mask[:m]
            if f_unseen is not None:
                f_unseen[here] = self.unseen(learner_rows, to_move[learner_rows])
            a = sample(logits, gen)
            actions[rows] = a
            f_act[here] = a
            f_logp[here] = torch.log_softmax(logits, 1).gather(1, a[:, None]).squeeze(1)
            if self.expert is not None:
                self.expert.pick(venv, learner_rows, learner_mask[:m], logits, filled)
            filled += m
            snapshot = np.flatnonzero(ctrl >= 0)
            if snapshot.size:  # every snapshot's games in one pass
                played = torch.from_numpy(snapshot)
                actions[played] = self.pool.act(ctrl[snapshot], obs_t.index_select(0, played),
                                                mask_t.index_select(0, played))
            act_seats(others, ctrl, venv, obs, mask, rng, actions.numpy())
            b_valid[t] = learner
            b_seat[t] = to_move
            last_t[learner, to_move[learner]] = t
            self.shaping.before_step()
            obs, mask, to_move, rewards, terminated, truncated, infos = venv.step(actions.numpy())
            # credit each learner seat's reward to its latest decision in this rollout
            paid = self.shaping.after_step(rewards, infos["deal_over"]) * args.reward_scale
            g, s = np.nonzero((paid != 0) & (last_t >= 0) & (controller == LEARNER))
            b_rew[last_t[g, s], g] += paid[g, s]
            # end the episodes of finished deals (or games)
            over = np.flatnonzero(infos["deal_over"])
            if over.size:
                deal_scores += rewards[over][controller[over] == LEARNER].tolist()
                ended = terminated | truncated
                closing = over[ended[over]] if args.episode == "game" else over
                g, s = np.nonzero(last_t[closing] >= 0)
                b_done[last_t[closing[g], s], closing[g]] = True
                last_t[closing] = -1
                games = np.flatnonzero(ended)
                if games.size:
                    self.assign_seats(games)
        self.obs, self.mask, self.to_move = obs, mask, to_move
        if self.expert is not None:
            self.expert.fill(slot.target, actor, filled)
        # the trajectories cut by the rollout's end, with the seat's current view (their bootstrap)
        g, s = np.nonzero(last_t >= 0)
        tails = g.size
        paths.tail_game[:tails], paths.tail_seat[:tails] = torch.from_numpy(g), torch.from_numpy(s)
        paths.tail_obs[:tails] = torch.from_numpy(venv.observe(g, s))
        if paths.tail_unseen is not None:
            paths.tail_unseen[:tails] = self.unseen(g, s)
        return Played(slot.first(filled), paths, tails, deal_scores, time.time() - start,
                      time.process_time() - cpu_start)
