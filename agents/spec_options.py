"""The one parser of ``name=value`` option lists (an agent spec's ``pimc:worlds=16,rollout=random``,
the trainers' ``--opponent-mix snapshot=0.2,rule_based=0.75``) and its value converters, shared by
the registry, the agents that take options and the trainers (kept apart from the registry so those
agents do not import it)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction


def parse_options(arg: str | None, types: dict[str, Callable[[str], object]], what: str = "option",
                  form: str = "name=value") -> dict[str, object]:
    """``"worlds=16,rollout=random"`` → ``{"worlds": 16, "rollout": "random"}`` using ``types``
    (name → converter raising ``ValueError``); unknown or repeated names are errors, whose words
    call an item ``what`` written ``form`` (``opponent``, ``kind=share``)."""
    options: dict[str, object] = {}
    if arg is None or not arg.strip():
        return options
    for item in arg.split(","):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key or not value:
            raise ValueError(f"{what}s are '{form}' separated by commas, got {item!r}")
        if key not in types:
            raise ValueError(f"unknown {what} {key!r}; valid {what}s: {', '.join(types)}")
        if key in options:
            raise ValueError(f"{what} {key!r} given twice")
        try:
            options[key] = types[key](value)
        except ValueError as err:
            raise ValueError(f"{what} {key}={value!r}: {err}") from None
    return options


def check_worlds(worlds: int) -> None:
    """``ValueError`` unless ``worlds`` (sampled worlds per decision) is an integer ≥ 1."""
    if not isinstance(worlds, int) or isinstance(worlds, bool) or worlds < 1:
        raise ValueError(f"worlds must be a positive integer, got {worlds!r}")


def check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of ``choices``, else ``ValueError`` naming them."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def one_of(name: str, choices: tuple[str, ...]) -> Callable[[str], str]:
    """An option converter: the text itself if it is one of ``choices`` (:func:`check_choice`)."""
    return lambda text: check_choice(name, text, choices)


def positive_int(text: str) -> int:
    """An option converter: a whole number ≥ 1."""
    value = int(text)
    if value < 1:
        raise ValueError("must be a positive integer")
    return value


def positive_float(text: str) -> float:
    """An option converter: a finite number > 0 (``inf`` and ``nan`` are refused)."""
    value = float(text)
    if not value > 0:
        raise ValueError("must be a positive number")
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


#: The longest time limit an option may set (seconds): a day.
MAX_SECONDS = 86_400.0


def seconds(text: str) -> float:
    """An option converter: a time limit in seconds, above 0 and at most :data:`MAX_SECONDS`
    (``1e300`` would overflow the clocks and ``select`` it is given to)."""
    value = positive_float(text)
    if value > MAX_SECONDS:
        raise ValueError(f"must be at most {MAX_SECONDS:g} seconds (a day)")
    return value


def probability(text: str) -> float:
    """An option converter: a number from 0 to 1, as a decimal or a fraction (``0.2``, ``1/3``)."""
    try:
        value = float(Fraction(text))
    except (ValueError, ZeroDivisionError):
        raise ValueError("must be a number such as 0.2 or 1/3") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be between 0 and 1")
    return value
