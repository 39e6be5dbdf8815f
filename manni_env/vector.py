"""A batched Manni environment: N games of any variant stepped in lockstep by compiled kernels.

``VectorManni`` plays ``num_envs`` independent games with the engine's rules. Their state is one
:class:`~manni_env.vector_kernels.VectorState` (``venv.state``): hands, discards, drawn and played
cards as ``(N, 3, 52)`` booleans, the Manni as ``(N, manni_size)`` cards in drawing order, the
trick, tallies and counters as ``(N,)`` / ``(N, 3)`` integers; each of its arrays is also an
attribute (``venv.hands is venv.state.hands``). Every game has exactly one seat on turn, so one
step takes one action per game.

API (all arrays have the batch dimension first)::

    venv = VectorManni(make_rules("hornafjardar"), num_envs=1024)
    obs, mask, to_move = venv.reset(seed=0)       # (N, obs_size) float32, (N, 63) bool, (N,) int
    obs, mask, to_move, rewards, terminated, truncated, infos = venv.step(actions)   # actions (N,)

- ``obs[i]`` is the observation of the seat on turn in game ``i`` (``to_move[i]``), byte-identical
  to ``ObservationEncoder(rules, history, layout).encode(state.view(to_move))`` of the scalar engine;
  ``mask[i]`` is that seat's legal-action mask (never all zeros). :meth:`VectorManni.observe`
  encodes any seat (a trainer bootstraps the values of seats not on turn with it).
- ``rewards`` is ``(N, 3)`` float32 by absolute seat, as the AEC env pays them
  (:func:`manni_env.episodes.step_rewards`; the kernels hold a compiled copy): each seat's deal
  score in the step that ends a deal (``reward="deal"``, the default), or the zero-sum game outcome
  in the step that ends a game (``reward="outcome"``: winners share +1, the others share −1).
- ``terminated[i]`` / ``truncated[i]``: game ``i`` ended in this step (truncated: by the deal cap),
  the flags of a ``"game"`` episode (:func:`manni_env.episodes.episode_end`); a trainer that learns
  on deals ends its episodes at ``infos["deal_over"]``.
  Finished games reset at once (Gymnasium's "same-step" autoreset): the returned ``obs``, ``mask``
  and ``to_move`` already belong to the next game in that slot. ``infos`` holds arrays:
  ``deal_over`` (N,) bool, ``tricks_won`` / ``points`` / ``plus`` / ``minus`` / ``totals`` (N, 3)
  of the deal that ended in this step (zeros elsewhere), ``winners`` (N, 3) bool of the games that
  ended, and ``new_deal`` / ``new_game`` (N,) bool for slots whose next deal / game started.
- Every step returns new arrays, so callers may keep and modify them: ``mask`` is a copy of the
  masks the next ``step`` checks the actions against.

The rules run in :mod:`manni_env.vector_kernels`, compiled by numba (``backend="numba"``, what
``"auto"`` picks when numba imports) or the same functions run by Python (``backend="python"``,
slow; used where numba is missing). For Gymnasium's vector API see :mod:`manni_env.vector_gym`;
:meth:`VectorManni.view` gives any seat's engine :class:`~manni_env.view.SeatView`, so scalar
policies (``rule_based``) can play a seat.

Seeding: ``reset(seed)`` gives slot ``i`` its own generator
``np.random.default_rng(np.random.SeedSequence(seed).spawn(N)[i])``. It draws each game's first
dealer (unless ``rules.first_dealer`` fixes it) and shuffles the deals (``Generator.permuted`` on
the variant's pack, drawn in blocks of :data:`DEAL_BLOCK` when needed), each dealt exactly as the
engine deals a shuffled pack. A slot's games therefore depend only on the seed, the slot index and
that slot's own actions. ``reset(seed, deals)`` plays explicit deals first, as
``GameState(deals=...)`` does. :meth:`VectorManni.deal` returns a slot's current deal as an engine
:class:`~manni_env.engine.Deal`, so any game can be replayed by ``GameState`` (this is how records
are written, see :class:`GameLog`).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from manni_env import actions as A
from manni_env import vector_kernels
from manni_env.cards import cards_of
from manni_env.engine import Deal, GameState
from manni_env.episodes import TABLE_REWARDS, check_reward
from manni_env.observation import ObservationEncoder
from manni_env.rules import Contract, ContractKind, Phase, Rules, make_rules
from manni_env.vector_kernels import DEAL_BLOCK, VectorState, kernel_rules, new_state, new_step_out
from manni_env.view import SeatView

__all__ = ["BACKENDS", "DEAL_BLOCK", "GameLog", "VectorManni", "random_legal_actions", "resolve_backend"]

BACKENDS = ("auto", "numba", "python")
NULLO, TRUMP, GRAND = (int(k) for k in ContractKind)  # contract kinds as the state's ``kind`` holds them


def _bits(row: np.ndarray) -> int:
    """A boolean row (cards or suits) as an int bitmask, bit ``k`` for ``row[k]``."""
    return int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")


def resolve_backend(backend: str, fallback: str = "python") -> str:
    """``fallback`` (the uncompiled code), ``numba`` (raises if numba is not installed) or ``auto``
    (numba when installed, else ``fallback``)."""
    choices = ("auto", "numba", fallback)
    if backend not in choices:
        raise ValueError(f"backend must be one of {', '.join(choices)}, got {backend!r}")
    if backend == fallback:
        return backend
    try:
        import numba  # noqa: F401
    except ImportError:
        if backend == "numba":
            raise ValueError("backend 'numba' needs numba: pip install numba") from None
        return fallback
    return "numba"


@dataclass
class GameLog:
    """Everything needed to replay one slot's game in the engine: first dealer, deals, actions."""

    slot: int
    first_dealer: int
    deals: list[Deal] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)

    def replay(self, rules: Rules) -> GameState:
        """The engine's ``GameState`` after replaying this game (raises if any action is illegal)."""
        state = GameState(make_rules(rules.variant, **{**rules.options(), "first_dealer": self.first_dealer}),
                          deals=list(self.deals))
        for a in self.actions:
            state.apply(a)
        return state


def random_legal_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask`` ((k, 63) bool), drawn from ``rng``."""
    return np.where(mask, rng.random(mask.shape), -1.0).argmax(1)


class VectorManni:
    """``num_envs`` Manni games in lockstep (see the module docstring for the API)."""

    state: VectorState

    def __init__(self, rules: Rules, num_envs: int, reward: str = "deal", history: str = "summary",
                 log_games: bool = False, backend: str = "auto", layout: str = "v0"):
        check_reward(reward, TABLE_REWARDS)
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs!r}")
        self.backend = resolve_backend(backend)
        self._kernels = vector_kernels if self.backend == "numba" else vector_kernels.plain_kernels()
        self.rules = rules
        self.num_envs = num_envs
        self.reward_mode = reward
        self.encoder = ObservationEncoder(rules, history, layout)  # the layout (segments, bounds)
        self.obs_size = self.encoder.size
        self._krules = kernel_rules(rules, self.encoder, reward == "outcome")
        self.log_games = log_games
        self.logs: list[GameLog] = []
        self.finished_logs: list[GameLog] = []
        spec = rules.spec
        self._slot_names = {row.slot: row.name for row in spec.announcements}
        self._contract_names = {(int(row.kind), -1 if row.trump is None else row.trump): row.name
                                for row in spec.announcements}
        self._block = np.tile(np.array(cards_of(rules.pack), np.int8), (DEAL_BLOCK, 1))
        self._all = np.arange(num_envs, dtype=np.int64)
        self._rngs: list[np.random.Generator] = []
        self._mask = np.zeros((num_envs, A.NUM_ACTIONS), bool)
        self.state = new_state(rules, num_envs)
        # the kernels, compiled (or loaded from numba's cache) for these argument types
        k, state, krules = self._kernels, self.state, self._krules
        self._step = k.bind(k.step, state, krules, self._all, self._mask, new_step_out(num_envs))
        self._start_deals = k.bind(k.start_deals, state, krules, self._all)
        self._observe = k.bind(k.observe, state, krules, self._all, self._all, np.zeros((1, self.obs_size), np.float32),
                             self._mask)

    # ------------------------------------------------------------------ public API
    def reset(self, seed: int | None = None, deals: Sequence[Sequence[Deal]] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Seed every slot (see the module docstring) and start a new game in each. ``deals[i]``
        (optional) are the first deals of slot ``i``'s first game, played in order before its random
        deals and dropped if that game ends first; a bad deal raises ``ValueError`` (nothing changed)."""
        n, rules = self.num_envs, self.rules
        rngs = [np.random.default_rng(c) for c in np.random.SeedSequence(seed).spawn(n)]
        first = rules.first_dealer
        dealers = np.array([int(rng.integers(3)) if first is None else first for rng in rngs], np.int64)
        hands, manni, cut, counts = self._check_deals(deals, dealers)
        self.state = state = self.state._replace(queued_hands=hands, queued_manni=manni, queued_cut=cut)
        self._rngs = rngs
        state.n_queued[:] = counts
        state.dealer[:] = dealers
        state.next_queued[:] = 0
        for name in ("plus", "minus", "totals", "deal_index"):
            getattr(state, name)[:] = 0
        state.used[:] = False
        state.used_order[:] = -1
        state.deck_ptr[:] = DEAL_BLOCK
        self._refill(self._all)
        self._start_deals(state, self._krules, self._all)
        self.logs = [GameLog(i, int(d)) for i, d in enumerate(dealers)]
        self.finished_logs = []
        self._log_deals(self._all)
        obs, self._mask = self._observe_all()
        return obs, self._mask.copy(), state.to_move.copy()

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Apply one action per game for its seat on turn. Raises ``ValueError`` (and changes
        nothing) if any action is illegal."""
        if not self._rngs:
            raise RuntimeError("call reset(seed) before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), got {a.dtype} {a.shape}")
        a = np.ascontiguousarray(a, np.int64)
        out = new_step_out(self.num_envs)
        waiting = self._step(self.state, self._krules, a, self._mask, out)
        if waiting < 0:
            raise ValueError(self._illegal_message(a))
        if self.log_games:
            for log, action in zip(self.logs, a.tolist()):
                log.actions.append(action)
        if waiting:
            self._deal_waiting(np.flatnonzero(out.needs_deal), out.new_game)
        if self.log_games:
            self._log_deals(np.flatnonzero(out.new_deal))
        obs, self._mask = self._observe_all()
        infos = {name: getattr(out, name) for name in ("deal_over", "new_deal", "new_game", "tricks_won", "points",
                                                       "plus", "minus", "totals", "winners")}
        return obs, self._mask.copy(), self.state.to_move.copy(), out.rewards, out.terminated, out.truncated, infos

    def observe(self, games, seats=None) -> np.ndarray:
        """(len(games), obs_size) float32 observations of ``seats`` (default: the seats on turn) in ``games``."""
        games = np.ascontiguousarray(np.asarray(games, np.int64).reshape(-1))
        if games.size and (games.min() < 0 or games.max() >= self.num_envs):
            raise ValueError(f"games must be in 0..{self.num_envs - 1}")
        if seats is None:
            seats = self.state.to_move[games]
        seats = np.broadcast_to(np.asarray(seats, np.int64), games.shape)
        if games.size and (seats.min() < 0 or seats.max() > 2):
            raise ValueError("seats must be in 0..2")
        obs = np.empty((games.size, self.obs_size), np.float32)
        mask = np.empty((games.size, A.NUM_ACTIONS), bool)
        self._observe(self.state, self._krules, games, np.ascontiguousarray(seats), obs, mask)
        return obs

    def action_mask(self) -> np.ndarray:
        """(N, 63) bool legal-action masks of the seats on turn (a copy)."""
        return self._mask.copy()

    def exchange_limit(self, games: np.ndarray) -> np.ndarray:
        """Hornafjarðarmanni: remaining discard allowance of the seat on turn (0 outside the exchange)."""
        s = self.state
        limits = self._krules.exchange_limits[np.minimum(s.decision[games], 2)]
        left = np.minimum(limits, self.rules.manni_size - s.manni_pos[games]) - s.n_pending[games]
        return np.where(s.phase[games] == Phase.EXCHANGE, left, 0)

    def view(self, i: int, seat: int) -> SeatView:
        """Seat ``seat``'s information state in game ``i``, equal to the engine's ``state.view(seat)``
        (for scalar policies such as ``rule_based`` playing a seat of a vector game)."""
        s = self.state
        on_turn = int(s.to_move[i]) == seat
        kind, trump, declarer = int(s.kind[i]), int(s.trump[i]), int(s.declarer[i])
        contract = None
        if kind >= 0:
            contract = Contract(ContractKind(kind), trump if trump >= 0 else None, declarer if declarer >= 0 else None,
                                self._contract_names[kind, trump] if declarer >= 0 else None)
        view = object.__new__(SeatView)  # as GameState.view builds it
        view.__dict__.update({
            "rules": self.rules,
            "seat": seat,
            "phase": Phase(int(s.phase[i])),
            "to_move": int(s.to_move[i]),
            "deal_index": int(s.deal_index[i]),
            "dealer": int(s.dealer[i]),
            "cut_card": int(s.cut_card[i]) if s.cut_card[i] >= 0 else None,
            "contract": contract,
            "hand": _bits(s.hands[i, seat]),
            "dealt_hand": _bits(s.dealt[i, seat]),
            "discards": _bits(s.discards[i, seat]),
            "drawn": _bits(s.drawn[i, seat]),
            "pending": tuple(s.pending[i, : s.n_pending[i]].tolist()) if on_turn else (),
            "exchange_limit": int(self.exchange_limit(np.array([i]))[0]) if on_turn else 0,
            "exchange_counts": tuple(s.exchange_counts[i].tolist()),
            "manni_used": int(s.manni_pos[i]),
            "swapper": int(s.swapper[i]) if s.swapper[i] >= 0 else None,
            "taker": int(s.taker[i]) if s.taker[i] >= 0 else None,
            "passed": tuple(s.passed[i, : s.n_passed[i]].tolist()),
            "used_contracts": tuple(tuple(self._slot_names[k] for k in s.used_order[i, a].tolist() if k >= 0)
                                    for a in range(3)),
            "leader": int(s.leader[i]),
            "led_suit": int(s.led_suit[i]),
            "trick": tuple(s.trick[i, : s.trick_len[i]].tolist()),
            "plays": tuple(map(tuple, s.plays[i, : s.n_plays[i]].tolist())),
            "played": tuple(_bits(s.played[i, a]) for a in range(3)),
            "voids": tuple(_bits(s.voids[i, a]) for a in range(3)),
            "tricks_won": tuple(s.tricks_won[i].tolist()),
            "plus": tuple(s.plus[i].tolist()),
            "minus": tuple(s.minus[i].tolist()),
            "totals": tuple(s.totals[i].tolist()),
            "legal_actions": tuple(np.flatnonzero(self._mask[i]).tolist()) if on_turn else (),
        })
        return view

    def deal(self, i: int) -> Deal:
        """Slot ``i``'s current deal as the engine's explicit :class:`Deal`."""
        s = self.state
        cut = int(s.cut_card[i])
        return Deal(tuple(tuple(h) for h in s.deal_hands[i].tolist()), tuple(s.manni[i].tolist()),
                    cut if cut >= 0 else None)

    # ------------------------------------------------------------------ internals
    def _observe_all(self) -> tuple[np.ndarray, np.ndarray]:
        """Observations and legal-action masks of the seats on turn (new arrays)."""
        obs = np.empty((self.num_envs, self.obs_size), np.float32)
        mask = np.empty((self.num_envs, A.NUM_ACTIONS), bool)
        self._observe(self.state, self._krules, self._all, self.state.to_move, obs, mask)
        return obs, mask

    def _illegal_message(self, a: np.ndarray) -> str:
        bad = (a < 0) | (a >= A.NUM_ACTIONS)
        if not bad.any():
            bad = ~self._mask[self._all, a]
        i = int(np.flatnonzero(bad)[0])
        return (f"illegal action {int(a[i])} in game {i} (phase {Phase(int(self.state.phase[i])).name}, "
                f"seat {int(self.state.to_move[i])}); {int(bad.sum())} illegal action(s) in all, nothing applied")

    def _check_deals(self, deals, dealers: np.ndarray) -> tuple[np.ndarray, ...]:
        """Validate ``reset``'s explicit deals (the k-th deal of slot i is dealt by dealers[i] + k);
        return them as the state's queue arrays."""
        n, rules = self.num_envs, self.rules
        if deals is None:
            deals = [()] * n
        elif len(deals) != n:
            raise ValueError(f"deals must hold one list of deals per game slot ({n}), got {len(deals)}")
        q = max(map(len, deals), default=0)
        hands = np.zeros((n, q, 3, rules.hand_size), np.int64)
        manni = np.zeros((n, q, rules.manni_size), np.int64)
        cut = np.full((n, q), -1, np.int64)
        for i, slot in enumerate(deals):
            for k, deal in enumerate(slot):
                if not isinstance(deal, Deal):
                    raise ValueError(f"deals[{i}][{k}] must be a Deal, got {type(deal).__name__}")
                try:
                    deal.check(rules, (int(dealers[i]) + k) % 3)
                except ValueError as error:
                    raise ValueError(f"deals[{i}][{k}]: {error}") from None
                hands[i, k], manni[i, k] = deal.hands, deal.manni
                cut[i, k] = -1 if deal.cut_card is None else deal.cut_card
        return hands, manni, cut, np.array([len(slot) for slot in deals], np.int64)

    def _refill(self, games: np.ndarray) -> None:
        """Draw a new block of shuffled packs for the games that need a random deal and have none left."""
        s = self.state
        for i in games[(s.deck_ptr[games] >= DEAL_BLOCK) & (s.next_queued[games] >= s.n_queued[games])].tolist():
            s.decks[i] = self._rngs[i].permuted(self._block, axis=1)
            s.deck_ptr[i] = 0

    def _deal_waiting(self, games: np.ndarray, new_game: np.ndarray) -> None:
        """Deal the next deal of ``games`` (the step kernel left them waiting): a new game's first
        dealer and used-up packs come from the slot's generator."""
        first = self.rules.first_dealer
        for i in games[new_game[games]].tolist():
            dealer = int(self._rngs[i].integers(3)) if first is None else first
            self.state.dealer[i] = dealer
            if self.log_games:
                self.finished_logs.append(self.logs[i])
                self.logs[i] = GameLog(i, dealer)
        self._refill(games)
        self._start_deals(self.state, self._krules, games)

    def _log_deals(self, games: np.ndarray) -> None:
        if self.log_games:
            for i in games.tolist():
                self.logs[i].deals.append(self.deal(i))


for _name in VectorState._fields:  # venv.hands is venv.state.hands, and so on
    setattr(VectorManni, _name, property(operator.attrgetter(f"state.{_name}"), doc=f"``state.{_name}``"))
del _name
