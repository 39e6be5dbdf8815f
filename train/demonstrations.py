"""Warm-start data for imitation: a teacher's decisions with their returns to go.

Both PPO trainers start by cloning a baseline (the actor learns its moves, the critic their
returns) before self-play; :func:`collect_demonstrations` makes that data set on the vector env,
where the teacher plays every seat of many games at once, and keeps it compactly
(:class:`Demonstrations`: about 160 bytes a decision instead of 2.5 KB); :func:`imitate` is the
cloning both trainers run on it (the fast trainer's: :func:`manni_train.warm_start.warm_start`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass

import numpy as np
import torch

from manni_agents.vector_policy import make_vector_policy
from manni_env.actions import NUM_ACTIONS
from manni_env.observation import ObservationEncoder
from manni_env.rules import Rules
from manni_env.shaping import VectorTrickRewards
from manni_env.vector import VectorManni
from manni_train.critic_view import UNSEEN_SIZE, pack_flags, unseen_cards

#: teachers that act for a whole batch of vector games
TEACHERS = ("rule_based", "random")
#: most games stepped in lockstep, and fewest decisions per game (several deals, every phase)
MAX_GAMES, MIN_STEPS = 1024, 200
#: most decisions the warm start's accuracy and value error are measured on (evenly spaced over the
#: data: within about 0.2 points of the whole's accuracy, in a tenth of the time on the defaults)
MEASURED_ROWS = 65_536
#: the blocks of scaled numbers of the observation layouts (first and last segment of each); a
#: layout holds the first block (v0's), v1 also the second
NUMBERS = (("exchange_counts", "deal_index"), ("unseen_above", "unseen_above"))


def column_runs(columns: np.ndarray) -> list[tuple[int, int, int]]:
    """Increasing ``columns`` as runs of consecutive columns, each ``(first, end, i)``: columns
    ``first:end`` are ``columns[i : i + end - first]``."""
    starts = np.flatnonzero(np.diff(columns, prepend=-2) != 1)
    ends = np.append(starts[1:], columns.size)
    return [(int(columns[a]), int(columns[b - 1]) + 1, int(a)) for a, b in zip(starts, ends)]


class ObservationCodec:
    """Exact compact storage of observations: the 0/1 flags packed eight to a byte, the blocks of
    scaled numbers (:mod:`manni_env.observation`, :data:`NUMBERS`) kept as float32; a
    Hornafjarðarmanni observation takes 149 bytes instead of 2,464 (layout v1: 375 instead of 3,320)."""

    def __init__(self, rules: Rules, history: str = "summary", layout: str = "v0"):
        encoder = ObservationEncoder(rules, history=history, layout=layout)
        offsets = {s.name: (s.offset, s.offset + s.size) for s in encoder.segments}
        is_number = np.zeros(encoder.size, bool)
        for first, last in NUMBERS:
            if first in offsets:
                is_number[offsets[first][0] : offsets[last][1]] = True
        self.size = encoder.size
        self.numbers = np.flatnonzero(is_number)  # the columns of scaled numbers, in order
        self.flag_columns = np.flatnonzero(~is_number)  # everything else is a 0/1 flag
        self.flags = self.flag_columns.size
        self.flag_runs, self.number_runs = column_runs(self.flag_columns), column_runs(self.numbers)

    def encode(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(k, size) observations → (k, ⌈flags/8⌉) uint8 packed flags and (k, numbers) float32;
        ``ValueError`` if a flag is not 0 or 1 (the layout is not the one assumed here)."""
        flags = obs.take(self.flag_columns, axis=1)
        bits = flags.astype(bool)
        if not np.array_equal(bits, flags):
            raise ValueError("observation flags must be 0 or 1: the observation layout changed")
        return np.packbits(bits, axis=1), obs.take(self.numbers, axis=1).astype(np.float32)

    def decode(self, bits: np.ndarray, numbers: np.ndarray) -> np.ndarray:
        """The float32 observations :meth:`encode` was given."""
        out = np.empty((len(bits), self.size), np.float32)
        for part, runs in ((np.unpackbits(bits, axis=1, count=self.flags), self.flag_runs), (numbers, self.number_runs)):
            for first, end, source in runs:  # slices: ten times faster than scattering every column
                out[:, first:end] = part[:, source : source + end - first]
        return out


@dataclass
class Demonstrations:
    """A teacher's decisions, stored compactly: observations by :class:`ObservationCodec`, legal
    masks packed eight to a byte, actions as uint8, returns to go as float32, and with ``--critic
    deal`` the cards hidden from each decision's seat (:mod:`manni_train.critic_view`), packed."""

    codec: ObservationCodec
    obs_bits: np.ndarray
    obs_numbers: np.ndarray
    mask_bits: np.ndarray
    actions: np.ndarray
    returns: np.ndarray
    unseen_bits: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.actions)

    @property
    def nbytes(self) -> int:
        """Memory taken by the stored arrays."""
        arrays = (self.obs_bits, self.obs_numbers, self.mask_bits, self.actions, self.returns, self.unseen_bits)
        return sum(a.nbytes for a in arrays if a is not None)

    def rows(self, idx: np.ndarray | slice) -> dict[str, np.ndarray]:
        """Rows ``idx`` as training arrays: ``obs`` (k, obs_size) float32, ``masks`` (k, 63) bool,
        ``actions`` (k,) int64 and ``returns`` (k,) float32; with unseen cards also ``unseen`` (k,
        :data:`~manni_train.critic_view.UNSEEN_SIZE`) float32."""
        rows = {"obs": self.codec.decode(self.obs_bits[idx], self.obs_numbers[idx]),
                "masks": np.unpackbits(self.mask_bits[idx], axis=1, count=NUM_ACTIONS).view(bool),
                "actions": self.actions[idx].astype(np.int64), "returns": self.returns[idx]}
        if self.unseen_bits is not None:
            rows["unseen"] = np.unpackbits(self.unseen_bits[idx], axis=1, count=UNSEEN_SIZE).astype(np.float32)
        return rows


def collect_demonstrations(rules: Rules, samples: int, seed: int, history: str = "summary", reward: str = "trick",
                           teacher: str = "rule_based", backend: str = "auto",
                           reward_of: str = "own", critic: str = "seat", layout: str = "v0") -> Demonstrations:
    """``samples`` decisions of ``teacher`` playing every seat of vector games: their observations
    (``history``, ``layout``),
    legal masks, actions and returns to go under the training ``reward`` and ``reward_of`` (its seat's
    rewards from that decision to the end of the deal; :mod:`manni_env.shaping`), and with ``critic``
    ``"deal"`` the cards hidden from the seat, as :class:`Demonstrations`.

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
    venv = VectorManni(rules, n, history=history, backend=backend, layout=layout)
    codec = ObservationCodec(rules, history, layout)
    policy, rng, games = make_vector_policy(teacher, rules, history, backend), np.random.default_rng(seed), np.arange(n)
    shaping = VectorTrickRewards(venv, reward, reward_of)
    obs, mask, to_move = venv.reset(seed=seed)
    b_bits = np.zeros((steps, n, -(-codec.flags // 8)), np.uint8)
    b_numbers = np.zeros((steps, n, codec.numbers.size), np.float32)
    b_mask = np.zeros((steps, n, -(-NUM_ACTIONS // 8)), np.uint8)
    b_act = np.zeros((steps, n), np.uint8)
    b_seat = np.zeros((steps, n), np.int64)
    pack = pack_flags(rules) if critic == "deal" else None
    b_unseen = np.zeros((steps, n, -(-UNSEEN_SIZE // 8)), np.uint8) if pack is not None else None
    step_rewards: list[np.ndarray] = []  # (n, 3) training rewards of each step
    deal_end: list[np.ndarray] = []  # (n,) deals over in each step
    closed = np.zeros(n, bool)  # the deal under way at the last recorded step is over
    t = 0
    while t < steps or not closed.all():
        actions = policy.act(venv, games, obs, mask, rng)  # the teacher plays every seat
        if t < steps:
            b_bits[t], b_numbers[t] = codec.encode(obs)
            b_mask[t], b_act[t], b_seat[t] = np.packbits(mask, axis=1), actions, to_move
            if b_unseen is not None:
                b_unseen[t] = np.packbits(unseen_cards(venv.state, pack, games, to_move).astype(bool), axis=1)
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
    for t in reversed(range(len(step_rewards))):
        togo[deal_end[t]] = 0.0
        togo += step_rewards[t]
        if t < steps:
            returns[t] = togo[games, b_seat[t]]

    def rows(a: np.ndarray) -> np.ndarray:
        return a.reshape(steps * n, *a.shape[2:])[:samples]

    return Demonstrations(codec, rows(b_bits), rows(b_numbers), rows(b_mask), rows(b_act), rows(returns),
                          None if b_unseen is None else rows(b_unseen))


def imitate(
    evaluate: Callable[[dict[str, torch.Tensor]], tuple[torch.Tensor, torch.Tensor]],
    greedy: Callable[[dict[str, torch.Tensor]], torch.Tensor],
    params: list[torch.nn.Parameter],
    data: Demonstrations,
    *,
    epochs: int,
    lr: float,
    batch_size: int,
    generator: torch.Generator,
    value_scale: float = 1.0,
    value_weight: float = 0.5,
    precision: AbstractContextManager = nullcontext(),
    desc: str = "warm start",
    progress_bar: bool = False,
    each_step: Callable[[], object] = lambda: None,
) -> dict:
    """Behaviour cloning warm start, for every trainer: the actor learns the teacher's moves
    (cross-entropy under the legal mask), the critic the returns to go (MSE, scaled by
    ``value_scale``, weighted by ``value_weight``), with Adam over ``params`` and the gradient norm clipped at 1, minibatches in
    ``generator``'s order, decoded from ``data`` a minibatch at a time.

    ``evaluate(batch)`` gives the log-probabilities of ``batch["actions"]`` and the values of
    ``batch["obs"]``; ``greedy(batch)`` the policy's most likely actions; ``each_step()`` is called
    after every optimizer step (the vector trainer fits torch's threads there). Returns the accuracy and
    the value MSE on the data (on :data:`MEASURED_ROWS` evenly spaced decisions where there are
    more) and the number of samples (``bc/...``)."""
    from tqdm import tqdm

    def rows(idx) -> dict[str, torch.Tensor]:
        return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in data.rows(idx).items()}

    optimizer = torch.optim.Adam(params, lr=lr, fused=True)  # one kernel for all parameters (all on the CPU)
    n = len(data)
    for _ in tqdm(range(epochs), desc=desc, unit="epoch", disable=not progress_bar):
        for idx in torch.randperm(n, generator=generator).split(batch_size):
            batch = rows(idx.numpy())
            with precision:
                log_prob, values = evaluate(batch)
            loss = -log_prob.float().mean()
            loss = loss + value_weight * torch.nn.functional.mse_loss(values.float(), batch["returns"] * value_scale)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            each_step()
    hits, squared, measured = 0, 0.0, np.arange(0, n, -(-n // MEASURED_ROWS))  # evenly spaced, every phase
    with torch.no_grad(), precision:
        for idx in np.array_split(measured, -(-measured.size // 8192)):
            batch = rows(idx)
            hits += int((greedy(batch) == batch["actions"]).sum())
            _, values = evaluate(batch)
            squared += float(((values.float() - batch["returns"] * value_scale) ** 2).sum())
    return {"bc/accuracy": hits / measured.size, "bc/value_mse": squared / measured.size, "bc/samples": n}
