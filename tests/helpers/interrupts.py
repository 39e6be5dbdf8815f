"""Run a ``manni`` command in a subprocess and interrupt it as a person at the terminal would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Interrupted:
    code: int
    out: str
    err: str
    seconds: float  # from SIGINT to exit
    children: list[int]  # the command's child processes just before SIGINT


def manni(*args: str) -> list[str]:
    """The command line of ``manni ARGS`` run from this checkout."""
    return [sys.executable, "-m", "manni_env.cli", *args]


def interrupt_when_written(argv: list[str], path: Path, group: bool = True, signum: int = signal.SIGINT) -> Interrupted:
    """Run ``argv``; once ``path`` holds data send ``signum`` (SIGINT) to its process group (as Ctrl-C
    does) or, with ``group=False``, to the process alone (``kill -INT``, or ``kill`` with SIGTERM)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_as_from_a_terminal)
    try:
        deadline = time.monotonic() + 60
        while not (path.exists() and path.stat().st_size) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        children = children_of(proc.pid)
        sent = time.monotonic()
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        out, err = proc.communicate(timeout=30)
        return Interrupted(proc.returncode, out, err, time.monotonic() - sent, children)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _as_from_a_terminal() -> None:
    """In the child, before it runs the command: SIGINT neither ignored nor blocked, as in a shell's
    foreground process, whatever the test process's own signal state is at that moment."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def children_of(pid: int) -> list[int]:
    """Live child processes of ``pid`` (Linux ``/proc``)."""
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and _stat(int(p))[1] == pid]


def alive(pid: int) -> bool:
    """``pid`` exists and is not a zombie."""
    state, _ = _stat(pid)
    return state not in (None, "Z", "X")


def _stat(pid: int) -> tuple[str | None, int | None]:
    """(state, parent pid) of ``pid`` from ``/proc/PID/stat``; ``(None, None)`` if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return fields[0], int(fields[1])
    except (OSError, IndexError, ValueError):
        return None, None
