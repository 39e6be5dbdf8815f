"""The one place the tests touch the global random generators: to disturb them.

Determinism tests (as in RLCard's) reseed and draw from Python's ``random`` and numpy's legacy
global generator between two runs that must come out identical; the project's code itself only
ever uses owned ``numpy.random.Generator`` objects.
"""

from __future__ import annotations

import random

import numpy as np


def disturb_global_rngs(seed: int, draws: int = 7) -> None:
    """Reseed Python's and numpy's global generators with ``seed`` and draw ``draws`` numbers."""
    random.seed(seed)
    np.random.seed(seed)
    for _ in range(draws):
        random.random()
    np.random.random(draws)
