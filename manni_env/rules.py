"""Variant presets: which Manni is played, with validated options.

``make_rules("basic", target=5)`` is the one way every layer (engine, env, CLI) turns a variant
name and options into a :class:`Rules`; an unknown variant or a bad option raises ``ValueError``
naming the valid choices.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

from .cards import FULL_PACK, PACK_48

VARIANTS = ("hornafjardar", "basic", "trjamann", "laugarvatn")
ANNOUNCEMENT_VARIANTS = ("trjamann", "laugarvatn")

#: Contracts each player announces once per game in the announcement variants.
ANNOUNCED_CONTRACTS = {
    "trjamann": ("spades", "suit", "grand", "nullo"),
    "laugarvatn": ("spades", "hearts", "diamonds", "clubs", "grand", "nullo"),
}

DEFAULT_MAX_DEALS = 50

_OPTIONS = {
    "hornafjardar": ("target", "max_deals", "first_dealer"),
    "basic": ("target", "negative", "max_deals", "first_dealer"),
    "trjamann": ("first_dealer",),
    "laugarvatn": ("first_dealer",),
}


@dataclass(frozen=True)
class Rules:
    """A validated rule set. Build it with :func:`make_rules`; fields are documented there."""

    variant: str = "hornafjardar"
    target: int | None = 10
    negative: bool = False
    max_deals: int = DEFAULT_MAX_DEALS
    first_dealer: int | None = None
    # Derived, fixed by the variant:
    pack: int = field(init=False, repr=False, compare=False)
    hand_size: int = field(init=False, repr=False, compare=False)
    manni_size: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _validate(self)
        announce = self.variant in ANNOUNCEMENT_VARIANTS
        object.__setattr__(self, "pack", PACK_48 if self.variant == "basic" else FULL_PACK)
        object.__setattr__(self, "hand_size", 16 if announce else 12)
        object.__setattr__(self, "manni_size", {"hornafjardar": 16, "basic": 12}.get(self.variant, 4))

    @property
    def is_announcement(self) -> bool:
        """Trjámann or Laugarvatnsmanni."""
        return self.variant in ANNOUNCEMENT_VARIANTS

    @property
    def tricks_per_deal(self) -> int:
        return self.hand_size

    @property
    def contracts(self) -> tuple[str, ...]:
        """Contracts announced once each per player (announcement variants), else ``()``."""
        return ANNOUNCED_CONTRACTS.get(self.variant, ())

    @property
    def scoring(self) -> str:
        """The record's ``scoring`` field: plus_minus, positive, negative or declarer."""
        if self.variant == "hornafjardar":
            return "plus_minus"
        if self.variant == "basic":
            return "negative" if self.negative else "positive"
        return "declarer"

    def options(self) -> dict:
        """The options that :func:`make_rules` accepts for this variant, with their values."""
        return {name: getattr(self, name) for name in _OPTIONS[self.variant]}


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
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; valid variants: {', '.join(VARIANTS)}")
    allowed = _OPTIONS[variant]
    for name in options:
        if name not in allowed:
            raise ValueError(
                f"option {name!r} is not valid for variant {variant!r}; valid options: {', '.join(allowed)}"
            )
    # numpy integers (np.int64(3)) become Python ints so records stay JSON-safe; bools stay
    # bools and floats stay floats, and _validate rejects them for the integer options
    given = {k: int(v) if isinstance(v, numbers.Integral) and not isinstance(v, bool) else v
             for k, v in options.items() if v is not None}
    if variant in ANNOUNCEMENT_VARIANTS:
        given["target"] = None
        given["max_deals"] = 3 * len(ANNOUNCED_CONTRACTS[variant])
    return Rules(variant=variant, **given)


def _validate(rules: Rules) -> None:
    if rules.variant not in VARIANTS:
        raise ValueError(f"unknown variant {rules.variant!r}; valid variants: {', '.join(VARIANTS)}")
    if rules.is_announcement:
        if rules.target is not None:
            raise ValueError(f"variant {rules.variant!r} has a fixed number of deals and no target")
    elif not _is_int(rules.target) or rules.target < 1:
        raise ValueError(f"target must be a positive integer, got {rules.target!r}")
    if not isinstance(rules.negative, bool):
        raise ValueError(f"negative must be True or False, got {rules.negative!r}")
    if rules.negative and rules.variant != "basic":
        raise ValueError("negative scoring is an option of the 'basic' variant only")
    if not _is_int(rules.max_deals) or rules.max_deals < 1:
        raise ValueError(f"max_deals must be a positive integer, got {rules.max_deals!r}")
    if rules.first_dealer is not None and (not _is_int(rules.first_dealer) or rules.first_dealer not in (0, 1, 2)):
        raise ValueError(f"first_dealer must be 0, 1, 2 or None (drawn from the seed), got {rules.first_dealer!r}")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
