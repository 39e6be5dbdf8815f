"""The fuzz suite's tally: inputs tried and clear errors per surface, printed at the end of the run.

A fuzz test calls :func:`tally` once per input with whether it was refused with a clear error (the
surface's documented exception, one line naming the problem). Any other outcome (another
exception, a 5xx, a changed state after a refusal) fails the test itself. ``tests/conftest.py``
gathers the tallies (also from pytest-xdist workers) and prints them in the terminal summary.
"""

from __future__ import annotations

from collections import Counter

#: (surface, "tried" | "clear errors") -> count, in this process
COUNTS: Counter = Counter()


def tally(surface: str, refused: bool) -> None:
    """Count one input of ``surface``, and one clear error if it was ``refused``."""
    COUNTS[(surface, "tried")] += 1
    if refused:
        COUNTS[(surface, "clear errors")] += 1


def clear(err: BaseException) -> bool:
    """A clear error: a non-empty message on one line, naming no Python internals."""
    text = str(err)
    return bool(text.strip()) and "\n" not in text.strip() and "Traceback" not in text


def summary_lines(counts: Counter) -> list[str]:
    """One line per surface, ``surface: N inputs tried, M clear errors``, and the total."""
    surfaces = sorted({surface for surface, _ in counts})
    lines = [f"{s}: {counts[(s, 'tried')]:,} inputs tried, {counts[(s, 'clear errors')]:,} clear errors" for s in surfaces]
    tried = sum(counts[(s, "tried")] for s in surfaces)
    refused = sum(counts[(s, "clear errors")] for s in surfaces)
    lines.append(f"total: {tried:,} inputs tried, {refused:,} clear errors, 0 unclear (any would fail its test)")
    return lines
