"""Ctrl-C (SIGINT), and the signals that stop a process as it does, around work that must not be
cut in half, and for worker processes.

The context managers act only in the main thread (the only one where Python can set signal
handlers) and do nothing elsewhere.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from multiprocessing import resource_tracker

#: What stops a run the way Ctrl-C does: ``kill``, ``timeout`` and ``docker stop`` send SIGTERM, a
#: closed terminal SIGHUP (not on Windows).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
#: What a terminal sends every process of its foreground job: Ctrl-C, and SIGHUP when it closes.
TERMINAL_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGHUP") if hasattr(signal, name))


class Stopped(KeyboardInterrupt):
    """A stop signal (:data:`STOP_SIGNALS`) inside :func:`stop_signals`: handled as Ctrl-C is."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.said = False  # whether the work it stopped has said so (what it kept)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Inside the block a stop signal (:data:`STOP_SIGNALS`) raises :class:`Stopped` in the main
    thread, as Ctrl-C raises ``KeyboardInterrupt``, so that what keeps work on Ctrl-C keeps it then
    too."""
    if not _main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise Stopped(signum)

    previous = {signum: signal.signal(signum, stop) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


@contextlib.contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Hold a Ctrl-C or a stop signal that arrives inside the block and deliver it at the end, as
    if it arrived then (Ctrl-C raises ``KeyboardInterrupt``; e.g. so that a record is written and
    counted, or neither)."""
    if not _main_thread():
        yield
        return
    received: list[int] = []
    signals = (signal.SIGINT, *STOP_SIGNALS)
    previous = {signum: signal.signal(signum, lambda signum, frame: received.append(signum)) for signum in signals}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            fallback = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, fallback if handler is None else handler)
    for signum in dict.fromkeys(received):
        signal.raise_signal(signum)


@contextlib.contextmanager
def interrupt_ignored() -> Iterator[None]:
    """Processes started inside the block never take Ctrl-C or a closed terminal's SIGHUP
    (:data:`TERMINAL_SIGNALS`): they start with those signals blocked and keep them blocked, also
    while they are still starting up (their parent stops them). One that reaches this process in
    the block is delivered at its end (:func:`deferred_interrupt`), not lost. (Nothing on Windows,
    which has no signal masks.)"""
    if not _main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    # multiprocessing starts its resource tracker at the first spawned process, and unblocks SIGINT
    # after it: started first, it leaves the mask alone
    resource_tracker.ensure_running()
    with deferred_interrupt():
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, TERMINAL_SIGNALS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
