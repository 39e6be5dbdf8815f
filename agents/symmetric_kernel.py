"""One compiled pass for a move of ``ppo:symmetric``: the network over the six suit relabellings of
one position, its log-probabilities averaged (:mod:`manni_env.symmetry`).

Written with numpy, a move is a few dozen small array operations, and between another agent's turns
(caches cold) their call overhead, not the arithmetic, is most of its time. This kernel does the
whole move in one numba call: it picks the relabelling tables of the position's contract, sums the
first layer's weight rows of the nonzero inputs at their relabelled places, runs the hidden layers
and averages the log-softmax over the legal actions. :func:`compiled_symmetric_scores` is ``None``
without numba; the agent then scores the position through the batched numpy path
(``policy_logits``), the same numbers. numba is imported on the first call, by the first symmetric
agent, since it takes a while to import and plain ``ppo`` never needs it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from manni_env.symmetry import IDENTITY, NO_TRUMP, SUIT_COUNT


def _symmetric_scores(obs, contract_start, contract_stop, trump_start, targets, actions, legal,
                      weights_by_input, first_bias, weights, biases, relu):
    """The mean over the relabelled copies of ``obs`` of the log-probabilities of the ``legal``
    actions (see the module docstring). ``targets``/``actions``: the relabelling tables of every
    table row (``SuitRelabelling.targets``/``.actions``); ``weights_by_input``: the first layer's
    weights, one row per input; ``weights``/``biases``: the later layers; ``relu``: else tanh."""
    row = IDENTITY
    for i in range(contract_start, contract_stop):
        if obs[i] > 0.5:
            row = NO_TRUMP
    if row == NO_TRUMP:
        for suit in range(SUIT_COUNT):
            if obs[trump_start + suit] > 0.5:
                row = suit
                break
    copies = targets.shape[1]
    hidden = np.empty((copies, first_bias.shape[0]), np.float32)
    for k in range(copies):
        hidden[k] = first_bias
    for i in range(obs.shape[0]):
        if obs[i] != 0.0:
            for k in range(copies):
                weight_row = weights_by_input[targets[row, k, i]]
                for j in range(weight_row.shape[0]):
                    hidden[k, j] += obs[i] * weight_row[j]
    for layer in range(len(weights)):
        w, b = weights[layer], biases[layer]
        inputs = np.maximum(hidden, np.float32(0.0)) if relu else np.tanh(hidden)
        hidden = np.empty((copies, w.shape[0]), np.float32)
        for k in range(copies):
            for out in range(w.shape[0]):
                total = np.float32(0.0)
                for j in range(w.shape[1]):
                    total += w[out, j] * inputs[k, j]
                hidden[k, out] = total + b[out]
    scores = np.zeros(legal.shape[0])
    for k in range(copies):
        top = hidden[k, actions[row, k, legal[0]]]
        for a in range(1, legal.shape[0]):
            top = max(top, hidden[k, actions[row, k, legal[a]]])
        partition = 0.0
        for a in range(legal.shape[0]):
            partition += math.exp(hidden[k, actions[row, k, legal[a]]] - top)
        log_partition = top + math.log(partition)
        for a in range(legal.shape[0]):
            scores[a] += hidden[k, actions[row, k, legal[a]]] - log_partition
    return scores / copies


@functools.cache
def compiled_symmetric_scores() -> Callable[..., np.ndarray] | None:
    """The compiled kernel (compiled on its first call, cached on disk), or ``None`` without numba."""
    try:
        import numba
    except ImportError:
        return None
    return numba.njit(cache=True, nogil=True, boundscheck=False, fastmath={"reassoc", "contract"})(_symmetric_scores)
