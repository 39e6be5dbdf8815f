"""The ``search`` agent: Perfect-Information Monte Carlo search with the trained network as rollout.

For a card-play decision with more than one legal card, sample ``worlds`` full states consistent
with the seat's view (:func:`manni_agents.sampler.sample_worlds`; the same worlds for every card), play
each legal card in each world, let the network play every seat (its own included) to the end of
the deal, and choose the card with the best mean outcome (ties: the lowest card).

- **Outcome**: as :mod:`manni_agents.pimc`: the seat's deal points minus the mean of the two others'.
- **Rollouts**: the worlds × cards games are loaded into one batched
  :class:`~manni_env.vector_kernels.VectorState` and stepped in lockstep by the vector env's
  compiled kernels (every game of a decision has the same number of plays left); each step encodes
  the seats on turn with the kernels' observation encoder and runs **one** numpy forward pass for
  all games with more than one legal card (the greedy policy: the most likely legal card).
- **Weighting** (``weighting=policy``): each world's weight is the probability, under the
  network's masked softmax policy, of the cards the opponents actually played this deal, each
  decided in that world (the world's hands before the play, replayed from the start of trick play);
  the default ``uniform`` weights every world alike. Only card plays enter the weight, not the
  opponents' exchange, pickup or announcement decisions. The network's softmax is sharp, so the
  weights are **tempered**: each play's log-probability is divided by ``temperature`` (the weight
  is the likelihood to the power 1/``temperature``; 1 is the plain likelihood, larger is flatter;
  default :data:`DEFAULT_TEMPERATURE`, chosen by the effective number of worlds,
  :func:`effective_worlds`, in docs/search.md).
- **Card values** (:meth:`SearchAgent.card_values`): per legal card, the same worlds' weighted mean
  of the seat's own deal points, with the number of worlds: what ``manni serve``'s hints and
  reviews say a card is worth.
- **Many decisions at once** (:meth:`SearchAgent.evaluate_many`): the card-play decisions of many
  games (a vector env's, a rollout's) in one batch, each with its own worlds, all their worlds ×
  cards played out together; the values :meth:`SearchAgent.evaluate` gives on the same worlds.
- **Which decisions are searched**: card play. The network alone decides the exchange, the swap,
  the pickup, the discards and the announcement (as good as ``pimc`` there: see docs/search.md).
- **Network**: the shipped ``ppo`` network of the variant being played, or ``model=PATH`` (a
  checkpoint, see :mod:`manni_agents.ppo_agent`), played ``plain`` (its own logits, never averaged
  over suit relabellings, whatever the checkpoint's ``play`` says).

Spec: ``search``, ``search:worlds=64``, ``search:worlds=16,weighting=policy,temperature=2,model=runs/x/agent``
(``temperature`` only with ``weighting=policy``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from collections.abc import Iterator, Sequence

import numpy as np
from threadpoolctl import ThreadpoolController
from tqdm import tqdm

from manni_agents.base import legal_actions_of
from manni_agents.ppo_agent import PPOAgent, ShippedPPOAgent, log_partition, make_ppo_agent
from manni_agents.sampler import sample_worlds
from manni_agents.spec_options import check_choice, check_worlds, one_of, parse_options, positive_float, positive_int
from manni_env import vector_kernels
from manni_env.actions import NUM_ACTIONS
from manni_env.engine import GameState
from manni_env.episodes import relative_points
from manni_env.rules import Phase, Rules
from manni_env.vector import resolve_backend
from manni_env.vector_kernels import DEAL_BLOCK, VectorState, kernel_rules, new_state, new_step_out
from manni_env.view import SeatView

WEIGHTINGS = ("uniform", "policy")
DEFAULT_TEMPERATURE = 12.0
"""``temperature`` of ``weighting=policy`` when none is given: the smallest measured one keeping the
median effective worlds at half the worlds or more in every variant (docs/search.md)."""


def make_search_agent(arg: str | None) -> SearchAgent:
    """Registry factory: ``search[:worlds=N,weighting=uniform|policy,temperature=T,model=VARIANT|PATH]``."""
    options = parse_options(arg, {"worlds": positive_int, "weighting": one_of("weighting", WEIGHTINGS),
                                  "temperature": positive_float, "model": str})
    model = options.pop("model", None)
    network = make_ppo_agent(model, symmetric=False) if model is not None else ShippedPPOAgent(symmetric=False)
    return SearchAgent(network, **options)


@dataclass(frozen=True)
class CardValues:
    """The search's estimate of each legal card of one decision: ``points``, the seat's expected
    deal points after playing it (the worlds' weighted mean), over ``worlds`` sampled worlds
    (``effective``: Kish's effective number, ``worlds`` for uniform weights)."""

    points: dict[int, float]
    worlds: int
    effective: float

    @property
    def best(self) -> float:
        """The expected points of the best card."""
        return max(self.points.values())

    def cost(self, card: int) -> float:
        """How many expected points ``card`` gives away against the best card (0 for the best)."""
        return self.best - self.points[card]


class SearchAgent:
    """Card-play search over sampled worlds with network rollouts (see the module docstring)."""

    def __init__(self, network: PPOAgent | ShippedPPOAgent | None = None, worlds: int = 16,
                 weighting: str = "uniform", temperature: float | None = None) -> None:
        check_worlds(worlds)
        check_choice("weighting", weighting, WEIGHTINGS)
        self.network = network if network is not None else ShippedPPOAgent(symmetric=False)
        self.worlds = worlds
        self.weighting = weighting
        self.temperature = _check_temperature(temperature, weighting)
        self.name = "search"
        self._rollouts: dict[Rules, _Rollouts] = {}

    def reset(self) -> None:
        """Nothing to forget between games."""

    def check_rules(self, rules: Rules) -> None:
        """:class:`~manni_agents.ppo_agent.CheckpointError` unless the network plays ``rules``."""
        self.network.check_rules(rules)

    def act(self, view: SeatView, rng: np.random.Generator) -> int:
        legal = legal_actions_of(view)
        if len(legal) == 1:
            return legal[0]
        if view.phase != Phase.PLAY:
            return self.network.act(view, rng)
        return self.evaluate(view, rng)[0]

    def evaluate(self, view: SeatView, rng: np.random.Generator) -> tuple[int, dict[int, float], np.ndarray]:
        """The chosen card, the (weighted) mean outcome of every legal card and the worlds' weights."""
        legal, weights, points = self._play_worlds(view, rng)
        means = weights @ relative_points(points)[:, :, view.seat]
        best = int(legal[int(np.argmax(means))])  # argmax: the first (lowest) card among equals
        return best, {int(a): float(m) for a, m in zip(legal, means)}, weights

    def evaluate_many(self, views: Sequence[SeatView], rng: np.random.Generator) -> np.ndarray:
        """The batched multi-decision search: for each of ``views`` (card-play decisions of the seat
        on turn, of one variant, e.g. many games of a vector env), the (weighted) mean outcome of
        every legal card, as :meth:`evaluate` gives it, and NaN at the other actions: shape
        (len(views), 63). The worlds are drawn from ``rng`` view after view, so row ``i`` equals
        :meth:`evaluate` on ``views[i]`` after the same draws for the views before it; the worlds ×
        cards of all the views are played out in one batch. Reads the views only."""
        values = np.full((len(views), NUM_ACTIONS), np.nan)
        for row, (view, (legal, weights, points)) in enumerate(zip(views, self._play_worlds_many(views, rng))):
            values[row, legal] = weights @ relative_points(points)[:, :, view.seat]
        return values

    def card_values(self, view: SeatView, rng: np.random.Generator) -> CardValues:
        """What each legal card is worth to the seat on turn: its expected deal points over the
        worlds :meth:`evaluate` samples from the same ``rng`` state (the seat's own points, not the
        outcome the search maximises; the same ranking in the zero-sum variants). Reads ``view`` only."""
        legal, weights, points = self._play_worlds(view, rng)
        means = weights @ points[:, :, view.seat]
        return CardValues({int(a): float(m) for a, m in zip(legal, means)}, self.worlds, effective_worlds(weights))

    def _play_worlds(self, view: SeatView, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The legal cards of ``view``, the sampled worlds' weights and the deal points of every
        seat after each card in each world (worlds × cards × 3)."""
        return self._play_worlds_many([view], rng)[0]

    def _play_worlds_many(self, views: Sequence[SeatView], rng: np.random.Generator,
                          ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """:meth:`_play_worlds` of each of ``views`` (worlds drawn from ``rng`` view after view), all
        the views' worlds × cards played out in one batch."""
        if not views:
            return []
        for view in views:
            if view.phase != Phase.PLAY or not view.legal_actions:
                raise ValueError(f"search evaluates card play of the seat on turn, got phase {view.phase.name} "
                                 f"for seat {view.seat} (seat {view.to_move} on turn)")
        rules = views[0].rules
        if any(view.rules != rules for view in views):
            raise ValueError("the views of one batched search must be of one variant and rule options")
        rollouts, worlds = self._rollouts_for(rules), self.worlds
        template = _concat([rollouts.load(view, sample_worlds(view, rng, worlds)) for view in views])
        legals = [np.array(view.legal_actions, np.int64) for view in views]
        # one BLAS thread: a multithreaded BLAS on batches this small only waits on busy cores
        with _blas().limit(limits=1, user_api="blas"):
            if self.weighting == "policy":
                log_p = rollouts.log_likelihoods_many(views, template).reshape(len(views), worlds)
                weights = [tempered_weights(row, self.temperature) for row in log_p]
            else:
                weights = [np.full(worlds, 1 / worlds)] * len(views)
            points = rollouts.play_out(template, [legal for legal in legals for _ in range(worlds)])
        bounds = np.cumsum([0, *(worlds * legal.size for legal in legals)])
        return [(legal, w, points[start:stop].reshape(worlds, legal.size, 3).astype(np.float64))
                for legal, w, start, stop in zip(legals, weights, bounds[:-1], bounds[1:])]

    def log_likelihoods(self, view: SeatView, rng: np.random.Generator) -> np.ndarray:
        """Per world that :meth:`evaluate` samples from the same ``rng`` state, the log-probability
        under the network's policy of the opponents' card plays this deal (untempered; no rollouts)."""
        rollouts = self._rollouts_for(view.rules)
        template = rollouts.load(view, sample_worlds(view, rng, self.worlds))
        with _blas().limit(limits=1, user_api="blas"):
            return rollouts.log_likelihoods(view, template)

    def _rollouts_for(self, rules: Rules) -> _Rollouts:
        if rules not in self._rollouts:
            network = self.network.agent_for(rules) if isinstance(self.network, ShippedPPOAgent) else self.network
            self._rollouts[rules] = _Rollouts(rules, network)
        return self._rollouts[rules]


def _check_temperature(temperature: float | None, weighting: str) -> float | None:
    """The temperature to use: ``None`` for ``uniform`` weighting, :data:`DEFAULT_TEMPERATURE` for
    ``policy`` when none is given; ``ValueError`` for a number not > 0 or one given with ``uniform``
    (it would be silently ignored)."""
    if weighting != "policy":
        if temperature is not None:
            raise ValueError(f"temperature applies to weighting=policy only, got it with weighting={weighting}")
        return None
    if temperature is None:
        return DEFAULT_TEMPERATURE
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not 0 < temperature < math.inf:
        raise ValueError(f"temperature must be a positive finite number, got {temperature!r}")
    return float(temperature)


def tempered_weights(log_likelihoods: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Normalised world weights proportional to ``exp(log_likelihoods / temperature)``, i.e. the
    likelihoods to the power 1/``temperature``, computed in log space (no underflow to all zeros)."""
    scaled = np.asarray(log_likelihoods, np.float64) / temperature
    weights = np.exp(scaled - scaled.max())
    return weights / weights.sum()


def effective_worlds(weights: np.ndarray) -> float:
    """Kish's effective number of worlds, ``(Σw)² / Σw²``: the number of worlds for uniform weights,
    1 when one world holds all the weight."""
    weights = np.asarray(weights, np.float64)
    if weights.ndim != 1 or weights.size == 0 or (weights < 0).any() or not weights.sum() > 0:
        raise ValueError("weights must be a non-empty row of non-negative numbers with a positive sum")
    return float(weights.sum() ** 2 / np.square(weights).sum())


@functools.cache
def _blas() -> ThreadpoolController:
    """The process's thread pools (found once; BLAS is loaded with numpy)."""
    return ThreadpoolController()


def _concat(states: list[VectorState]) -> VectorState:
    """One state of the games of ``states``, in order."""
    return states[0] if len(states) == 1 else VectorState(*(np.concatenate(arrays) for arrays in zip(*states)))


def _bools(mask: int) -> np.ndarray:
    """A 52-card (or 4-suit) bitmask as a bool row of 52."""
    return np.unpackbits(np.frombuffer(mask.to_bytes(7, "little"), np.uint8), bitorder="little")[:52].astype(bool)


class _Rollouts:
    """Batched play-outs of one variant's deals by one network on the vector env's kernels."""

    def __init__(self, rules: Rules, network: PPOAgent) -> None:
        self.rules = rules
        self.network = network
        encoder = network.encoder_for(rules)
        self.obs_size = encoder.size
        self.krules = kernel_rules(rules, encoder, outcome=False)
        self.kernels = vector_kernels if resolve_backend("auto") == "numba" else vector_kernels.plain_kernels()
        self.slot_of = {a.name: a.slot for a in rules.spec.announcements}

    # ------------------------------------------------------------------ loading worlds
    def load(self, view: SeatView, worlds) -> VectorState:
        """One vector game per world at ``view``'s position: the public part from ``view``, the
        hidden cards from the world."""
        state = new_state(self.rules, len(worlds))
        for i, world in enumerate(worlds):
            for s in range(3):
                state.hands[i, s] = _bools(world.hand_mask(s))
                state.discards[i, s] = _bools(world.discards_mask(s))
                state.drawn[i, s] = _bools(world.drawn_mask(s))
        for s in range(3):
            state.played[:, s] = _bools(view.played[s])
            state.voids[:, s] = _bools(view.voids[s])[:4]
            names = view.used_contracts[s]
            for k, name in enumerate(names):
                state.used[:, s, self.slot_of[name]] = True
                state.used_order[:, s, k] = self.slot_of[name]
            state.used_order[:, s, len(names):] = -1
        contract = view.contract
        scalars = {
            "manni_pos": view.manni_used, "cut_card": -1 if view.cut_card is None else view.cut_card,
            "kind": int(contract.kind), "trump": -1 if contract.trump is None else contract.trump,
            "declarer": -1 if contract.declarer is None else contract.declarer, "phase": int(view.phase),
            "to_move": view.to_move, "dealer": view.dealer, "deal_index": view.deal_index, "decision": 3,
            "swapper": -1 if view.swapper is None else view.swapper,
            "taker": -1 if view.taker is None else view.taker, "n_passed": len(view.passed),
            "leader": view.leader, "led_suit": view.led_suit, "trick_len": len(view.trick),
            "n_plays": len(view.plays), "deck_ptr": DEAL_BLOCK,  # end_deals deals nothing after the deal
        }
        for name, value in scalars.items():
            getattr(state, name)[:] = value
        state.exchange_counts[:] = view.exchange_counts
        state.passed[:] = -1
        state.passed[:, : len(view.passed)] = view.passed
        state.trick[:, : len(view.trick)] = view.trick
        if view.plays:
            state.plays[:, : len(view.plays)] = view.plays
        for name in ("tricks_won", "plus", "minus", "totals"):
            getattr(state, name)[:] = getattr(view, name)
        return state

    # ------------------------------------------------------------------ playing
    def _observe(self, state: VectorState, seats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        games = np.arange(seats.size, dtype=np.int64)
        obs = np.empty((seats.size, self.obs_size), np.float32)
        mask = np.empty((seats.size, NUM_ACTIONS), bool)
        self.kernels.observe(state, self.krules, games, np.ascontiguousarray(seats, np.int64), obs, mask)
        return obs, mask

    def _step(self, state: VectorState, actions: np.ndarray, mask: np.ndarray):
        out = new_step_out(actions.size)
        if self.kernels.step(state, self.krules, np.ascontiguousarray(actions, np.int64), mask, out) < 0:
            raise RuntimeError("search rollout played an illegal card")  # a bug, never the caller's
        return out

    def _greedy(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The network's most likely legal action per row; rows with one legal action skip the net."""
        actions = mask.argmax(1)
        multi = np.flatnonzero(mask.sum(1) > 1)
        if multi.size:
            actions[multi] = self.network.policy_logits(obs[multi], mask[multi], self.rules).argmax(1)
        return actions

    def play_out(self, template: VectorState, cards: Sequence[np.ndarray]) -> np.ndarray:
        """Every seat's deal points after playing each of ``cards[i]`` in game (world) ``i`` of
        ``template`` and then the network's greedy play to the end of the deal: shape (cards in all,
        3), in the order of ``cards``. Games whose deals end earlier (another decision's) leave the
        batch as they end: the games play in order of the cards played so far, so those ending are
        the last rows (the others go on in views of the arrays) unless a deal ends early."""
        state = VectorState(*(np.repeat(a, [c.size for c in cards], axis=0) for a in template))
        actions = np.concatenate(cards)
        rows = np.argsort(state.n_plays, kind="stable")  # the games still playing, by their row in ``state``
        state, actions = VectorState(*(a[rows] for a in state)), actions[rows]
        points = np.zeros((rows.size, 3), np.int64)
        _, mask = self._observe(state, state.to_move)
        while True:
            out = self._step(state, actions, mask)
            if out.deal_over.any():
                points[rows[out.deal_over]] = out.points[out.deal_over]
                playing = np.flatnonzero(~out.deal_over)
                if not playing.size:
                    return points
                keep = slice(playing.size) if playing[-1] == playing.size - 1 else playing
                state, rows = VectorState(*(a[keep] for a in state)), rows[keep]
            obs, mask = self._observe(state, state.to_move)
            actions = self._greedy(obs, mask)

    def log_likelihoods(self, view: SeatView, template: VectorState) -> np.ndarray:
        """Per world, the log-probability under the network's masked softmax policy of the
        opponents' card plays of this deal, replayed from the start of trick play in that world."""
        return self.log_likelihoods_many([view], template)

    def log_likelihoods_many(self, views: Sequence[SeatView], template: VectorState) -> np.ndarray:
        """:meth:`log_likelihoods` of each of ``views``, whose worlds are the consecutive equal
        shares of ``template``'s games, in one batch: one value per game. The replays run longest
        first, so the games still replaying are always the first rows (views of the arrays)."""
        worlds = len(template.phase) // len(views)
        order = np.argsort([-len(view.plays) for view in views], kind="stable")
        views = [views[i] for i in order]
        games = (order[:, None] * worlds + np.arange(worlds)).reshape(-1)
        state = VectorState(*(a[games] for a in template))  # a copy, in the replays' order
        for s in range(3):
            state.hands[:, s] |= state.played[:, s]
        state.played[:] = state.voids[:] = False
        state.tricks_won[:] = state.trick_len[:] = state.n_plays[:] = 0
        state.led_suit[:] = -1
        state.leader[:] = state.to_move[:] = (state.dealer + 1) % 3
        log_p = np.zeros(games.size)
        for k in range(len(views[0].plays)):
            live = [view for view in views if len(view.plays) > k]  # a prefix of the views
            n = len(live) * worlds
            now = VectorState(*(a[:n] for a in state))
            opponents, cards = np.repeat([(view.plays[k][0] != view.seat, view.plays[k][1]) for view in live],
                                         worlds, axis=0).T
            obs, mask = self._observe(now, now.to_move)
            theirs = np.flatnonzero(opponents)  # the opponents' plays only: the seat's own are no evidence
            if theirs.size:
                logits = self.network.policy_logits(obs[theirs], mask[theirs], self.rules)
                log_p[theirs] += logits[np.arange(theirs.size), cards[theirs]] - log_partition(logits)
            self._step(now, np.ascontiguousarray(cards, np.int64), mask)
        back = np.empty_like(log_p)
        back[games] = log_p
        return back


def network_decisions(rules: Rules, deals: int | range, seed: int, progress: bool = True,
                      network: PPOAgent | ShippedPPOAgent | None = None,
                      ) -> Iterator[tuple[int, SeatView, int, np.random.Generator]]:
    """Every decision with more than one legal action in the seeded deals ``deals`` (a count from
    deal 0, or a range of deal numbers; deal ``d`` is dealt from ``seed + d``) of ``network`` (default:
    the shipped ``ppo`` networks, played plain) playing every seat greedily: the deal number, the seat's
    view, the network's action and the deal's generator, which the caller may draw from before the
    action is played."""
    network = network or ShippedPPOAgent(symmetric=False)
    numbers = range(deals) if isinstance(deals, int) else deals
    for deal in tqdm(numbers, desc=f"{rules.variant} deals", disable=not progress):
        state = GameState(rules, seed=seed + deal)
        rng = np.random.default_rng([seed, deal])
        while not state.rounds:
            view = state.view(state.to_move)
            action = network.act(view, rng)
            if len(view.legal_actions) > 1:
                yield deal, view, action, rng
            state.apply(action)


def network_card_decisions(rules: Rules, deals: int, seed: int, progress: bool = True,
                           network: PPOAgent | ShippedPPOAgent | None = None,
                           ) -> Iterator[tuple[SeatView, int, np.random.Generator]]:
    """The card-play decisions of :func:`network_decisions` (the benchmarks that study the search on
    the network's own games)."""
    for _, view, card, rng in network_decisions(rules, deals, seed, progress, network):
        if view.phase == Phase.PLAY:
            yield view, card, rng


__all__ = ["DEFAULT_TEMPERATURE", "WEIGHTINGS", "CardValues", "SearchAgent", "effective_worlds", "make_search_agent",
           "network_card_decisions", "network_decisions", "tempered_weights"]
