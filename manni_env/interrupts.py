"""Ctrl-C (SIGINT) around work that must not be cut in half, and for worker processes.

Both context managers act only in the main thread (the only one where Python can set signal
handlers) and do nothing elsewhere.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def deferred_interrupt() -> Iterator[None]:
    """Hold a Ctrl-C that arrives inside the block; raise it as ``KeyboardInterrupt`` at the end
    (e.g. so that a record is written and counted, or neither)."""
    if not _main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
    if received:
        raise KeyboardInterrupt


@contextlib.contextmanager
def interrupt_ignored() -> Iterator[None]:
    """Ignore Ctrl-C inside the block: processes started there inherit that and ignore it for good
    (their parent stops them), also while they are still starting up."""
    if not _main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
