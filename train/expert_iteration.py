"""Expert iteration inside ``manni train``: search targets on a share of the learner's card play.

    manni train --variant trjamann --search-share 0.05 --search-worlds 4 --search-target gumbel

In each rollout, each of the learner's card-play decisions with more than one legal card is picked
with probability ``--search-share`` (drawn from a generator of its own, so a run's other draws do
not move). After the rollout, the batched search (:meth:`manni_agents.search.SearchAgent.evaluate_many`)
values every legal card of the picked decisions at once: ``--search-worlds`` worlds each, sampled
from the seat's view alone (:meth:`manni_env.vector.VectorManni.view`; the hidden cards of the
rollout's games are never read), ``--search-weighting`` as the ``search`` agent weighs them, and
the rollout's actor (:class:`ActorNetwork`, under the rollout's precision) playing every seat
greedily to the end of the deal. A card's value is the search's outcome: the seat's deal points
minus the mean of the two others'. Each picked decision gets a target distribution over its cards
(:func:`search_targets`, ``--search-target``):

- ``greedy``: all on the best card (ties: the lowest);
- ``soft``: the softmax of the values divided by ``--search-temperature`` (points; default 1);
- ``gumbel``: Gumbel AlphaZero's improved policy with completed Q-values, here every legal card
  searched with the same worlds: ``softmax(logits + σ(q̂))`` with the acting policy's logits,
  ``q̂`` the values min-max normalised over the decision's cards and
  ``σ(q̂) = (GUMBEL_C_VISIT + worlds) · GUMBEL_C_SCALE · q̂`` (the paper's and ``mctx``'s constants,
  the worlds standing for the visit count); a decision whose cards are all worth the same keeps
  the policy's own distribution.

The targets travel with the rollout's rows (:attr:`manni_train.vector_rollout.RolloutBatch.target`:
zeros where no search was made), so they are made in the rollout process with ``--overlap``, and
the update adds ``--search-coef`` times the mean cross-entropy from the target to the policy over
each minibatch's searched rows (:func:`search_loss`) to PPO's loss.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from manni_agents.search import WEIGHTINGS, SearchAgent
from manni_env.actions import NUM_ACTIONS
from manni_env.observation import ObservationEncoder
from manni_env.rules import Phase, Rules
from manni_env.vector import VectorManni
from manni_train.networks import Actor
from manni_train.precision import run_padded

#: ``--search-target``: what the searched decisions are taught
TARGETS = ("greedy", "soft", "gumbel")
#: ``--search-temperature`` of ``soft`` when none is given (points)
DEFAULT_TEMPERATURE = 1.0
#: Gumbel AlphaZero's σ: (c_visit + visits) · c_scale · q̂ (Danihelka et al. 2022; mctx's defaults)
GUMBEL_C_VISIT, GUMBEL_C_SCALE = 50.0, 0.1
#: decisions searched in one batch (bounds the play-outs' state: some tens of MB at 8 worlds)
SEARCH_BATCH = 256
#: word of the search's seed sequence (the rollout's seed, then this): its generator is its own
SEARCH_STREAM = 0x5EA2C4


def check_args(args) -> None:
    """``ValueError`` naming the first bad expert-iteration option of ``args`` (a vector trainer's
    :class:`~manni_train.vector_args.Args`), one line each."""
    share = args.search_share
    if not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
        raise ValueError(f"--search-share must be between 0 and 1, got {share}")
    if args.search_worlds < 1:
        raise ValueError(f"--search-worlds must be at least 1, got {args.search_worlds}")
    if args.search_weighting not in WEIGHTINGS:
        raise ValueError(f"--search-weighting must be one of {', '.join(WEIGHTINGS)}, got {args.search_weighting!r}")
    if args.search_target not in TARGETS:
        raise ValueError(f"--search-target must be one of {', '.join(TARGETS)}, got {args.search_target!r}")
    temperature = args.search_temperature
    if temperature is not None:
        if args.search_target != "soft":
            raise ValueError(f"--search-temperature applies to --search-target soft only, got it with "
                             f"--search-target {args.search_target}")
        if not 0.0 < temperature < math.inf:
            raise ValueError(f"--search-temperature must be a positive finite number, got {temperature}")
    if not 0.0 <= args.search_coef < math.inf:
        raise ValueError(f"--search-coef must be a non-negative finite number, got {args.search_coef}")


class ActorNetwork:
    """The learner's actor as the search's rollout network: what :class:`~manni_agents.search.SearchAgent`
    asks of a ``ppo`` network (its encoder and its masked logits), for the games of ``rules`` seen
    with ``history`` in ``layout``. :attr:`actor` is set to the rollout's actor before each search."""

    def __init__(self, rules: Rules, history: str, layout: str, dtype: torch.dtype) -> None:
        self.encoder, self.dtype = ObservationEncoder(rules, history, layout), dtype
        self.actor: Actor | None = None

    def encoder_for(self, rules: Rules) -> ObservationEncoder:
        """The rollout's encoder (the search plays the rollout's own rules only)."""
        if rules != self.encoder.rules:
            raise ValueError(f"the learner's actor plays {self.encoder.rules.variant}, not {rules.variant}")
        return self.encoder

    def check_rules(self, rules: Rules) -> None:
        self.encoder_for(rules)

    @torch.no_grad()
    def policy_logits(self, obs: np.ndarray, mask: np.ndarray, rules: Rules) -> np.ndarray:
        """The actor's masked float32 logits (illegal actions: -1e8), under the caller's autocast
        (``dtype``: the rollout's compute dtype, whose batches are padded as the rollout's are)."""
        return run_padded(self.actor, self.dtype, torch.from_numpy(obs), torch.from_numpy(mask)).float().numpy()


class ExpertIteration:
    """One rollout worker's searches: :meth:`pick` draws the decisions at each vector step,
    :meth:`fill` searches them after the rollout and writes their targets (see the module docstring).
    ``args``: the trainer's options; ``seed``: the rollout's seed; ``dtype``: its compute dtype."""

    def __init__(self, args, seed: int, dtype: torch.dtype) -> None:
        self.share, self.kind, self.worlds = args.search_share, args.search_target, args.search_worlds
        self.temperature = args.search_temperature or DEFAULT_TEMPERATURE
        self.rng = np.random.default_rng([seed, SEARCH_STREAM])
        self.network = ActorNetwork(args.rules(), args.history, args.observation, dtype)
        self.search = SearchAgent(self.network, worlds=args.search_worlds, weighting=args.search_weighting)
        self._picked: list[tuple[np.ndarray, torch.Tensor]] = []  # (rows, their logits) per vector step
        self._views: list = []

    def pick(self, venv: VectorManni, games: np.ndarray, mask: torch.Tensor, logits: torch.Tensor,
             first_row: int) -> None:
        """Draw which learner decisions of this step get a search: the seats on turn in ``games``,
        whose legal ``mask`` and ``logits`` rows are theirs and whose rows in the rollout's buffers
        are ``first_row`` on; each card-play decision with more than one legal card, with probability
        ``--search-share``. Keeps the picked decisions' views (the seat's information only), rows and logits."""
        card_play = (venv.state.phase[games] == Phase.PLAY) & (mask.sum(1).numpy() > 1)
        chosen = np.flatnonzero(card_play & (self.rng.random(games.size) < self.share))
        if chosen.size:
            seats = venv.state.to_move[games[chosen]]
            self._views += [venv.view(int(g), int(s)) for g, s in zip(games[chosen], seats)]
            self._picked.append((first_row + chosen, logits[torch.from_numpy(chosen)].float()))

    def fill(self, target: torch.Tensor, actor: Actor, rows: int) -> int:
        """Search the picked decisions with ``actor`` playing the worlds out, write their targets to
        their rows of ``target`` (zeros in the other rows of the first ``rows``), forget them; how
        many there were."""
        target[:rows] = 0.0
        if not self._views:
            return 0
        self.network.actor = actor
        values = np.concatenate([self.search.evaluate_many(self._views[first:first + SEARCH_BATCH], self.rng)
                                 for first in range(0, len(self._views), SEARCH_BATCH)])
        picked = np.concatenate([r for r, _ in self._picked])
        logits = torch.cat([lg for _, lg in self._picked]).numpy()
        target[torch.from_numpy(picked)] = torch.from_numpy(search_targets(values, logits, self.kind, self.worlds,
                                                                           self.temperature))
        self._views, self._picked = [], []
        return picked.size


def search_targets(values: np.ndarray, logits: np.ndarray, kind: str, worlds: int,
                   temperature: float = DEFAULT_TEMPERATURE) -> np.ndarray:
    """Target distributions (k, 63) float32 of ``k`` searched decisions from the search's ``values``
    (k, 63: each legal card's value, NaN elsewhere) and the acting policy's ``logits`` (k, 63, used by
    ``gumbel``), for target ``kind`` (see the module docstring); zero at the illegal actions."""
    legal = ~np.isnan(values)
    if kind == "greedy":
        out = np.zeros(values.shape, np.float32)
        out[np.arange(len(values)), np.nanargmax(values, 1)] = 1.0  # the first (lowest) card among equals
        return out
    if kind == "soft":
        scores = values / temperature
    elif kind == "gumbel":
        low, high = np.nanmin(values, 1, keepdims=True), np.nanmax(values, 1, keepdims=True)
        normalised = (values - low) / np.maximum(high - low, 1e-8)
        scores = logits + (GUMBEL_C_VISIT + worlds) * GUMBEL_C_SCALE * normalised
    else:
        raise ValueError(f"search target must be one of {', '.join(TARGETS)}, got {kind!r}")
    scores = np.where(legal, scores, -np.inf)
    p = np.exp(scores - scores.max(1, keepdims=True))
    return (p / p.sum(1, keepdims=True)).astype(np.float32)


def search_loss(logp: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """The mean cross-entropy from the ``target`` rows that hold a search's target (the others are
    zeros) to the policy's log-probabilities ``logp``; 0 without any."""
    searched = target.sum(1) > 0
    if not searched.any():
        return logp.new_zeros(())
    return -(target[searched] * logp[searched]).sum(1).mean()


def target_rows(size: int) -> torch.Tensor:
    """A buffer of ``size`` rows of targets (float32, one column per action)."""
    return torch.zeros((size, NUM_ACTIONS))
