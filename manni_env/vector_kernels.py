"""The vector env's kernels: one batched implementation of the rules of every variant.

:class:`manni_env.vector.VectorManni` keeps N games in one :class:`VectorState` (arrays with the
game index first) and runs these kernels on it, each taking that state and one
:class:`KernelRules` (the variant table's row and the observation layout as scalars and arrays):

- :func:`step` checks one action per game against the legal-action masks and applies them all
  (exchange, swap, pickup, discard, announcement, card play, trick winner); the deals that end go
  to :func:`end_deals`, which scores them (the variant's score table, floor and end rule, the deal
  cap) and deals the next deal of a game that goes on, unless that needs a random draw;
- :func:`start_deals` deals the next deal of the games the caller prepared (a new game's first
  dealer and used-up shuffled packs are drawn from the per-slot generators in Python);
- :func:`observe` writes the observation (layout ``v0`` or ``v1``) and legal-action mask of any
  seat, byte-identical to :class:`manni_env.observation.ObservationEncoder` on the engine's seat view.

Variant knowledge comes only from :class:`KernelRules` (built from ``Rules.spec`` by
:func:`kernel_rules`). The kernels are compiled by numba when it imports (``cache=True``, so only
the first run compiles); :func:`plain_kernels` gives this module executed without numba, the same
functions run by the Python interpreter (what runs where numba is missing; slow, identical results).

Writing the observations dominates a step (616 float32 per game with the summary history), so
:func:`observe` zeroes each row once and fills it while it is in the cache, copying the card
segments with :func:`_copy` (a loop LLVM turns into SIMD byte-to-float conversions).
"""

from __future__ import annotations

import functools
import importlib.util
from typing import NamedTuple

import numpy as np

from manni_env.actions import ANNOUNCE_SPADES, EXCHANGE_DONE, KEEP_HAND, NUM_ACTIONS, PASS_MANNI, SWAP_HAND, TAKE_MANNI
from manni_env.observation import (
    PLAY_SLOT,
    TRICK_ORDER,
    EXCHANGE_SCALE,
    UNSEEN_SCALE,
    ObservationEncoder,
    score_scale,
)
from manni_env.rules import CONTRACT_SLOTS, ContractKind, ContractSource, EndRule, ExchangeScheme, Phase, Rules

_PLAIN_NAME = "manni_env._vector_kernels_plain"  # this module loaded again without numba
try:
    import numba
except ImportError:  # the kernels run as plain Python
    numba = None
if __name__ == _PLAIN_NAME:
    numba = None

EXCHANGE, SWAP, PICKUP, DISCARD, ANNOUNCE, PLAY = (int(p) for p in (
    Phase.EXCHANGE, Phase.SWAP, Phase.PICKUP, Phase.DISCARD, Phase.ANNOUNCE, Phase.PLAY))
NULLO, TRUMP = int(ContractKind.NULLO), int(ContractKind.TRUMP)
CUT_SOURCE, ROTATION_SOURCE = int(ContractSource.CUT), int(ContractSource.ROTATION)
PLUS_TARGET, UNIQUE_TOTAL_TARGET = int(EndRule.PLUS_TARGET), int(EndRule.UNIQUE_TOTAL_TARGET)
NUM_CONTRACT_SLOTS = len(CONTRACT_SLOTS)  # the observation's "contracts used" slots per seat (Announcement.slot)
DEAL_BLOCK = 32  # shuffled packs drawn at once per game slot


def jit(fn):
    """``numba.njit`` (cached, no bounds checks) when numba imports, else ``fn`` itself."""
    if numba is None:
        return fn
    return numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")(fn)


class VectorState(NamedTuple):
    """N games' state, game index first; ``-1`` means "none". Seats are absolute (0, 1, 2)."""

    hands: np.ndarray  # (N, 3, 52) bool, cards held now
    dealt: np.ndarray  # (N, 3, 52) bool, cards as dealt
    discards: np.ndarray  # (N, 3, 52) bool, own discards this deal (Basic: the swapped-out hand)
    drawn: np.ndarray  # (N, 3, 52) bool, cards taken from the Manni this deal
    played: np.ndarray  # (N, 3, 52) bool, cards played this deal
    voids: np.ndarray  # (N, 3, 4) bool, suits each seat has shown void in
    deal_hands: np.ndarray  # (N, 3, hand_size) int64, the hands as dealt, in dealing order
    manni: np.ndarray  # (N, manni_size) int64, the Manni, top (drawn first) first
    manni_pos: np.ndarray  # (N,) Manni cards drawn so far (Hornafjarðarmanni)
    cut_card: np.ndarray  # (N,)
    kind: np.ndarray  # (N,) ContractKind index, -1 before the announcement
    trump: np.ndarray  # (N,)
    declarer: np.ndarray  # (N,)
    phase: np.ndarray  # (N,) Phase value 0..5
    to_move: np.ndarray  # (N,)
    dealer: np.ndarray  # (N,)
    deal_index: np.ndarray  # (N,) deals played before this one in the game
    decision: np.ndarray  # (N,) exchange / swap / pickup decisions made (0..3)
    pending: np.ndarray  # (N, hand_size) own discards chosen so far in the exchange / after a pickup
    n_pending: np.ndarray  # (N,)
    exchange_counts: np.ndarray  # (N, 3) cards each seat exchanged (Hornafjarðarmanni; -1 undecided)
    swapper: np.ndarray  # (N,) Basic: who swapped with the Manni
    taker: np.ndarray  # (N,) announcement variants: who took the Manni
    passed: np.ndarray  # (N, 3) seats that kept their hand / passed the Manni, in order, -1 padded
    n_passed: np.ndarray  # (N,)
    used: np.ndarray  # (N, 3, 6) bool, contract slots each seat has announced this game
    used_order: np.ndarray  # (N, 3, 6) the same slots in announcement order, -1 padded
    leader: np.ndarray  # (N,)
    led_suit: np.ndarray  # (N,)
    trick: np.ndarray  # (N, 3) cards of the trick under way, in play order
    trick_len: np.ndarray  # (N,)
    plays: np.ndarray  # (N, 3 * hand_size, 2) (seat, card) of this deal in play order
    n_plays: np.ndarray  # (N,)
    tricks_won: np.ndarray  # (N, 3)
    plus: np.ndarray  # (N, 3)
    minus: np.ndarray  # (N, 3)
    totals: np.ndarray  # (N, 3)
    decks: np.ndarray  # (N, DEAL_BLOCK, pack size) int8, shuffled packs for the next random deals
    deck_ptr: np.ndarray  # (N,) next unused row of decks
    queued_hands: np.ndarray  # (N, Q, 3, hand_size) explicit deals of the first game, hands by seat
    queued_manni: np.ndarray  # (N, Q, manni_size)
    queued_cut: np.ndarray  # (N, Q)
    n_queued: np.ndarray  # (N,) explicit deals left to the slot's first game, from next_queued on
    next_queued: np.ndarray  # (N,)


def new_state(rules: Rules, n: int, queued: int = 0) -> VectorState:
    """A zeroed state of ``n`` games of ``rules`` with room for ``queued`` explicit deals per slot."""
    h, m, pack = rules.hand_size, rules.manni_size, rules.pack.bit_count()
    shapes = {"hands": (n, 3, 52), "dealt": (n, 3, 52), "discards": (n, 3, 52), "drawn": (n, 3, 52),
              "played": (n, 3, 52), "voids": (n, 3, 4), "used": (n, 3, NUM_CONTRACT_SLOTS)}
    arrays = {name: np.zeros(shape, bool) for name, shape in shapes.items()}
    sized = {"deal_hands": (n, 3, h), "manni": (n, m), "pending": (n, h), "exchange_counts": (n, 3),
             "passed": (n, 3), "used_order": (n, 3, NUM_CONTRACT_SLOTS), "trick": (n, 3), "plays": (n, 3 * h, 2),
             "tricks_won": (n, 3), "plus": (n, 3), "minus": (n, 3), "totals": (n, 3),
             "queued_hands": (n, queued, 3, h), "queued_manni": (n, queued, m), "queued_cut": (n, queued)}
    for name in VectorState._fields:
        if name == "decks":
            arrays[name] = np.zeros((n, DEAL_BLOCK, pack), np.int8)
        elif name not in arrays:
            arrays[name] = np.zeros(sized.get(name, (n,)), np.int64)
    return VectorState(**arrays)


class KernelRules(NamedTuple):
    """What the kernels need of the rules (one variant table row) and of the observation layout."""

    hand_size: int
    manni_size: int
    hand_positions: np.ndarray  # (3, hand_size) positions in a shuffled pack of forehand's, middlehand's, dealer's
    manni_positions: np.ndarray  # (manni_size,)
    cut: bool  # the pack's bottom card is the cut card
    contract_source: int  # ContractSource
    cut_kinds: np.ndarray  # (13,) contract kind by the cut card's rank
    trump_rotation: np.ndarray  # trump by deal number
    announce_slot: np.ndarray  # (NUM_ACTIONS,) contract slot of an announcement action, -1 for others
    announce_kind: np.ndarray  # (NUM_ACTIONS,)
    announce_trump: np.ndarray  # (NUM_ACTIONS,)
    first_phase: int  # Phase of the exchange scheme
    exchange_limits: np.ndarray  # (3,) discards allowed in decision order
    pickup_discards: int
    score_sign: np.ndarray  # (3,) by contract kind: sign * (tricks - offset), the declarer's offset apart
    score_offset: np.ndarray
    score_declarer_offset: np.ndarray
    has_floor: bool
    floor: int
    end_rule: int  # EndRule
    target: int  # 0 without a target
    max_deals: int
    outcome: bool  # rewards: the game outcome (else each deal's score)
    # the observation layout (ObservationEncoder.offset) and its scales
    o_hand: int
    o_variant: int  # offset of this variant's bit, -1 where the layout names no bit for it
    o_kind: int
    o_trump: int
    o_cut: int
    o_cut_holder: int
    o_dealer: int
    o_to_move: int
    o_phase: int
    o_discards: int
    o_drawn: int
    o_decided: int
    o_owner: int  # the swapper segment (SWAP scheme) or the taker segment (PICKUP scheme)
    o_passed: int
    o_declarer: int
    o_used: int
    o_trick: int
    o_led: int
    o_leader: int
    o_played: int
    o_voids: int
    o_counts: int
    o_manni_used: int
    o_limit: int
    o_tricks: int
    o_plus: int
    o_minus: int
    o_totals: int
    o_deal: int
    o_history: int
    full_history: bool
    # layout v1's trick-play segments (trick_play False: layout v0, the offsets unused)
    trick_play: bool
    o_trick_pos: int
    o_win_card: int
    o_win_seat: int
    o_led_cards: int
    o_won_cards: int
    o_unseen: int
    unseen_rank: np.ndarray  # (2, 13) by nullo: the ranks from the highest in the trick order down
    unseen_value: np.ndarray  # (13,) float64, k / UNSEEN_SCALE
    pack: np.ndarray  # (52,) uint8, the variant's cards
    taken: float  # exchange count of the swapper or taker, scaled
    score_scale: int


def kernel_rules(rules: Rules, encoder: ObservationEncoder, outcome: bool) -> KernelRules:
    """The kernels' view of ``rules`` (``Rules.spec``) and of ``encoder``'s layout."""
    spec = rules.spec
    slot, kind, trump = (np.full(NUM_ACTIONS, -1, np.int64) for _ in range(3))
    for row in spec.announcements:
        slot[row.action], kind[row.action] = row.slot, int(row.kind)
        trump[row.action] = -1 if row.trump is None else row.trump
    o = encoder.offset
    swap = spec.exchange == ExchangeScheme.SWAP
    return KernelRules(
        hand_size=rules.hand_size, manni_size=rules.manni_size,
        hand_positions=np.array(spec.hand_positions, np.int64),
        manni_positions=np.array(spec.manni_positions, np.int64),
        cut=spec.cut, contract_source=int(spec.contract_source),
        cut_kinds=np.array(spec.cut_kinds or (0,) * 13, np.int64),
        trump_rotation=np.array(spec.trump_rotation or (-1,), np.int64),
        announce_slot=slot, announce_kind=kind, announce_trump=trump,
        first_phase=int(spec.exchange), exchange_limits=np.array(spec.exchange_limits, np.int64),
        pickup_discards=spec.pickup_discards,
        score_sign=np.array([s.sign for s in spec.scores], np.int64),
        score_offset=np.array([s.offset for s in spec.scores], np.int64),
        score_declarer_offset=np.array([s.declarer_offset for s in spec.scores], np.int64),
        has_floor=rules.floor is not None, floor=rules.floor or 0,
        end_rule=int(spec.end_rule), target=rules.target or 0, max_deals=rules.max_deals, outcome=outcome,
        o_hand=o["hand"], o_variant=-1 if encoder.variant_slot is None else o["variant"] + encoder.variant_slot, o_kind=o["contract_kind"],
        o_trump=o["trump"], o_cut=o["cut_card"], o_cut_holder=o["cut_holder"], o_dealer=o["dealer"],
        o_to_move=o["to_move"], o_phase=o["phase"], o_discards=o["discards"], o_drawn=o["drawn"],
        o_decided=o["exchange_decided"], o_owner=o["swapper"] if swap else o["taker"], o_passed=o["passed"],
        o_declarer=o["declarer"], o_used=o["used_contracts"], o_trick=o["trick"], o_led=o["led_suit"],
        o_leader=o["leader"], o_played=o["played"], o_voids=o["voids"], o_counts=o["exchange_counts"],
        o_manni_used=o["manni_used"], o_limit=o["exchange_limit"], o_tricks=o["tricks_won"], o_plus=o["plus"],
        o_minus=o["minus"], o_totals=o["totals"], o_deal=o["deal_index"], o_history=o.get("history", 0),
        full_history=encoder.history == "full",
        trick_play=encoder.layout == "v1", o_trick_pos=o.get("trick_position", 0),
        o_win_card=o.get("trick_winning_card", 0), o_win_seat=o.get("trick_winning_seat", 0),
        o_led_cards=o.get("led", 0), o_won_cards=o.get("won", 0), o_unseen=o.get("unseen_above", 0),
        unseen_rank=np.array(TRICK_ORDER, np.int64), unseen_value=np.arange(13) / UNSEEN_SCALE,
        pack=np.array([rules.pack >> c & 1 for c in range(52)], np.uint8),
        taken=(rules.hand_size if swap else rules.manni_size) / EXCHANGE_SCALE, score_scale=score_scale(rules),
    )


class StepOut(NamedTuple):
    """What :func:`step` reports per game (the arrays of ``VectorManni.step``'s results)."""

    rewards: np.ndarray  # (N, 3) float32
    terminated: np.ndarray  # (N,) bool
    truncated: np.ndarray
    deal_over: np.ndarray
    new_deal: np.ndarray
    new_game: np.ndarray
    needs_deal: np.ndarray  # (N,) bool, the caller deals the next deal (start_deals)
    tricks_won: np.ndarray  # (N, 3) int64, of the deal that ended
    points: np.ndarray
    plus: np.ndarray
    minus: np.ndarray
    totals: np.ndarray
    winners: np.ndarray  # (N, 3) bool, of the game that ended


def new_step_out(n: int) -> StepOut:
    """Zeroed outputs for ``n`` games (the flags and the tallies are rows of one array each)."""
    return StepOut(np.zeros((n, 3), np.float32), *np.zeros((6, n), bool), *np.zeros((5, n, 3), np.int64),
                   np.zeros((n, 3), bool))


def bind(kernel, *args):
    """``kernel`` compiled for the types of ``args``, callable without numba's type dispatch (slow
    with the state's tuple of arrays; the benchmarks' vector results page has its cost); later calls
    must pass arguments of exactly these types (C-contiguous arrays of the same dtypes). Without
    numba: ``kernel``."""
    if numba is None:
        return kernel
    return kernel.compile(tuple(numba.typeof(a) for a in args))


def load_uncompiled(name: str, path: str):
    """The kernel module at ``path`` executed again under ``name``, a name its ``jit`` (this
    module's, itself loaded again) recognizes as "without numba": the same kernels as plain Python."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def plain_kernels():
    """This module executed again without numba: the same kernels as plain Python functions."""
    return load_uncompiled(_PLAIN_NAME, __file__)


# ------------------------------------------------------------------------------------ actions
# Inside their per-game loops the kernels never pass ``state`` to a function: a call (inlined or
# not) copies the tuple and updates the reference count of every array in it, two atomic
# operations per array, which cost more than the rules themselves (measured: the benchmarks'
# vector results page). Helpers take scalars; the loops index the state directly.
@jit
def step(state, rules, actions, mask, out):
    """Apply ``actions[i]`` for the seat on turn in every game ``i``, if every action is legal under
    ``mask`` ((N, NUM_ACTIONS) bool); report into ``out`` (:class:`StepOut`). Returns -1 (and
    changes nothing) if an action is illegal, else the number of games whose next deal the caller
    must deal with :func:`start_deals` (a new game, or a game that used up its shuffled packs)."""
    hands, discards, drawn, played, voids = state.hands, state.discards, state.drawn, state.played, state.voids
    phase, to_move, dealer, decision = state.phase, state.to_move, state.dealer, state.decision
    manni, manni_pos, pending, n_pending = state.manni, state.manni_pos, state.pending, state.n_pending
    exchange_counts, swapper, taker = state.exchange_counts, state.swapper, state.taker
    passed, n_passed, used, used_order = state.passed, state.n_passed, state.used, state.used_order
    kind, trump, declarer = state.kind, state.trump, state.declarer
    leader, led_suit, trick, trick_len = state.leader, state.led_suit, state.trick, state.trick_len
    plays, n_plays, tricks_won = state.plays, state.n_plays, state.tricks_won
    n = actions.shape[0]
    for i in range(n):
        a = actions[i]
        if a < 0 or a >= NUM_ACTIONS or not mask[i, a]:
            return -1
    ended = np.empty(n, np.int64)  # games whose deal ended
    n_ended = 0
    for i in range(n):
        a = actions[i]
        seat = to_move[i]
        phase_i = phase[i]
        forehand = (dealer[i] + 1) % 3
        if phase_i == PLAY:
            hands[i, seat, a] = False
            played[i, seat, a] = True
            count = trick_len[i]
            if count == 0:
                led_suit[i] = a // 13
            elif a // 13 != led_suit[i]:
                voids[i, seat, led_suit[i]] = True
            trick[i, count] = a
            k = n_plays[i]
            plays[i, k, 0] = seat
            plays[i, k, 1] = a
            n_plays[i] = k + 1
            if count < 2:
                trick_len[i] = count + 1
                to_move[i] = (seat + 1) % 3
                continue
            best = kernel_trick_winner(trick[i, 0], trick[i, 1], trick[i, 2], trump[i],
                                 kind[i] == NULLO)
            winner = (leader[i] + best) % 3
            tricks_won[i, winner] += 1
            trick_len[i] = 0
            led_suit[i] = -1
            leader[i] = to_move[i] = winner
            if k + 1 == 3 * rules.hand_size:
                ended[n_ended] = i
                n_ended += 1
            continue
        if phase_i == EXCHANGE or phase_i == DISCARD:  # a discard, or Hornafjarðarmanni's EXCHANGE_DONE
            if a != EXCHANGE_DONE:
                hands[i, seat, a] = False
                discards[i, seat, a] = True
                pending[i, n_pending[i]] = a
                n_pending[i] += 1
            if phase_i == DISCARD:
                if n_pending[i] == rules.pickup_discards:
                    n_pending[i] = 0
                    phase[i] = ANNOUNCE
                    to_move[i] = forehand
                continue
            k = n_pending[i]
            first = manni_pos[i]
            limit = min(rules.exchange_limits[decision[i]], rules.manni_size - first)
            if a != EXCHANGE_DONE and k < limit:
                continue
            for j in range(first, first + k):  # as many replacements from the top of the Manni
                hands[i, seat, manni[i, j]] = True
                drawn[i, seat, manni[i, j]] = True
            exchange_counts[i, seat] = k
            manni_pos[i] = first + k
            n_pending[i] = 0
        elif phase_i == ANNOUNCE:
            slot = rules.announce_slot[a]
            used[i, seat, slot] = True
            for k in range(NUM_CONTRACT_SLOTS):
                if used_order[i, seat, k] < 0:
                    used_order[i, seat, k] = slot
                    break
            kind[i] = rules.announce_kind[a]
            trump[i] = rules.announce_trump[a]
            declarer[i] = seat
            phase[i] = PLAY
            leader[i] = to_move[i] = forehand
            continue
        elif a == SWAP_HAND or a == TAKE_MANNI:
            if a == SWAP_HAND:
                for c in range(52):
                    discards[i, seat, c] = hands[i, seat, c]
                    hands[i, seat, c] = False
                swapper[i] = seat
                phase[i] = PLAY
                leader[i] = to_move[i] = forehand
            else:
                taker[i] = seat
                phase[i] = DISCARD
            for j in range(rules.manni_size):
                hands[i, seat, manni[i, j]] = True
                drawn[i, seat, manni[i, j]] = True
            continue
        else:  # KEEP_HAND, PASS_MANNI
            passed[i, n_passed[i]] = seat
            n_passed[i] += 1
        # the seat's exchange / swap / pickup decision is made: the next seat's, else what follows
        decision_i = decision[i] + 1
        decision[i] = decision_i
        if decision_i < 3:
            to_move[i] = (forehand + decision_i) % 3
        elif rules.first_phase == PICKUP:
            phase[i] = ANNOUNCE
            to_move[i] = forehand
        else:
            phase[i] = PLAY
            leader[i] = to_move[i] = forehand
    if n_ended == 0:
        return 0
    return end_deals(state, rules, out, ended[:n_ended])


@jit
def kernel_trick_winner(c0, c1, c2, trump, nullo):
    """Index of the winning card of the trick ``c0, c1, c2`` in play order (as ``engine.trick_winner``)."""
    best = 0
    best_card = c0
    for j in range(1, 3):
        card = c1 if j == 1 else c2
        if card // 13 == best_card // 13:
            rank, best_rank = card % 13, best_card % 13
            if nullo:
                rank = -1 if rank == 12 else rank
                best_rank = -1 if best_rank == 12 else best_rank
            if rank > best_rank:
                best, best_card = j, card
        elif card // 13 == trump:
            best, best_card = j, card
    return best


# ------------------------------------------------------------------------------------ deals
@jit
def end_deals(state, rules, out, games):
    """Score the finished deals of ``games`` into their tallies and ``out``; end each game (its
    tallies cleared for the next one) or move to its next deal, dealt here when it needs no random
    draw. Returns the number of games left for the caller to deal (see :func:`step`).

    The rewards and the end flags are the compiled copy of :func:`manni_env.episodes.step_rewards`
    and :func:`~manni_env.episodes.episode_end` (``"game"`` episodes), tested against them."""
    kind, declarer, tricks_won = state.kind, state.declarer, state.tricks_won
    plus, minus, totals, used, used_order = state.plus, state.minus, state.totals, state.used, state.used_order
    dealer, deal_index, decks, deck_ptr = state.dealer, state.deal_index, state.decks, state.deck_ptr
    n_queued, next_queued = state.n_queued, state.next_queued
    deal_now = np.empty(games.shape[0], np.int64)
    n_now = waiting = 0
    for i in games:
        kind_i = kind[i]
        declarer_i = declarer[i]
        for seat in range(3):
            won = tricks_won[i, seat]
            offset = rules.score_declarer_offset[kind_i] if seat == declarer_i else rules.score_offset[kind_i]
            p = rules.score_sign[kind_i] * (won - offset)
            if rules.has_floor and p < rules.floor:
                p = rules.floor
            totals[i, seat] += p
            if p > 0:
                plus[i, seat] += p
            else:
                minus[i, seat] -= p
            out.tricks_won[i, seat] = won
            out.points[i, seat] = p
            out.plus[i, seat] = plus[i, seat]
            out.minus[i, seat] = minus[i, seat]
            out.totals[i, seat] = totals[i, seat]
            if not rules.outcome:
                out.rewards[i, seat] = p
        top = max(totals[i, 0], totals[i, 1], totals[i, 2])
        n_top = 0  # (counted, not summed: numpy's booleans add as "or" where the kernels run uncompiled)
        for seat in range(3):
            if totals[i, seat] == top:
                n_top += 1
        deals = deal_index[i] + 1
        if rules.end_rule == PLUS_TARGET:
            done = max(plus[i, 0], plus[i, 1], plus[i, 2]) >= rules.target
        elif rules.end_rule == UNIQUE_TOTAL_TARGET:
            done = top >= rules.target and n_top == 1
        else:
            done = deals == rules.max_deals
        capped = not done and deals >= rules.max_deals
        out.deal_over[i] = out.new_deal[i] = True
        if done or capped:
            out.terminated[i] = not capped
            out.truncated[i] = capped
            out.new_game[i] = True
            for seat in range(3):
                won = totals[i, seat] == top
                out.winners[i, seat] = won
                if rules.outcome and n_top < 3:
                    out.rewards[i, seat] = 1.0 / n_top if won else -1.0 / (3 - n_top)
                plus[i, seat] = minus[i, seat] = totals[i, seat] = 0
                for k in range(NUM_CONTRACT_SLOTS):
                    used[i, seat, k] = False
                    used_order[i, seat, k] = -1
            deal_index[i] = 0
            n_queued[i] = next_queued[i] = 0  # explicit deals left over are dropped
            out.needs_deal[i] = True
            waiting += 1
            continue
        deal_index[i] = deals
        dealer[i] = (dealer[i] + 1) % 3
        if next_queued[i] < n_queued[i] or deck_ptr[i] < decks.shape[1]:
            deal_now[n_now] = i
            n_now += 1
        else:
            out.needs_deal[i] = True
            waiting += 1
    start_deals(state, rules, deal_now[:n_now])
    return waiting


@jit
def start_deals(state, rules, games):
    """Deal the next deal of ``games``: the slot's next explicit deal, else its next shuffled pack
    (``decks[i, deck_ptr[i]]``; the caller refills used-up blocks)."""
    hands, dealt, discards, drawn, played, voids = (state.hands, state.dealt, state.discards, state.drawn,
                                                    state.played, state.voids)
    deal_hands, manni, cut_card = state.deal_hands, state.manni, state.cut_card
    decks, deck_ptr = state.decks, state.deck_ptr
    queued_hands, queued_manni, queued_cut = state.queued_hands, state.queued_manni, state.queued_cut
    n_queued, next_queued = state.n_queued, state.next_queued
    phase, to_move, dealer, deal_index, decision = (state.phase, state.to_move, state.dealer, state.deal_index,
                                                    state.decision)
    manni_pos, n_pending, exchange_counts = state.manni_pos, state.n_pending, state.exchange_counts
    swapper, taker, passed, n_passed = state.swapper, state.taker, state.passed, state.n_passed
    kind, trump, declarer = state.kind, state.trump, state.declarer
    leader, led_suit, trick_len, n_plays, tricks_won = (state.leader, state.led_suit, state.trick_len, state.n_plays,
                                                        state.tricks_won)
    h = rules.hand_size
    for i in games:
        forehand = (dealer[i] + 1) % 3
        if next_queued[i] < n_queued[i]:
            q = next_queued[i]
            next_queued[i] = q + 1
            for seat in range(3):
                for k in range(h):
                    deal_hands[i, seat, k] = queued_hands[i, q, seat, k]
            for k in range(rules.manni_size):
                manni[i, k] = queued_manni[i, q, k]
            cut_card[i] = queued_cut[i, q]
        else:
            row = deck_ptr[i]
            deck_ptr[i] = row + 1
            for j in range(3):  # forehand, middlehand, dealer
                for k in range(h):
                    deal_hands[i, (forehand + j) % 3, k] = decks[i, row, rules.hand_positions[j, k]]
            for k in range(rules.manni_size):
                manni[i, k] = decks[i, row, rules.manni_positions[k]]
            cut_card[i] = decks[i, row, decks.shape[2] - 1] if rules.cut else -1
        for seat in range(3):
            for c in range(52):
                hands[i, seat, c] = False
                discards[i, seat, c] = False
                drawn[i, seat, c] = False
                played[i, seat, c] = False
            for k in range(h):
                hands[i, seat, deal_hands[i, seat, k]] = True
            for c in range(52):
                dealt[i, seat, c] = hands[i, seat, c]
            for suit in range(4):
                voids[i, seat, suit] = False
            exchange_counts[i, seat] = -1
            passed[i, seat] = -1
            tricks_won[i, seat] = 0
        if rules.contract_source == CUT_SOURCE:
            cut = cut_card[i]
            kind[i] = rules.cut_kinds[cut % 13]
            trump[i] = cut // 13 if kind[i] == TRUMP else -1
        elif rules.contract_source == ROTATION_SOURCE:
            kind[i] = TRUMP
            trump[i] = rules.trump_rotation[deal_index[i] % rules.trump_rotation.shape[0]]
        else:  # announced
            kind[i] = trump[i] = -1
        declarer[i] = -1
        phase[i] = rules.first_phase
        to_move[i] = leader[i] = forehand
        manni_pos[i] = decision[i] = n_pending[i] = n_passed[i] = 0
        swapper[i] = taker[i] = led_suit[i] = -1
        trick_len[i] = n_plays[i] = 0


# ------------------------------------------------------------------------------------ observations
@jit
def _copy(dst, d0, src, s0, k):
    """``dst[d0 : d0 + k] = src[s0 : s0 + k]`` on flat arrays, written so that LLVM vectorizes it:
    no views (each costs two atomic reference-count updates), unsigned indices (numba checks signed
    ones for negative values) and ``k`` a runtime value (a constant trip count is unrolled into
    scalar code instead)."""
    d, s = np.uint64(d0), np.uint64(s0)
    for c in range(np.uint64(k)):
        dst[d + c] = src[s + c]


@jit
def _rel(seat, me):
    """Seat ``seat`` relative to seat ``me`` (0 me, 1 left, 2 right), both in 0..2."""
    r = seat - me
    return r + 3 if r < 0 else r


@jit
def observe(state, rules, games, seats, obs, mask):
    """Write the observation of seat ``seats[k]`` in game ``games[k]`` into ``obs[k]`` ((K, size)
    float32) and its legal-action mask into ``mask[k]`` ((K, NUM_ACTIONS) bool; zeros unless that
    seat is on turn), equal byte for byte to ``ObservationEncoder.encode(view)`` and
    ``action_mask(view)`` of the engine's seat view."""
    phase, to_move, dealer, deal_index, decision = (state.phase, state.to_move, state.dealer, state.deal_index,
                                                    state.decision)
    cut_card, kind, trump, declarer = state.cut_card, state.kind, state.trump, state.declarer
    manni_pos, n_pending, exchange_counts = state.manni_pos, state.n_pending, state.exchange_counts
    swapper, taker, passed, n_passed, used = state.swapper, state.taker, state.passed, state.n_passed, state.used
    leader, led_suit, trick, trick_len = state.leader, state.led_suit, state.trick, state.trick_len
    plays, n_plays = state.plays, state.n_plays
    tricks_won, plus, minus, totals = state.tricks_won, state.plus, state.minus, state.totals
    size, nm = obs.shape[1], mask.shape[1]
    nc, nv = state.hands.shape[2], state.voids.shape[2]  # 52 cards, 4 suits (runtime values: see _copy)
    flat, m = obs.reshape(-1), mask.view(np.uint8).reshape(-1)
    hands, discards = state.hands.view(np.uint8).reshape(-1), state.discards.view(np.uint8).reshape(-1)
    drawn, played = state.drawn.view(np.uint8).reshape(-1), state.played.view(np.uint8).reshape(-1)
    voids = state.voids.view(np.uint8).reshape(-1)
    unseen_rank, unseen_value, pack = rules.unseen_rank, rules.unseen_value, rules.pack
    unseen = np.empty(52, np.uint8)  # v1: the cards of the observing seat's game it has not seen
    for k in range(games.shape[0]):
        i, seat = games[k], seats[k]
        row, mrow = k * size, k * nm
        flat[row : row + size] = 0.0
        m[mrow : mrow + nm] = 0
        phase_i = phase[i]
        on_turn = to_move[i] == seat
        own = (3 * i + seat) * nc  # this seat's row in the flat card arrays
        if on_turn:
            if phase_i == PLAY:
                lo, hi = 0, 52
                if trick_len[i] > 0:
                    led = led_suit[i]
                    for c in range(13 * led, 13 * led + 13):
                        if hands[own + c]:
                            lo, hi = 13 * led, 13 * led + 13
                            break
                _copy(m, mrow + lo, hands, own + lo, hi - lo)
            elif phase_i == EXCHANGE or phase_i == DISCARD:
                _copy(m, mrow, hands, own, nc)
                if phase_i == EXCHANGE:
                    m[mrow + EXCHANGE_DONE] = 1
            elif phase_i == SWAP:
                m[mrow + KEEP_HAND] = m[mrow + SWAP_HAND] = 1
            elif phase_i == PICKUP:
                m[mrow + TAKE_MANNI] = m[mrow + PASS_MANNI] = 1
            else:
                for a in range(ANNOUNCE_SPADES, nm):
                    slot = rules.announce_slot[a]
                    if slot >= 0 and not used[i, seat, slot]:
                        m[mrow + a] = 1
        _copy(flat, row + rules.o_hand, hands, own, nc)
        _copy(flat, row + rules.o_discards, discards, own, nc)
        _copy(flat, row + rules.o_drawn, drawn, own, nc)
        for r in range(3):
            a = seat + r
            if a >= 3:
                a -= 3
            _copy(flat, row + rules.o_played + nc * r, played, (3 * i + a) * nc, nc)
            _copy(flat, row + rules.o_voids + nv * r, voids, (3 * i + a) * nv, nv)
            flat[row + rules.o_tricks + r] = tricks_won[i, a] / rules.hand_size
            flat[row + rules.o_plus + r] = plus[i, a] / rules.score_scale
            flat[row + rules.o_minus + r] = minus[i, a] / rules.score_scale
            flat[row + rules.o_totals + r] = totals[i, a] / rules.score_scale
        if rules.o_variant >= 0:
            flat[row + rules.o_variant] = 1.0
        rel_dealer = _rel(dealer[i], seat)
        flat[row + rules.o_dealer + rel_dealer] = 1.0
        flat[row + rules.o_to_move + _rel(to_move[i], seat)] = 1.0
        flat[row + rules.o_phase + phase_i] = 1.0
        if cut_card[i] >= 0:
            flat[row + rules.o_cut + cut_card[i]] = 1.0
            flat[row + rules.o_cut_holder + rel_dealer] = 1.0
        if kind[i] >= 0:
            flat[row + rules.o_kind + kind[i]] = 1.0
        if trump[i] >= 0:
            flat[row + rules.o_trump + trump[i]] = 1.0
        if declarer[i] >= 0:
            flat[row + rules.o_declarer + _rel(declarer[i], seat)] = 1.0
        if rules.first_phase == EXCHANGE:
            for r in range(3):
                a = seat + r
                if a >= 3:
                    a -= 3
                count = exchange_counts[i, a]
                if count >= 0:
                    flat[row + rules.o_decided + r] = 1.0
                    flat[row + rules.o_counts + r] = count / EXCHANGE_SCALE
            flat[row + rules.o_manni_used] = manni_pos[i] / rules.manni_size
            if on_turn and phase_i == EXCHANGE:
                limit = min(rules.exchange_limits[decision[i]], rules.manni_size - manni_pos[i])
                flat[row + rules.o_limit] = (limit - n_pending[i]) / EXCHANGE_SCALE
        else:
            for j in range(n_passed[i]):
                r = _rel(passed[i, j], seat)
                flat[row + rules.o_passed + r] = 1.0
                flat[row + rules.o_decided + r] = 1.0
            owner = swapper[i] if rules.first_phase == SWAP else taker[i]
            if owner >= 0:
                r = _rel(owner, seat)
                flat[row + rules.o_decided + r] = 1.0
                flat[row + rules.o_owner + r] = 1.0
                flat[row + rules.o_counts + r] = rules.taken
                flat[row + rules.o_manni_used] = 1.0
            if on_turn and phase_i == DISCARD:
                flat[row + rules.o_limit] = (rules.pickup_discards - n_pending[i]) / EXCHANGE_SCALE
            for a in range(3):
                base = row + rules.o_used + NUM_CONTRACT_SLOTS * _rel(a, seat)
                for slot in range(NUM_CONTRACT_SLOTS):
                    if used[i, a, slot]:
                        flat[base + slot] = 1.0
        if phase_i == PLAY:
            leader_i = leader[i]
            flat[row + rules.o_leader + _rel(leader_i, seat)] = 1.0
            if led_suit[i] >= 0:
                flat[row + rules.o_led + led_suit[i]] = 1.0
            for j in range(trick_len[i]):
                p = leader_i + j
                if p >= 3:
                    p -= 3
                flat[row + rules.o_trick + 52 * _rel(p, seat) + trick[i, j]] = 1.0
        flat[row + rules.o_deal] = deal_index[i] / rules.max_deals
        if rules.full_history:
            for j in range(n_plays[i]):
                base = row + rules.o_history + PLAY_SLOT * j
                flat[base + plays[i, j, 1]] = 1.0
                flat[base + 52 + _rel(plays[i, j, 0], seat)] = 1.0
        if not rules.trick_play:
            continue
        # layout v1 (as ObservationEncoder._trick_play_bits and _unseen_above), written here rather
        # than in helpers: passing the rules tuple to a function costs a reference count per array
        kind_i = kind[i]
        if kind_i >= 0:
            nullo, trump_i, n_trick = kind_i == NULLO, trump[i], trick_len[i]
            if phase_i == PLAY:
                flat[row + rules.o_trick_pos + n_trick] = 1.0
            if n_trick > 0:  # a shorter trick padded with its last card, which never beats the best so far
                last = trick[i, n_trick - 1]
                best = kernel_trick_winner(trick[i, 0], trick[i, 1] if n_trick > 1 else last, last, trump_i, nullo)
                flat[row + rules.o_win_card + trick[i, best]] = 1.0
                p = leader[i] + best
                flat[row + rules.o_win_seat + _rel(p - 3 if p >= 3 else p, seat)] = 1.0
            n_played = n_plays[i]
            for j in range(0, n_played, 3):
                flat[row + rules.o_led_cards + plays[i, j, 1]] = 1.0
                if j + 3 <= n_played:
                    best = kernel_trick_winner(plays[i, j, 1], plays[i, j + 1, 1], plays[i, j + 2, 1], trump_i, nullo)
                    flat[row + rules.o_won_cards + plays[i, j + best, 1]] = 1.0
        order = 1 if kind_i == NULLO else 0
        base, game = row + rules.o_unseen, np.uint64(3 * i * nc)
        o = np.uint64(own)
        for c in range(np.uint64(nc)):  # a loop LLVM vectorizes (see _copy)
            unseen[c] = pack[c] & ((hands[o + c] | discards[o + c] | played[game + c] | played[game + np.uint64(52) + c]
                                    | played[game + np.uint64(104) + c]) ^ 1)
        for suit in range(0, 52, 13):  # branch-free: every card's entry is written
            above = 0
            for k in range(13):
                c = suit + unseen_rank[order, k]
                flat[base + c] = unseen_value[above] * hands[own + c]
                above += unseen[c]


