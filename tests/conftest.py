"""Shared test configuration and hooks.

Test modules never import each other: what several of them use (the explicit deals, the two-path
interface of engine and vector env, the global-RNG disturber, the interrupt helpers, the fuzz
suite's counters) lives in the ``helpers`` package beside this file, importable because pytest puts
this folder on ``sys.path`` when it loads this conftest. The hooks print the fuzz suite's counts
(``helpers/fuzzing.py``) in the terminal summary, gathered from pytest-xdist workers too.
"""

from __future__ import annotations

from collections import Counter

import pytest
from helpers.fuzzing import COUNTS, summary_lines

_GATHERED: Counter = Counter()


@pytest.fixture(scope="module")
def lineup():
    """``manni serve``'s agents on their defaults, made once per test module (the web tests' servers
    share it; a module that needs others makes its own)."""
    from manni_agents.play.web.lineup import Lineup

    return Lineup()


def pytest_sessionfinish(session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: hand the counts to the controller
        workeroutput["fuzz_counts"] = [[s, k, n] for (s, k), n in COUNTS.items()]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    for surface, kind, n in getattr(node, "workeroutput", {}).get("fuzz_counts", []):
        _GATHERED[(surface, kind)] += n


def pytest_terminal_summary(terminalreporter) -> None:
    counts = COUNTS + _GATHERED
    if counts:
        terminalreporter.section("fuzz suite")
        for line in summary_lines(counts):
            terminalreporter.write_line(line)
