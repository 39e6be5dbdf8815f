"""The ``rule_based`` agent: a heuristic Manni player for every variant and contract.

It works on integer bitmasks only (compiled, no numpy per move), so it is also the fast rollout
policy of :mod:`manni_agents.pimc`. Everything it uses comes from the seat's :class:`~manni_env.view.SeatView`.

**Hand strength.** :func:`estimate_tricks` is a simple trick count for a hand. Trump/Grand: a side
ace 1, a king 0.75 (0.3 when single), a queen 0.45 with two more cards in the suit (0.1 otherwise),
a jack 0.2 in a suit of four or more, plus 0.6 (Grand) or 0.3 (Trump) per card beyond the usual
length (4 cards in a 12-card hand, 5 in a 16-card hand); each trump 0.5 plus up to 0.5 by rank; a
void side suit is worth 0.4 when holding two or more trumps. Nullo (tricks *taken*, ace low): a
card ranked 8 or above by Nullo order scores 0.15 per step above 7 (king 0.9), a long suit
0.2 per card beyond the usual length, and each void suit −0.15 (it lets dangerous cards go).
:func:`mean_estimate` is the average estimate of a random hand of the variant's pack for that
contract kind, precomputed by Monte Carlo over 2,000 hands with a fixed seed (it does not
depend on which suit is trump, by symmetry). A card's *value* is its marginal contribution: the
estimate with the card minus the estimate without it.

**Exchange (Hornafjarðarmanni).** Discard greedily, one card at a time, the card whose value is
lowest (Trump/Grand: the least useful; Nullo: the most dangerous), as long as it is worse than
an average replacement (the mean estimate divided by the hand size) and the allowance is not
used up. So a weak hand exchanges many cards, a strong one few: low cards and short weak suits
go, trumps, aces and long strong suits stay (Trump/Grand); high cards go, low ones stay, short
suits are emptied for voids (Nullo). The plan is recomputed from the hand plus the discards chosen
so far, so the sequential choice is deterministic, and ends with ``EXCHANGE_DONE``.

**Swap (Basic).** Swap when the hand's estimate is below the mean estimate of a random 12-card hand
of the 48-card pack for this trump.

**Announcement variants.** Take the Manni always: taking is weakly dominant, since the taker may
discard the four cards it drew. Discard four by the exchange logic: the forehand picks its
contract first and discards for it; another taker discards the cards of lowest value averaged
over the contracts the forehand may still announce (a Nullo value counts negatively). Announce
the unused contract with the best gain over its average: ``estimate − mean`` for Trump/Grand,
``mean − estimate`` for Nullo. The declarer's offsets (``t − 8``, ``4 − t``) are constant per
contract and every contract must be played once, so spending the hand where it beats that
contract's average by most is what maximises the sum of the declarer's scores.

**Play.** Track the cards that can still be out against us (not played, not in our hand, not our
own discards) and the voids opponents have shown.

- Trump/Grand, leading: draw trumps with the master trump when holding at least three (or as
  many as are out), or lead a low trump from five or more; else cash a sure winner (the highest
  remaining card of a suit, where no opponent is known void with trumps out and at least two
  cards of the suit are out); else lead the lowest card of the longest side suit.
- Trump/Grand, following: win as cheaply as possible — last to play, the lowest card that wins;
  second, a sure winner of the suit if we have one (or the lowest winning card when the third
  player is void and cannot ruff), otherwise play low. Void: ruff with the lowest trump that wins
  (high enough to beat the trumps out when the third player may overruff); otherwise discard the
  lowest card of the shortest side suit.
- Nullo (ace low): following, duck under the current winner with the highest card that still
  loses; when every card wins, win with the highest if we win anyway (last, or the third player is
  void), else play the lowest. Void: shed the most dangerous card (the one with the most unseen
  lower cards of its suit, then the highest). Leading: the card with the fewest unseen lower
  cards of its suit (in a suit others still hold), lowest first.

**One definition.** The heuristic is written once, in :mod:`manni_agents.rule_based_kernels`
(scalar functions on int64 card bitmasks, compiled by numba): :class:`RuleBasedAgent` turns a
seat's view into their arguments and calls them, one compiled call per decision, and the batched
policy of the vector env (:mod:`manni_agents.rule_based_vector`) calls the same functions from the
vector env's state. The functions below (:func:`estimate_tricks`, :func:`exchange_plan`,
:func:`contract_gain`, :func:`choose_card`) are that definition with the engine's argument types.
"""

from __future__ import annotations

import functools

import numpy as np

from manni_agents import rule_based_kernels as K
from manni_agents.base import legal_actions_of
from manni_agents.rule_based_kernels import mean_estimate
from manni_env import actions as A
from manni_env.rules import ContractKind, Phase, Rules
from manni_env.view import SeatView

__all__ = ["RuleBasedAgent", "choose_card", "contract_gain", "estimate_tricks", "exchange_plan", "mean_estimate"]


def _kind(kind: ContractKind | str) -> int:
    """A contract kind's index (from the kind or its record name, ``"trump"``)."""
    return int(ContractKind[kind.upper()] if isinstance(kind, str) else kind)


def _trump(trump: int | None) -> int:
    return -1 if trump is None else trump


def estimate_tricks(hand: int, kind: ContractKind | str, trump: int | None, hand_size: int) -> float:
    """Expected tricks taken by ``hand`` (see the module docstring); ``hand_size`` 12 or 16."""
    return float(K.estimate_tricks(hand, _kind(kind), _trump(trump), K.long_length(hand_size)))


@functools.lru_cache(maxsize=4096)
def exchange_plan(full: int, kind: ContractKind | str, trump: int | None, limit: int, pack: int,
                  hand_size: int) -> tuple[int, ...]:
    """Hornafjarðarmanni discards for the hand ``full``, in order (see the module docstring)."""
    plan = np.zeros(K.MEMO_PLAN, np.int64)
    threshold = mean_estimate(kind, pack, hand_size) / hand_size
    n = K.exchange_plan(full, _kind(kind), _trump(trump), limit, threshold, K.long_length(hand_size), plan)
    return tuple(plan[:n].tolist())


@functools.lru_cache(maxsize=4096)
def _discard_plan(full: int, forehand: bool, usable: tuple[int, ...], rules: Rules) -> tuple[int, ...]:
    """Announcement variants: the discards of a taker (``forehand``: the one who will announce)
    while the announcement rows ``usable`` are open to the forehand (see the module docstring)."""
    plan, scratch = np.zeros(K.MEMO_PLAN, np.int64), np.zeros(K.MEMO_PLAN, np.int64)
    n = K.discard_plan_for(full, int(forehand), np.array(usable, np.int64), K.rule_table(rules),
                           K.long_length(rules.hand_size), np.zeros(52, np.float64), scratch, plan)
    return tuple(plan[:n].tolist())


def contract_gain(hand: int, kind: ContractKind | str, trump: int | None, pack: int, hand_size: int) -> float:
    """How much better than average ``hand`` is as a declarer for this contract, in tricks."""
    means = np.array([mean_estimate(k, pack, hand_size) if k == _kind(kind) else np.nan for k in ContractKind])
    return float(K.contract_gain(hand, _kind(kind), _trump(trump), means, K.long_length(hand_size)))


def choose_card(
    hand: int, seat: int, trick: list[int] | tuple[int, ...], led_suit: int, trump: int | None, nullo: bool,
    gone: int, voids: list[int] | tuple[int, ...], pack: int,
) -> int:
    """The card to play. ``gone``: cards this seat knows are out of opponents' hands (every card
    played this deal and its own discards); ``voids``: suits (bit s) each seat has shown void in."""
    tl = len(trick)
    return int(K.choose_card(hand, seat, trick[0] if tl else 0, trick[1] if tl == 2 else 0, tl, led_suit,
                             _trump(trump), nullo, gone, voids[0] | voids[1] << 4 | voids[2] << 8, pack))


class RuleBasedAgent:
    """The heuristic player described in the module docstring (deterministic: ignores ``rng``)."""

    def __init__(self) -> None:
        self.name = "rule_based"

    def reset(self) -> None:
        """Nothing to forget between games (plans are pure functions of the view)."""

    def act(self, view: SeatView, rng: np.random.Generator | None = None) -> int:
        legal = legal_actions_of(view)
        if len(legal) == 1:
            return legal[0]
        phase = view.phase
        if phase == Phase.PLAY:
            return self._play(view)
        if phase == Phase.EXCHANGE:
            return self._exchange(view)
        if phase == Phase.SWAP:
            rules = view.rules
            return int(K.swap_action(view.hand, view.contract.trump, K.rule_table(rules).means,
                                     K.long_length(rules.hand_size)))
        if phase == Phase.PICKUP:
            return A.TAKE_MANNI  # weakly dominant: the four cards drawn may be discarded again
        if phase == Phase.DISCARD:
            return self._discard(view)
        return self._announce(view)

    @staticmethod
    def _play(view: SeatView) -> int:
        played = view.played
        gone = played[0] | played[1] | played[2] | view.discards
        c = view.contract
        return choose_card(view.hand, view.seat, view.trick, view.led_suit, c.trump, c.nullo, gone, view.voids,
                           view.rules.pack)

    @staticmethod
    def _exchange(view: SeatView) -> int:
        c = view.contract
        limit = view.exchange_limit + len(view.pending)
        plan = exchange_plan(view.hand | _mask(view.pending), c.kind, c.trump, limit, view.rules.pack,
                             view.rules.hand_size)
        return _first_in_hand(view.hand, plan, A.EXCHANGE_DONE)

    @staticmethod
    def _discard(view: SeatView) -> int:
        rules = view.rules
        rows = rules.spec.announcements
        used = view.used_contracts[view.forehand]
        usable = tuple(int(r) for r in K.rule_table(rules).option_rows if rows[r].name not in used)
        plan = _discard_plan(view.hand | _mask(view.pending), view.seat == view.forehand, usable, rules)
        card = _first_in_hand(view.hand, plan, None)
        if card is None:
            raise AssertionError("discard plan exhausted")  # the engine ends the phase after four discards
        return card

    @staticmethod
    def _announce(view: SeatView) -> int:
        rules = view.rules
        table = K.rule_table(rules)
        rows = [a.action for a in rules.spec.announcements]
        usable = sum(1 << rows.index(action) for action in view.legal_actions)
        return int(table.ann_action[K.best_announcement(view.hand, usable, table, K.long_length(rules.hand_size))])


def _first_in_hand(hand: int, plan: tuple[int, ...], otherwise: int | None) -> int | None:
    """The first card of ``plan`` still in ``hand``, else ``otherwise``."""
    return next((card for card in plan if hand >> card & 1), otherwise)


def _mask(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m
