"""Shared test configuration and hooks.

Test modules never import each other: what several of them use (the explicit deals, the two-path
interface of engine and vector env, the global-RNG disturber, the interrupt helpers, the fuzz
suite's counters) lives in the ``helpers`` package beside this file, importable because pytest puts
this folder on ``sys.path`` when it loads this conftest. The hooks print the fuzz suite's counts
(``helpers/fuzzing.py``) in the terminal summary, gathered from pytest-xdist workers too.
"""

from __future__ import annotations

import signal
import threading
import warnings
from collections import Counter

import pytest
from helpers.fuzzing import COUNTS, summary_lines

from manni_env.interrupts import TERMINAL_SIGNALS

_GATHERED: Counter = Counter()


@pytest.fixture(autouse=True)
def ctrl_c_as_in_a_fresh_process(request):
    """Every test starts with Ctrl-C as a fresh process has it (the default handler, the terminal's
    signals unblocked in the main thread), and a test that leaves it otherwise is named in a warning:
    such a leftover made the interrupt tests run after it in the same worker fail (not yet found)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, TERMINAL_SIGNALS)
    yield
    handler = signal.getsignal(signal.SIGINT)
    blocked = set(signal.pthread_sigmask(signal.SIG_BLOCK, [])) & set(TERMINAL_SIGNALS)
    if handler is not signal.default_int_handler or blocked:
        warnings.warn(f"{request.node.nodeid} left SIGINT's handler {handler!r}, blocked {sorted(blocked)}",
                      stacklevel=1)


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
