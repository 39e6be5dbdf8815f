"""The variant table and validated rule sets: what differs between the four Manni variants.

Everything that distinguishes one variant from another is one row of :data:`VARIANT_TABLE`
(a :class:`VariantSpec`): the pack, hand and Manni sizes, where each card of a shuffled pack is
dealt, how the contract is chosen (cut card, rotation or announcement, with the contract table),
the exchange scheme and its limits, the scoring coefficients and the end rule, and the name and
one line people read. What follows from a row is a property of it: the contract kinds a deal can have, the
range of a deal's points, whether deals are zero-sum. The engine, the vector env's kernels, the
observation encoder, the belief sampler, records, renderers, the OpenSpiel games, the web app,
the bot checker and the agents read the table instead of comparing variant names, so a fifth
variant is one more row plus whatever rule is genuinely new (tests/test_variant_row.py adds some).
A row changes no observation of an existing layout (each names its variants:
``manni_env.observation.LAYOUT_VARIANTS``), so every trained agent keeps playing.

``make_rules("basic", target=5)`` is the one way every layer (engine, env, CLI) turns a variant
name and options into a :class:`Rules`; an unknown variant or a bad option raises ``ValueError``
naming the valid choices.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from enum import IntEnum

from manni_env import actions as A
from manni_env.cards import FULL_PACK, PACK_48, SUITS

CLUBS, DIAMONDS, HEARTS, SPADES = range(4)


class ContractKind(IntEnum):
    """What a deal is played for; the integer is the kind's index everywhere (observations, kernels)."""

    NULLO = 0  # no trump, ace low, few tricks are good
    TRUMP = 1
    GRAND = 2  # no trump, many tricks are good

    @property
    def label(self) -> str:
        """``"nullo"``, ``"trump"`` or ``"grand"`` (the record's ``contract.kind``)."""
        return self.name.lower()

    def __eq__(self, other: object) -> bool:
        """Equal to its index and to its label (``ContractKind.NULLO == "nullo"``)."""
        if isinstance(other, str):
            return self.name.lower() == other
        return int(self) == other

    __hash__ = IntEnum.__hash__


class Phase(IntEnum):
    """What kind of decision the player on turn makes."""

    EXCHANGE = 0  # Hornafjarðarmanni: choose discards one by one, then EXCHANGE_DONE
    SWAP = 1  # Basic Manni: keep the hand or swap it for the Manni
    PICKUP = 2  # announcement variants: take the Manni or pass
    DISCARD = 3  # announcement variants: the taker discards four cards
    ANNOUNCE = 4  # announcement variants: forehand names the contract
    PLAY = 5  # trick play
    GAME_OVER = 6


class ExchangeScheme(IntEnum):
    """How the Manni is used before play; the value is the deal's first phase."""

    EXCHANGE = Phase.EXCHANGE  # sequential discards, then as many cards from the top of the Manni
    SWAP = Phase.SWAP  # swap the whole hand for the whole Manni (the first swap ends it)
    PICKUP = Phase.PICKUP  # take all of the Manni and discard as many, or pass


class ContractSource(IntEnum):
    """Where a deal's contract comes from."""

    CUT = 0  # the cut card's rank (kind) and suit (trump)
    ROTATION = 1  # trump by deal number
    ANNOUNCE = 2  # forehand announces one of its unused contracts


class EndRule(IntEnum):
    """When a game ends (besides the deal cap, which truncates)."""

    PLUS_TARGET = 0  # after a deal in which a plus tally reaches the target
    UNIQUE_TOTAL_TARGET = 1  # after a deal in which a total reaches the target with no tie on top
    FIXED_DEALS = 2  # after the last deal (3 × the number of contracts)


@dataclass(frozen=True)
class Contract:
    """The contract of a deal: ``kind`` nullo | trump | grand, the trump suit, the declarer."""

    kind: ContractKind  # also accepts the record's name ("nullo", "trump", "grand") or the index
    trump: int | None = None
    declarer: int | None = None
    name: str | None = None  # announcement variants: the contract used up ("suit", "spades", ...)

    def __post_init__(self) -> None:
        kind = self.kind
        if not isinstance(kind, ContractKind):
            try:
                kind = ContractKind[kind.upper()] if isinstance(kind, str) else ContractKind(kind)
            except (KeyError, ValueError):
                raise ValueError(f"contract kind must be nullo, trump or grand, got {self.kind!r}") from None
            object.__setattr__(self, "kind", kind)

    @property
    def nullo(self) -> bool:
        return self.kind is ContractKind.NULLO

    def describe(self) -> str:
        if self.kind is ContractKind.TRUMP:
            return f"Trump {SUITS[self.trump]}"
        return self.kind.label.capitalize()


@dataclass(frozen=True)
class Announcement:
    """One row of an announcement variant's contract table."""

    action: int  # the ANNOUNCE_* action that names it
    name: str  # the contract used up ("suit" covers Trjámann's hearts and diamonds)
    kind: ContractKind
    trump: int | None
    slot: int  # its slot in the observation's "contracts used" segment (:data:`CONTRACT_SLOTS`)


@dataclass(frozen=True)
class Score:
    """One contract kind's deal score: ``sign * (tricks - offset)``, the declarer's offset apart."""

    sign: int
    offset: int
    declarer_offset: int


@dataclass(frozen=True)
class VariantSpec:
    """One variant's row of the table (see the module docstring)."""

    name: str
    pack: int  # card bitmask
    hand_size: int  # cards per hand = tricks per deal
    manni_size: int
    manni_positions: tuple[int, ...]  # positions in the shuffled pack of the Manni, top (drawn first) first
    hand_positions: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]  # of forehand, middlehand, dealer
    cut: bool  # the pack's bottom card is cut and shown (it goes to the dealer)
    contract_source: ContractSource
    cut_kinds: tuple[ContractKind, ...]  # CUT: kind by the cut card's rank (2 … A)
    trump_rotation: tuple[int, ...]  # ROTATION: trump suit by deal number
    announcements: tuple[Announcement, ...]  # ANNOUNCE: the contract table
    exchange: ExchangeScheme
    exchange_limits: tuple[int, int, int]  # EXCHANGE: discards allowed in decision order
    pickup_discards: int  # PICKUP: cards the taker discards
    scores: tuple[Score, Score, Score]  # by ContractKind
    floor: int | None  # lowest deal score (Basic's default max(0, ·)); None: no floor
    end_rule: EndRule
    scoring_name: str  # the record's ``scoring`` field
    options: tuple[str, ...]  # options make_rules accepts
    title: str  # the variant's name for people ("Hornafjarðarmanni")
    summary: str  # one line about the variant for a newcomer (the web app's landing page)

    @property
    def kinds(self) -> tuple[ContractKind, ...]:
        """The contract kinds a deal can be played for, in index order."""
        if self.contract_source == ContractSource.CUT:
            return tuple(sorted(set(self.cut_kinds)))
        if self.contract_source == ContractSource.ROTATION:
            return (ContractKind.TRUMP,)
        return tuple(sorted({a.kind for a in self.announcements}))

    def points_range(self, floor: int | None) -> tuple[int, int]:
        """The lowest and highest deal score of a seat under ``floor``: every contract kind the
        variant plays, as declarer (announcement variants) or not, with 0 or all tricks."""
        declarer = self.contract_source == ContractSource.ANNOUNCE  # only they have a declarer
        points = [s.sign * (t - o) for s in (self.scores[k] for k in self.kinds)
                  for o in ((s.offset, s.declarer_offset) if declarer else (s.offset,)) for t in (0, self.hand_size)]
        low, high = min(points), max(points)
        return (low, high) if floor is None else (max(floor, low), max(floor, high))

    def sums_to_zero(self, floor: int | None) -> bool:
        """Whether every deal's three scores add up to 0 under ``floor``: no floor, and for every
        contract kind the seats' offsets add up to the tricks of a deal."""
        declarer = self.contract_source == ContractSource.ANNOUNCE
        return floor is None and all(
            (2 * s.offset + s.declarer_offset if declarer else 3 * s.offset) == self.hand_size
            for s in (self.scores[k] for k in self.kinds))

    @property
    def trump_known_first(self) -> bool:
        """Whether every deal's contract, trump suit included, is known from its first decision (the
        trump rotates by deal number: Basic Manni), not cut or announced during the deal."""
        return self.contract_source == ContractSource.ROTATION

    @property
    def zero_sum(self) -> bool:
        """Whether the variant's deals are zero-sum with its default options (Basic's floor is not)."""
        return self.sums_to_zero(self.floor)

    @property
    def contracts(self) -> tuple[str, ...]:
        """Contract names used once per player per game (announcement variants), in table order."""
        return tuple(dict.fromkeys(a.name for a in self.announcements))

    def announcement(self, action: int) -> Announcement | None:
        return next((a for a in self.announcements if a.action == action), None)


def _hornafjardar_positions() -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """Rounds of 13 cards [4 Manni, 3 f, 3 m, 3 dealer] four times; the bottom card (the cut) to the dealer."""
    manni: list[int] = []
    hands: list[list[int]] = [[], [], []]
    for r in range(0, 52, 13):
        manni += range(r, r + 4)
        for j in range(3):
            hands[j] += range(r + 4 + 3 * j, r + 7 + 3 * j)
    return tuple(manni), tuple(map(tuple, hands))


def _packet_positions() -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """Packets of four: f, m, dealer, Manni, three times (48 cards)."""
    manni: list[int] = []
    hands: list[list[int]] = [[], [], []]
    for r in range(0, 48, 16):
        for j in range(3):
            hands[j] += range(r + 4 * j, r + 4 * j + 4)
        manni += range(r + 12, r + 16)
    return tuple(manni), tuple(map(tuple, hands))


def _one_at_a_time_positions() -> tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """One card at a time to f, m, dealer (16 each); the last four form the Manni."""
    return tuple(range(48, 52)), tuple(tuple(range(j, 48, 3)) for j in range(3))


_N, _T, _G = ContractKind.NULLO, ContractKind.TRUMP, ContractKind.GRAND
_PLUS_MINUS = (Score(-1, 4, 4), Score(1, 4, 4), Score(1, 4, 4))
_DECLARER = (Score(-1, 6, 4), Score(1, 4, 8), Score(1, 4, 8))


#: The slots of the observation's "contracts used" segment (per seat), in Laugarvatnsmanni's order:
#: every contract an announcement variant can name, Trjámann's "suit" (hearts or diamonds, named by
#: the declarer) in the hearts slot (:data:`SHARED_SLOTS`), since hearts is not a contract of its own there.
CONTRACT_SLOTS = ("spades", "hearts", "diamonds", "clubs", "grand", "nullo")
#: contract names that use another contract's slot
SHARED_SLOTS = {"suit": "hearts"}


def contract_slot(name: str) -> int:
    """The slot of contract ``name`` in :data:`CONTRACT_SLOTS`."""
    return CONTRACT_SLOTS.index(SHARED_SLOTS.get(name, name))


def _announcements(*rows: tuple[int, str, ContractKind, int | None]) -> tuple[Announcement, ...]:
    return tuple(Announcement(action, name, kind, trump, contract_slot(name)) for action, name, kind, trump in rows)


def _spec(name: str, **fields) -> VariantSpec:
    defaults = dict(cut=False, cut_kinds=(), trump_rotation=(), announcements=(), exchange_limits=(0, 0, 0),
                    pickup_discards=0, floor=None)
    return VariantSpec(name=name, **{**defaults, **fields})


#: The four variants (RULES.md), in the order of :data:`VARIANTS`. (The observation's variant one-hot
#: is not read from it: each layout names its variants, ``manni_env.observation.LAYOUT_VARIANTS``.)
VARIANT_TABLE: dict[str, VariantSpec] = {
    spec.name: spec
    for spec in (
        _spec("hornafjardar", pack=FULL_PACK, hand_size=12, manni_size=16,
              manni_positions=_hornafjardar_positions()[0], hand_positions=_hornafjardar_positions()[1], cut=True,
              contract_source=ContractSource.CUT, cut_kinds=(_N,) * 4 + (_T,) * 4 + (_G,) * 5,
              exchange=ExchangeScheme.EXCHANGE, exchange_limits=(7, 5, 12), scores=_PLUS_MINUS,
              end_rule=EndRule.PLUS_TARGET, scoring_name="plus_minus", options=("target", "max_deals", "first_dealer"),
              title="Hornafjarðarmanni",
              summary="The championship game: a cut card makes each deal Nullo (take few tricks), Trump or Grand "
                      "(take many), and each player may exchange cards with the Manni."),
        _spec("basic", pack=PACK_48, hand_size=12, manni_size=12,
              manni_positions=_packet_positions()[0], hand_positions=_packet_positions()[1],
              contract_source=ContractSource.ROTATION, trump_rotation=(HEARTS, SPADES, DIAMONDS, CLUBS),
              exchange=ExchangeScheme.SWAP, scores=_PLUS_MINUS, floor=0, end_rule=EndRule.UNIQUE_TOTAL_TARGET,
              scoring_name="positive", options=("target", "negative", "max_deals", "first_dealer"),
              title="Basic Manni",
              summary="The classic: the trump suit rotates every deal, and each player in turn may swap the whole "
                      "hand, unseen, for the Manni."),
        _spec("trjamann", pack=FULL_PACK, hand_size=16, manni_size=4,
              manni_positions=_one_at_a_time_positions()[0], hand_positions=_one_at_a_time_positions()[1],
              contract_source=ContractSource.ANNOUNCE, announcements=_announcements(
                  (A.ANNOUNCE_SPADES, "spades", _T, SPADES), (A.ANNOUNCE_HEARTS, "suit", _T, HEARTS),
                  (A.ANNOUNCE_DIAMONDS, "suit", _T, DIAMONDS), (A.ANNOUNCE_GRAND, "grand", _G, None),
                  (A.ANNOUNCE_NULLO, "nullo", _N, None)),
              exchange=ExchangeScheme.PICKUP, pickup_discards=4, scores=_DECLARER, end_rule=EndRule.FIXED_DEALS,
              scoring_name="declarer", options=("first_dealer",), title="Trjámann",
              summary="Sixteen cards each: every player announces spades, a red suit, Grand and Nullo once each, "
                      "twelve deals in all."),
        _spec("laugarvatn", pack=FULL_PACK, hand_size=16, manni_size=4,
              manni_positions=_one_at_a_time_positions()[0], hand_positions=_one_at_a_time_positions()[1],
              contract_source=ContractSource.ANNOUNCE, announcements=_announcements(
                  (A.ANNOUNCE_SPADES, "spades", _T, SPADES), (A.ANNOUNCE_HEARTS, "hearts", _T, HEARTS),
                  (A.ANNOUNCE_DIAMONDS, "diamonds", _T, DIAMONDS), (A.ANNOUNCE_CLUBS, "clubs", _T, CLUBS),
                  (A.ANNOUNCE_GRAND, "grand", _G, None), (A.ANNOUNCE_NULLO, "nullo", _N, None)),
              exchange=ExchangeScheme.PICKUP, pickup_discards=4, scores=_DECLARER, end_rule=EndRule.FIXED_DEALS,
              scoring_name="declarer", options=("first_dealer",), title="Laugarvatnsmanni",
              summary="Sixteen cards each: every player announces the four suits, Grand and Nullo once each, "
                      "eighteen deals in all."),
    )
}

VARIANTS = tuple(VARIANT_TABLE)
ANNOUNCEMENT_VARIANTS = tuple(name for name, s in VARIANT_TABLE.items() if s.contract_source == ContractSource.ANNOUNCE)
#: Contracts each player announces once per game in the announcement variants.
ANNOUNCED_CONTRACTS = {name: VARIANT_TABLE[name].contracts for name in ANNOUNCEMENT_VARIANTS}

DEFAULT_MAX_DEALS = 50


@dataclass(frozen=True)
class Rules:
    """A validated rule set: a variant and its options. Build it with :func:`make_rules`; fields
    are documented there. ``spec`` is the variant's row of :data:`VARIANT_TABLE`."""

    variant: str = "hornafjardar"
    target: int | None = 10
    negative: bool = False
    max_deals: int = DEFAULT_MAX_DEALS
    first_dealer: int | None = None
    spec: VariantSpec = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        object.__setattr__(self, "spec", VARIANT_TABLE[self.variant])

    @property
    def pack(self) -> int:
        return self.spec.pack

    @property
    def hand_size(self) -> int:
        return self.spec.hand_size

    @property
    def manni_size(self) -> int:
        return self.spec.manni_size

    @property
    def is_announcement(self) -> bool:
        """Trjámann or Laugarvatnsmanni: forehand announces the contract."""
        return self.spec.contract_source == ContractSource.ANNOUNCE

    @property
    def tricks_per_deal(self) -> int:
        return self.spec.hand_size

    @property
    def contracts(self) -> tuple[str, ...]:
        """Contracts announced once each per player (announcement variants), else ``()``."""
        return self.spec.contracts

    @property
    def floor(self) -> int | None:
        """Lowest deal score (Basic's ``max(0, t − 4)`` unless ``negative``), or ``None``."""
        return None if self.negative else self.spec.floor

    @property
    def deal_points_range(self) -> tuple[int, int]:
        """The lowest and highest deal score of a seat (:meth:`VariantSpec.points_range`, the
        floor as ``negative`` says)."""
        return self.spec.points_range(self.floor)

    @property
    def zero_sum(self) -> bool:
        """Whether every deal's scores add up to 0 (all variants but Basic without ``negative``)."""
        return self.spec.sums_to_zero(self.floor)

    @property
    def scoring(self) -> str:
        """The record's ``scoring`` field: plus_minus, positive, negative or declarer."""
        return "negative" if self.negative else self.spec.scoring_name

    def deal_points(self, tricks_won, kind: ContractKind, declarer: int | None) -> tuple[int, int, int]:
        """Each seat's score for a deal of contract ``kind`` in which seat ``s`` took ``tricks_won[s]``."""
        score = self.spec.scores[kind]
        floor = self.floor
        points = []
        for seat, t in enumerate(tricks_won):
            p = score.sign * (t - (score.declarer_offset if seat == declarer else score.offset))
            points.append(p if floor is None else max(floor, p))
        return tuple(points)

    def options(self) -> dict:
        """The options that :func:`make_rules` accepts for this variant, with their values."""
        return {name: getattr(self, name) for name in self.spec.options}


def make_rules(variant: str = "hornafjardar", **options) -> Rules:
    """Build validated rules for ``variant`` (one of :data:`VARIANTS`).

    Options (``None`` values mean "the default"):

    - ``target`` (hornafjardar, basic; default 10): the plus tally (Hornafjarðarmanni) or total
      (Basic) that ends the game after the deal in which a player reaches it.
    - ``negative`` (basic; default False): score ``t − 4`` per deal instead of ``max(0, t − 4)``.
    - ``max_deals`` (hornafjardar, basic; default 50): deal cap; a game stopped there is truncated.
    - ``first_dealer`` (all; default drawn from the game's seed): seat 0, 1 or 2.

    The announcement variants have a fixed length (Trjámann 12 deals, Laugarvatnsmanni 18).
    Integer options must be integers (numpy integers are converted; ``True`` or ``1.0`` are errors).
    """
    if variant not in VARIANT_TABLE:
        raise ValueError(f"unknown variant {variant!r}; valid variants: {', '.join(VARIANTS)}")
    spec = VARIANT_TABLE[variant]
    for name in options:
        if name not in spec.options:
            raise ValueError(
                f"option {name!r} is not valid for variant {variant!r}; valid options: {', '.join(spec.options)}"
            )
    # numpy integers (np.int64(3)) become Python ints so records stay JSON-safe; bools stay
    # bools and floats stay floats, and _validate rejects them for the integer options
    given = {k: int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else v
             for k, v in options.items() if v is not None}
    if spec.end_rule == EndRule.FIXED_DEALS:
        given["target"] = None
        given["max_deals"] = 3 * len(spec.contracts)
    return Rules(variant=variant, **given)


def _validate(rules: Rules) -> None:
    if rules.variant not in VARIANT_TABLE:
        raise ValueError(f"unknown variant {rules.variant!r}; valid variants: {', '.join(VARIANTS)}")
    spec = VARIANT_TABLE[rules.variant]
    if spec.end_rule == EndRule.FIXED_DEALS:
        if rules.target is not None:
            raise ValueError(f"variant {rules.variant!r} has a fixed number of deals and no target")
    elif not _is_int(rules.target) or rules.target < 1:
        raise ValueError(f"target must be a positive integer, got {rules.target!r}")
    if not isinstance(rules.negative, bool):
        raise ValueError(f"negative must be True or False, got {rules.negative!r}")
    if rules.negative and "negative" not in spec.options:
        raise ValueError("negative scoring is an option of the 'basic' variant only")
    if not _is_int(rules.max_deals) or rules.max_deals < 1:
        raise ValueError(f"max_deals must be a positive integer, got {rules.max_deals!r}")
    if rules.first_dealer is not None and (not _is_int(rules.first_dealer) or rules.first_dealer not in (0, 1, 2)):
        raise ValueError(f"first_dealer must be 0, 1, 2 or None (drawn from the seed), got {rules.first_dealer!r}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
