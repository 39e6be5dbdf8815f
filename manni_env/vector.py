"""A batched Manni environment: N games stepped in lockstep with numpy (or numba).

``VectorManni`` plays ``num_envs`` independent games of Hornafjarðarmanni or Basic Manni (the
announcement variants are not vectorized) with the engine's rules, state held as arrays: hands,
discards, drawn and played cards as ``(N, 3, 52)`` booleans, the Manni as ``(N, 16)`` cards in
drawing order, the trick, tallies and counters as ``(N,)`` / ``(N, 3)`` integers. Every game has
exactly one seat on turn, so one step takes one action per game.

API (all arrays have the batch dimension first)::

    venv = VectorManni(make_rules("hornafjardar"), num_envs=1024)
    obs, mask, to_move = venv.reset(seed=0)       # (N, obs_size) float32, (N, 63) bool, (N,) int
    obs, mask, to_move, rewards, terminated, truncated, infos = venv.step(actions)   # actions (N,)

- ``obs[i]`` is the observation of the seat on turn in game ``i`` (``to_move[i]``), byte-identical
  to ``ObservationEncoder(rules, history).encode(state.view(to_move))`` of the scalar engine;
  ``mask[i]`` is that seat's legal-action mask (never all zeros).
- ``rewards`` is ``(N, 3)`` float32 by absolute seat, as the AEC env pays them: each seat's deal
  score in the step that ends a deal (``reward="deal"``, the default), or the zero-sum game outcome
  in the step that ends a game (``reward="outcome"``: winners share +1, the others share −1, see
  :func:`manni_env.env.outcome_rewards`).
- ``terminated[i]`` / ``truncated[i]``: game ``i`` ended in this step (truncated: by the deal cap).
  Finished games reset at once (Gymnasium's "same-step" autoreset): the returned ``obs``, ``mask``
  and ``to_move`` already belong to the next game in that slot. ``infos`` holds arrays:
  ``deal_over`` (N,) bool, ``tricks_won`` / ``points`` / ``plus`` / ``minus`` / ``totals`` (N, 3)
  of the deal that ended in this step, ``winners`` (N, 3) bool for games that ended, and
  ``new_deal`` / ``new_game`` (N,) bool for slots whose next deal / game started in this step.
- Every step returns new arrays, so callers may keep and modify them: ``mask`` is a copy of the
  masks the next ``step`` checks the actions against.

``backend="numpy"`` (default) runs array operations over the batch; ``backend="numba"`` (needs the
``fast`` extra) runs compiled per-game loops from :mod:`manni_env.vector_numba` on the same arrays,
3–4 times as fast from N = 1024 (see ``benchmarks/bench_vector.py``); ``"auto"`` picks numba when
it is installed. Both play identical games (tested). For Gymnasium's vector API see
:mod:`manni_env.vector_gym`; :meth:`VectorManni.view` gives any seat's engine
:class:`~manni_env.view.SeatView` so scalar policies (``rule_based``) can play a seat.

Seeding: ``reset(seed)`` gives slot ``i`` its own generator
``np.random.default_rng(np.random.SeedSequence(seed).spawn(N)[i])``. It draws each game's first
dealer and shuffles each deal (``Generator.permuted`` on the variant's pack, drawn in blocks of
:data:`DEAL_BLOCK`), and the deal is dealt exactly as the engine deals a shuffled pack. A slot's
games therefore depend only on the seed, the slot index and that slot's own actions.
:meth:`VectorManni.deal` returns a slot's current deal as an engine :class:`~manni_env.engine.Deal`,
so any game can be replayed by ``GameState`` (this is how records are written, see
:class:`GameLog`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import actions as A
from .cards import cards_of
from .engine import BASIC_TRUMP_ROTATION, EXCHANGE_LIMITS, Contract, Deal, GameState, Phase
from .rules import Rules, make_rules
from .view import SeatView

DEAL_BLOCK = 32
BACKENDS = ("numpy", "numba", "auto")
NULLO, TRUMP, GRAND = 0, 1, 2
_SUIT_OF = np.arange(52) // 13
_RANK_OF = np.arange(52) % 13
_SUIT_CARDS = _SUIT_OF[None, :] == np.arange(4)[:, None]  # (4, 52)
_TRUMP_ROTATION = np.array(BASIC_TRUMP_ROTATION)


def _deal_positions(variant: str) -> tuple[np.ndarray, np.ndarray]:
    """Positions in a shuffled pack of the Manni cards (drawing order) and of the hands of
    forehand, middlehand and dealer (``(3, 12)``), following the engine's dealing order."""
    if variant == "hornafjardar":
        manni, hands = [], [[], [], []]
        p = 0
        for _ in range(4):
            manni += range(p, p + 4)
            p += 4
            for j in range(3):
                hands[j] += range(p, p + 3)
                p += 3
        return np.array(manni), np.array(hands)
    manni, hands = [], [[], [], []]
    for r in range(3):
        base = 16 * r
        for j in range(3):
            hands[j] += range(base + 4 * j, base + 4 * j + 4)
        manni += range(base + 12, base + 16)
    return np.array(manni), np.array(hands)


_KINDS = ("nullo", "trump", "grand")  # indexed by NULLO, TRUMP, GRAND


def _bits(row: np.ndarray) -> int:
    """A boolean row (cards or suits) as an int bitmask, bit ``k`` for ``row[k]``."""
    return int.from_bytes(np.packbits(row, bitorder="little").tobytes(), "little")


def resolve_backend(backend: str, fallback: str = "numpy") -> str:
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
            raise ValueError("backend 'numba' needs numba: pip install numba (the 'fast' extra)") from None
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
    return (rng.random(mask.shape) * mask).argmax(1)


class VectorManni:
    """``num_envs`` Manni games in lockstep (see the module docstring for the API)."""

    def __init__(self, rules: Rules, num_envs: int, reward: str = "deal", history: str = "summary",
                 log_games: bool = False, backend: str = "numpy"):
        if rules.is_announcement:
            raise ValueError(f"variant {rules.variant!r} is not vectorized; use 'hornafjardar' or 'basic'")
        if reward not in ("deal", "outcome"):
            raise ValueError(f"reward must be 'deal' or 'outcome', got {reward!r}")
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs!r}")
        from .vector_obs import VectorEncoder

        self.backend = resolve_backend(backend)
        self._kernels = None
        if self.backend == "numba":
            from . import vector_numba

            self._kernels = vector_numba
        self.rules = rules
        self.num_envs = n = num_envs
        self.reward_mode = reward
        self.horn = rules.variant == "hornafjardar"
        self.encoder = VectorEncoder(rules, history)
        self.obs_size = self.encoder.size
        self.log_games = log_games
        self.logs: list[GameLog] = []
        self.finished_logs: list[GameLog] = []
        self._pack = np.array(cards_of(rules.pack), dtype=np.int8)
        self._manni_pos, self._hand_pos = _deal_positions(rules.variant)
        self._ar = np.arange(n)
        m = rules.manni_size
        b3 = (n, 3, 52)
        # per-game state
        self.hands = np.zeros(b3, bool)
        self.dealt = np.zeros(b3, bool)
        self.discards = np.zeros(b3, bool)
        self.drawn = np.zeros(b3, bool)
        self.played = np.zeros(b3, bool)
        self.voids = np.zeros((n, 3, 4), bool)
        self.manni = np.zeros((n, m), np.int64)
        self.manni_pos = np.zeros(n, np.int64)
        self.cut_card = np.full(n, -1, np.int64)
        self.kind = np.zeros(n, np.int64)
        self.trump = np.full(n, -1, np.int64)
        self.phase = np.zeros(n, np.int64)
        self.to_move = np.zeros(n, np.int64)
        self.dealer = np.zeros(n, np.int64)
        self.deal_index = np.zeros(n, np.int64)
        self.decision = np.zeros(n, np.int64)
        self.pending = np.zeros((n, 12), np.int64)
        self.n_pending = np.zeros(n, np.int64)
        self.exchange_counts = np.zeros((n, 3), np.int64)
        self.swapper = np.zeros(n, np.int64)
        self.passed = np.zeros((n, 3), np.int64)  # passed[i, k] = seat that passed k-th, -1 none
        self.n_passed = np.zeros(n, np.int64)
        self.leader = np.zeros(n, np.int64)
        self.led_suit = np.zeros(n, np.int64)
        self.trick = np.zeros((n, 3), np.int64)
        self.trick_len = np.zeros(n, np.int64)
        self.plays = np.zeros((n, 3 * rules.hand_size, 2), np.int64)  # (seat, card) in play order
        self.n_plays = np.zeros(n, np.int64)
        self.tricks_won = np.zeros((n, 3), np.int64)
        self.plus = np.zeros((n, 3), np.int64)
        self.minus = np.zeros((n, 3), np.int64)
        self.totals = np.zeros((n, 3), np.int64)
        # per-slot deal streams
        self._rngs: list[np.random.Generator] = []
        self._decks = np.zeros((n, DEAL_BLOCK, len(self._pack)), np.int8)
        self._deck_ptr = np.zeros(n, np.int64)
        self._seeded = False
        if self._kernels is not None:
            self._observe_args = self._kernel_observe_args()

    # ------------------------------------------------------------------ public API
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Seed every slot (see the module docstring) and start a new game in each."""
        children = np.random.SeedSequence(seed).spawn(self.num_envs)
        self._rngs = [np.random.default_rng(c) for c in children]
        self._deck_ptr[:] = DEAL_BLOCK
        self._seeded = True
        self.logs = [GameLog(i, 0) for i in range(self.num_envs)]
        self.finished_logs = []
        self._new_game(self._ar)
        obs = self._observe_and_mask()
        return obs, self._mask.copy(), self.to_move.copy()

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Apply one action per game for its seat on turn. Raises ``ValueError`` (and changes
        nothing) if any action is illegal."""
        if not self._seeded:
            raise RuntimeError("call reset(seed) before step()")
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or a.dtype.kind not in "iu":
            raise ValueError(f"actions must be an integer array of shape ({self.num_envs},), got {a.dtype} {a.shape}")
        a = a.astype(np.int64, copy=False)
        n = self.num_envs
        rewards = np.zeros((n, 3), np.float32)
        terminated = np.zeros(n, bool)
        truncated = np.zeros(n, bool)
        infos = {"deal_over": np.zeros(n, bool), "new_deal": np.zeros(n, bool), "new_game": np.zeros(n, bool)}
        if self._kernels is not None:
            illegal, deals_over = self._kernels.step_kernel(
                a, self._mask.view(np.uint8), self.phase, self.hands, self.discards, self.drawn, self.played,
                self.voids, self.manni, self.manni_pos, self.kind, self.trump, self.to_move, self.dealer,
                self.decision, self.pending, self.n_pending, self.exchange_counts, self.swapper, self.passed,
                self.n_passed, self.leader, self.led_suit, self.trick, self.trick_len, self.plays, self.n_plays,
                self.tricks_won, self.rules.tricks_per_deal, infos["deal_over"])
            if illegal:
                self._check_actions(a)
            self._log_actions(a)
            if deals_over:
                self._end_deal(np.flatnonzero(infos["deal_over"]), rewards, terminated, truncated, infos)
        else:
            self._check_actions(a)
            self._log_actions(a)
            phase = self.phase
            play = np.flatnonzero(phase == Phase.PLAY)
            ex = np.flatnonzero(phase == Phase.EXCHANGE)
            sw = np.flatnonzero(phase == Phase.SWAP)
            if play.size:
                self._play(play, a[play], rewards, terminated, truncated, infos)
            if ex.size:
                self._exchange(ex, a[ex])
            if sw.size:
                self._swap(sw, a[sw])
        obs = self._observe_and_mask()
        return obs, self._mask.copy(), self.to_move.copy(), rewards, terminated, truncated, infos

    def _check_actions(self, a: np.ndarray) -> None:
        """Raise ``ValueError`` naming the first illegal action in ``a`` (int64), if any."""
        bad = (a < 0) | (a >= A.NUM_ACTIONS)
        if not bad.any():
            bad = ~self._mask[self._ar, a]
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"illegal action {int(a[i])} in game {i} (phase {Phase(int(self.phase[i])).name}, "
                             f"seat {int(self.to_move[i])}); {int(bad.sum())} illegal action(s) in all, nothing applied")

    def _log_actions(self, a: np.ndarray) -> None:
        if self.log_games:
            for i, action in enumerate(a.tolist()):
                self.logs[i].actions.append(action)

    def action_mask(self) -> np.ndarray:
        """(N, 63) bool legal-action masks of the seats on turn (a copy)."""
        return self._mask.copy()

    def _observe_and_mask(self) -> np.ndarray:
        """Observations of the seats on turn, (N, obs_size) float32; sets ``self._mask`` to their
        legal-action masks. Both are new arrays."""
        if self._kernels is None:
            self._mask = self._compute_mask()
            return self.encoder.encode(self, self._ar)
        obs = np.empty((self.num_envs, self.obs_size), np.float32)
        mask = np.empty((self.num_envs, A.NUM_ACTIONS), bool)
        self._kernels.observe_kernel(obs, mask.view(np.uint8), *self._observe_args)
        self._mask = mask
        return obs

    def _observe(self) -> np.ndarray:
        """Observations of the seats on turn, (N, obs_size) float32 (a new array)."""
        if self._kernels is None:
            return self.encoder.encode(self, self._ar)
        obs = np.empty((self.num_envs, self.obs_size), np.float32)
        self._kernels.observe_kernel(obs, np.empty((self.num_envs, A.NUM_ACTIONS), np.uint8), *self._observe_args)
        return obs

    def _kernel_observe_args(self) -> tuple:
        """The arguments of :func:`~manni_env.vector_numba.observe_kernel` after ``out`` and ``mask``
        (the card arrays as uint8 views; all are views of this env's state, so they stay current)."""
        e, rules = self.encoder, self.rules
        u8 = [a.view(np.uint8) for a in (self.hands, self.discards, self.drawn, self.played, self.voids)]
        return (e.kernel_offsets, e.horn, e.full, e.play_slot, e.variant_one, rules.manni_size,
                float(rules.tricks_per_deal), e.score, rules.max_deals, rules.hand_size, self.phase, *u8,
                self.cut_card, self.kind, self.trump, self.to_move, self.dealer, self.exchange_counts,
                self.manni_pos, self.decision, self.n_pending, self.swapper, self.passed, self.leader,
                self.led_suit, self.trick, self.trick_len, self.tricks_won, self.plus, self.minus, self.totals,
                self.deal_index, self.plays, self.n_plays)

    def _compute_mask(self) -> np.ndarray:
        n = self.num_envs
        mask = np.zeros((n, A.NUM_ACTIONS), bool)
        hand = self.hands[self._ar, self.to_move]  # (N, 52)
        phase = self.phase
        follow = hand & _SUIT_CARDS[self.led_suit]  # led_suit -1 picks spades; masked by trick_len below
        must = (phase == Phase.PLAY) & (self.trick_len > 0) & follow.any(1)
        cards = (phase == Phase.PLAY) | (phase == Phase.EXCHANGE)
        mask[:, :52] = np.where(must[:, None], follow, hand & cards[:, None])
        mask[:, A.EXCHANGE_DONE] = phase == Phase.EXCHANGE
        swap = phase == Phase.SWAP
        mask[:, A.KEEP_HAND] = swap
        mask[:, A.SWAP_HAND] = swap
        return mask

    def exchange_limit(self, idx: np.ndarray) -> np.ndarray:
        """Hornafjarðarmanni: remaining discard allowance of the seat on turn (0 outside the exchange)."""
        limits = np.array(EXCHANGE_LIMITS)[np.minimum(self.decision[idx], 2)]
        left = np.minimum(limits, self.rules.manni_size - self.manni_pos[idx]) - self.n_pending[idx]
        return np.where(self.phase[idx] == Phase.EXCHANGE, left, 0)

    def view(self, i: int, seat: int) -> SeatView:
        """Seat ``seat``'s information state in game ``i``, equal to the engine's ``state.view(seat)``
        (for scalar policies such as ``rule_based`` playing a seat of a vector game)."""
        on_turn = int(self.to_move[i]) == seat
        kind = int(self.kind[i])
        trump = int(self.trump[i])
        view = object.__new__(SeatView)
        view.__dict__.update({
            "rules": self.rules,
            "seat": seat,
            "phase": Phase(int(self.phase[i])),
            "to_move": int(self.to_move[i]),
            "deal_index": int(self.deal_index[i]),
            "dealer": int(self.dealer[i]),
            "cut_card": int(self.cut_card[i]) if self.horn else None,
            "contract": Contract(_KINDS[kind], trump if trump >= 0 else None),
            "hand": _bits(self.hands[i, seat]),
            "dealt_hand": _bits(self.dealt[i, seat]),
            "discards": _bits(self.discards[i, seat]),
            "drawn": _bits(self.drawn[i, seat]),
            "pending": tuple(self.pending[i, : self.n_pending[i]].tolist()) if on_turn else (),
            "exchange_limit": int(self.exchange_limit(np.array([i]))[0]) if on_turn else 0,
            "exchange_counts": tuple(self.exchange_counts[i].tolist()),
            "manni_used": int(self.manni_pos[i]),
            "swapper": int(self.swapper[i]) if self.swapper[i] >= 0 else None,
            "taker": None,
            "passed": tuple(self.passed[i, : self.n_passed[i]].tolist()),
            "used_contracts": ((), (), ()),
            "leader": int(self.leader[i]),
            "led_suit": int(self.led_suit[i]),
            "trick": tuple(self.trick[i, : self.trick_len[i]].tolist()),
            "plays": tuple(map(tuple, self.plays[i, : self.n_plays[i]].tolist())),
            "played": tuple(_bits(self.played[i, s]) for s in range(3)),
            "voids": tuple(_bits(self.voids[i, s]) for s in range(3)),
            "tricks_won": tuple(self.tricks_won[i].tolist()),
            "plus": tuple(self.plus[i].tolist()),
            "minus": tuple(self.minus[i].tolist()),
            "totals": tuple(self.totals[i].tolist()),
            "legal_actions": tuple(np.flatnonzero(self._mask[i]).tolist()) if on_turn else (),
        })
        return view

    def deal(self, i: int) -> Deal:
        """Slot ``i``'s current deal as the engine's explicit :class:`Deal`."""
        d = int(self.dealer[i])
        order = ((d + 1) % 3, (d + 2) % 3, d)
        deck = self._decks[i, self._deck_ptr[i] - 1].astype(int).tolist()
        hands = [None, None, None]
        for j, seat in enumerate(order):
            hands[seat] = tuple(deck[p] for p in self._hand_pos[j])
        cut = deck[-1] if self.horn else None
        return Deal(tuple(hands), tuple(deck[p] for p in self._manni_pos), cut)

    # ------------------------------------------------------------------ phases
    def _play(self, g, card, rewards, terminated, truncated, infos) -> None:
        s = self.to_move[g]
        self.hands[g, s, card] = False
        self.played[g, s, card] = True
        suit = card // 13
        tl = self.trick_len[g]
        lead = tl == 0
        self.led_suit[g] = np.where(lead, suit, self.led_suit[g])
        off = ~lead & (suit != self.led_suit[g])
        self.voids[g[off], s[off], self.led_suit[g[off]]] = True
        self.trick[g, tl] = card
        self.plays[g, self.n_plays[g]] = np.stack([s, card], 1)
        self.n_plays[g] += 1
        self.trick_len[g] = tl + 1
        self.to_move[g] = (s + 1) % 3
        full = g[tl == 2]
        if not full.size:
            return
        cards = self.trick[full]  # (k, 3)
        rank = _RANK_OF[cards]
        rank = np.where((self.kind[full] == NULLO)[:, None] & (rank == 12), -1, rank)
        suits = cards // 13
        key = np.where(suits == self.trump[full][:, None], 100 + rank,
                       np.where(suits == self.led_suit[full][:, None], rank, -100))
        winner = (self.leader[full] + key.argmax(1)) % 3
        self.tricks_won[full, winner] += 1
        self.trick_len[full] = 0
        self.led_suit[full] = -1
        self.leader[full] = winner
        self.to_move[full] = winner
        over = full[self.tricks_won[full].sum(1) == self.rules.tricks_per_deal]
        if over.size:
            self._end_deal(over, rewards, terminated, truncated, infos)

    def _exchange(self, g, a) -> None:
        card = a < 52
        gc, s = g[card], self.to_move[g[card]]
        c = a[card]
        self.hands[gc, s, c] = False
        self.discards[gc, s, c] = True
        self.pending[gc, self.n_pending[gc]] = c
        self.n_pending[gc] += 1
        finish = np.concatenate([g[~card], gc[self.exchange_limit(gc) == 0]])
        if not finish.size:
            return
        finish.sort()
        s = self.to_move[finish]
        k = self.n_pending[finish]
        pos = self.manni_pos[finish]
        j = np.arange(self.rules.manni_size)
        take = (j >= pos[:, None]) & (j < (pos + k)[:, None])  # (f, M)
        rows, cols = np.nonzero(take)
        self.hands[finish[rows], s[rows], self.manni[finish[rows], cols]] = True
        self.drawn[finish[rows], s[rows], self.manni[finish[rows], cols]] = True
        self.exchange_counts[finish, s] = k
        self.manni_pos[finish] = pos + k
        self.n_pending[finish] = 0
        self._next_decision(finish)

    def _swap(self, g, a) -> None:
        swap = g[a == A.SWAP_HAND]
        if swap.size:
            s = self.to_move[swap]
            self.discards[swap, s] = self.hands[swap, s]
            manni = np.zeros((swap.size, 52), bool)
            manni[np.arange(swap.size)[:, None], self.manni[swap]] = True
            self.hands[swap, s] = manni
            self.drawn[swap, s] = manni
            self.swapper[swap] = s
            self._start_play(swap)
        keep = g[a == A.KEEP_HAND]
        if keep.size:
            self.passed[keep, self.n_passed[keep]] = self.to_move[keep]
            self.n_passed[keep] += 1
            self._next_decision(keep)

    def _next_decision(self, g) -> None:
        self.decision[g] += 1
        dec = self.decision[g]
        more = dec < 3
        gm = g[more]
        self.to_move[gm] = (self.dealer[gm] + 1 + dec[more]) % 3
        if (~more).any():
            self._start_play(g[~more])

    def _start_play(self, g) -> None:
        self.phase[g] = Phase.PLAY
        f = (self.dealer[g] + 1) % 3
        self.leader[g] = f
        self.to_move[g] = f

    # ------------------------------------------------------------------ deals and games
    def _end_deal(self, g, rewards, terminated, truncated, infos) -> None:
        if self._kernels is not None:
            self._end_deal_numba(g, rewards, terminated, truncated, infos)
            return
        rules = self.rules
        t = self.tricks_won[g]
        if self.horn:
            points = np.where((self.kind[g] == NULLO)[:, None], 4 - t, t - 4)
        elif rules.negative:
            points = t - 4
        else:
            points = np.maximum(0, t - 4)
        self.totals[g] += points
        self.plus[g] += np.maximum(points, 0)
        self.minus[g] += np.maximum(-points, 0)
        infos["deal_over"][g] = True
        for name, value in (("tricks_won", t), ("points", points), ("plus", self.plus[g]),
                            ("minus", self.minus[g]), ("totals", self.totals[g])):
            arr = infos.setdefault(name, np.zeros((self.num_envs, 3), np.int64))
            arr[g] = value
        totals = self.totals[g]
        top = totals.max(1)
        if self.horn:
            done = self.plus[g].max(1) >= rules.target
        else:
            done = (top >= rules.target) & ((totals == top[:, None]).sum(1) == 1)
        cap = ~done & (self.deal_index[g] + 1 >= rules.max_deals)
        done |= cap
        if self.reward_mode == "deal":
            rewards[g] = points
        ended = g[done]
        if ended.size:
            terminated[ended] = ~cap[done]
            truncated[ended] = cap[done]
            winners = infos.setdefault("winners", np.zeros((self.num_envs, 3), bool))
            winners[ended] = totals[done] == top[done][:, None]
            if self.reward_mode == "outcome":
                won = winners[ended]
                count = won.sum(1, keepdims=True)
                share = np.where(won, 1.0 / count, -1.0 / np.maximum(3 - count, 1))
                rewards[ended] = np.where(count == 3, 0.0, share)
            if self.log_games:
                self.finished_logs += [self.logs[i] for i in ended.tolist()]
            infos["new_game"][ended] = True
            self._new_game(ended)
        cont = g[~done]
        if cont.size:
            self.deal_index[cont] += 1
            self.dealer[cont] = (self.dealer[cont] + 1) % 3
            self._start_deal(cont)
        infos["new_deal"][g] = True

    def _end_deal_numba(self, g, rewards, terminated, truncated, infos) -> None:
        """``_end_deal`` with the scoring in :func:`~manni_env.vector_numba.end_deal_kernel`."""
        n, rules = self.num_envs, self.rules
        arrays = {name: np.zeros((n, 3), np.int64) for name in ("tricks_won", "points", "plus", "minus", "totals")}
        winners = np.zeros((n, 3), bool)
        new_game = infos["new_game"]
        self._kernels.end_deal_kernel(
            g, self.horn, rules.negative, rules.target, rules.max_deals, self.reward_mode == "outcome",
            self.tricks_won, self.kind, self.plus, self.minus, self.totals, self.deal_index, self.dealer, rewards,
            terminated, truncated, *arrays.values(), winners, infos["deal_over"], infos["new_deal"], new_game)
        infos.update(arrays)
        ended = new_game[g]
        if ended.any():
            infos["winners"] = winners
            if self.log_games:
                self.finished_logs += [self.logs[i] for i in g[ended].tolist()]
            self._new_game(g[ended])
            g = g[~ended]
        if g.size:
            self._start_deal(g)

    def _new_game(self, g) -> None:
        first = self.rules.first_dealer
        for i in g.tolist():
            d = int(self._rngs[i].integers(3)) if first is None else first
            self.dealer[i] = d
            if self.log_games:
                self.logs[i] = GameLog(i, d)
        self.deal_index[g] = 0
        self.plus[g] = 0
        self.minus[g] = 0
        self.totals[g] = 0
        self._start_deal(g)

    def _start_deal(self, g) -> None:
        empty = g[self._deck_ptr[g] >= DEAL_BLOCK]
        if empty.size:
            block = np.tile(self._pack, (DEAL_BLOCK, 1))
            for i in empty.tolist():
                self._decks[i] = self._rngs[i].permuted(block, axis=1)
            self._deck_ptr[empty] = 0
        if self._kernels is not None:
            self._kernels.start_deal_kernel(
                g, self._decks, self._deck_ptr, self._hand_pos, self._manni_pos, self.horn, _TRUMP_ROTATION,
                self.hands, self.dealt, self.discards, self.drawn, self.played, self.voids, self.manni,
                self.manni_pos, self.cut_card, self.kind, self.trump, self.phase, self.to_move, self.leader,
                self.dealer, self.deal_index, self.decision, self.n_pending, self.exchange_counts, self.swapper,
                self.passed, self.n_passed, self.led_suit, self.trick_len, self.n_plays, self.tricks_won)
            self._log_deals(g)
            return
        deck = self._decks[g, self._deck_ptr[g]].astype(np.int64)  # (k, 52 or 48)
        self._deck_ptr[g] += 1
        d = self.dealer[g]
        f = (d + 1) % 3
        self.hands[g] = False
        for j in range(3):
            seat = (d + 1 + j) % 3
            self.hands[g[:, None], seat[:, None], deck[:, self._hand_pos[j]]] = True
        self.dealt[g] = self.hands[g]
        self.manni[g] = deck[:, self._manni_pos]
        if self.horn:
            cut = deck[:, -1]
            rank = cut % 13
            self.cut_card[g] = cut
            self.kind[g] = np.where(rank <= 3, NULLO, np.where(rank <= 7, TRUMP, GRAND))
            self.trump[g] = np.where(self.kind[g] == TRUMP, cut // 13, -1)
            self.phase[g] = Phase.EXCHANGE
        else:
            self.kind[g] = TRUMP
            self.trump[g] = _TRUMP_ROTATION[self.deal_index[g] % 4]
            self.phase[g] = Phase.SWAP
        self.discards[g] = False
        self.drawn[g] = False
        self.played[g] = False
        self.voids[g] = False
        self.manni_pos[g] = 0
        self.to_move[g] = f
        self.leader[g] = f
        self.decision[g] = 0
        self.n_pending[g] = 0
        self.exchange_counts[g] = -1
        self.swapper[g] = -1
        self.passed[g] = -1
        self.n_passed[g] = 0
        self.led_suit[g] = -1
        self.trick_len[g] = 0
        self.n_plays[g] = 0
        self.tricks_won[g] = 0
        self._log_deals(g)

    def _log_deals(self, g) -> None:
        if self.log_games:
            for i in g.tolist():
                self.logs[i].deals.append(self.deal(i))
