"""Parsing of an agent spec's options (``pimc:worlds=16,rollout=random``), shared by the registry
and the agents that take options (kept apart from the registry so those agents do not import it)."""

from __future__ import annotations

import math
from collections.abc import Callable


def parse_options(arg: str | None, types: dict[str, Callable[[str], object]]) -> dict[str, object]:
    """``"worlds=16,rollout=random"`` → ``{"worlds": 16, "rollout": "random"}`` using ``types``
    (name → converter raising ``ValueError``); unknown or repeated names are errors."""
    options: dict[str, object] = {}
    if arg is None or not arg.strip():
        return options
    for item in arg.split(","):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key or not value:
            raise ValueError(f"options are 'name=value' separated by commas, got {item!r}")
        if key not in types:
            raise ValueError(f"unknown option {key!r}; valid options: {', '.join(types)}")
        if key in options:
            raise ValueError(f"option {key!r} given twice")
        try:
            options[key] = types[key](value)
        except ValueError as err:
            raise ValueError(f"option {key}={value!r}: {err}") from None
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
