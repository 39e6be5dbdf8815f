"""A bot program as a child process speaking newline-delimited JSON, with a deadline on every answer.

The child runs in its own process group (Ctrl-C at the terminal reaches only this process, which
then stops it) and, on Linux, is killed by the kernel if this process dies first. Its stderr goes
to a log file; a transcript file, if given, gets every line sent (``> ``) and received (``< ``).
:meth:`BotProcess.close` says ``bye``, closes its stdin, waits briefly, then kills
its whole process group; it also runs when the owner is garbage-collected and at interpreter exit.
"""

from __future__ import annotations

import ctypes
import os
import re
import select
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

from manni_agents.bots import protocol as P

#: how long a closing bot may take to exit on its own before its process group is killed
EXIT_GRACE_S = 0.5
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


class BotFault(Exception):
    """The bot did not answer in time, exited, or wrote something that is not an answer."""


class BotTimeout(BotFault):
    """No answer (or no room in the bot's input) before the deadline."""


def default_log_dir() -> Path:
    return Path(tempfile.gettempdir()) / "manni-bot-logs"


class BotProcess:
    """One running bot program. ``ask`` sends a message and returns the answer line."""

    def __init__(self, command: str, log_dir: Path | None = None, transcript: Path | None = None):
        argv = shlex.split(command)
        if not argv:
            raise ValueError("a bot command is a non-empty command line")
        log_dir = default_log_dir() if log_dir is None else Path(log_dir)
        log_dir.mkdir(parents=True, exist_ok=True)
        program = next((arg for arg in argv[1:] if Path(arg).is_file()), argv[0])  # the script, else the program
        slug = re.sub(r"[^A-Za-z0-9_.-]", "-", Path(program).name)[:40] or "bot"
        fd, log = tempfile.mkstemp(dir=log_dir, prefix=f"{slug}-", suffix=".log")
        self.command, self.log = command, Path(log)
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=fd,
                                         start_new_session=True, bufsize=0,
                                         preexec_fn=_die_with_parent if _main_thread() else None)
        except OSError as err:
            raise BotFault(f"cannot start {command!r}: {err.strerror or err}") from None
        finally:
            os.close(fd)
        self._out = self.proc.stdout.fileno()
        self._in = self.proc.stdin.fileno()
        os.set_blocking(self._in, False)
        self._buffer = b""
        self._transcript = None if transcript is None else open(transcript, "ab")  # noqa: SIM115 (closed in _stop)
        self._finalizer = weakref.finalize(self, _stop, self.proc, self._transcript)

    def send(self, message: dict, deadline: float) -> None:
        """Write one message, waiting at most until ``deadline`` (``time.monotonic()``) for pipe space."""
        data = P.encode(message)
        if self._transcript is not None:
            self._transcript.write(b"> " + data)
        while data:
            try:
                written = os.write(self._in, data)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, OSError):
                raise BotFault(self._gone()) from None
            data = data[written:]
            if data:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([], [self._in], [], left)[1]:
                    raise BotTimeout("it does not read its input")

    def receive(self, deadline: float) -> bytes:
        """The next line the bot writes, waiting at most until ``deadline``."""
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._out], [], [], left)[0]:
                raise BotTimeout("no answer")
            chunk = os.read(self._out, 65536)
            if not chunk:
                raise BotFault(self._gone())
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        if self._transcript is not None:
            self._transcript.write(b"< " + line + b"\n")
        return line

    def ask(self, message: dict, seconds: float) -> bytes:
        deadline = time.monotonic() + seconds
        self.send(message, deadline)
        return self.receive(deadline)

    def _gone(self) -> str:
        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            return "closed its output"
        return f"exited with code {code}" if code >= 0 else f"was killed by signal {-code}"

    def log_tail(self, lines: int = 5) -> str:
        """The last lines of the bot's stderr log."""
        try:
            text = self.log.read_text(errors="replace").strip()
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def close(self) -> None:
        """Say bye, close stdin, wait :data:`EXIT_GRACE_S`, then kill the process group."""
        if self.proc.poll() is None:
            try:
                self.send(P.bye(), time.monotonic() + EXIT_GRACE_S)
            except BotFault:
                pass
        self._finalizer()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


def _stop(proc: subprocess.Popen, transcript) -> None:
    if transcript is not None:
        transcript.close()
    for pipe in (proc.stdin, proc.stdout):
        try:
            pipe.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=EXIT_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the bot and anything it started
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _main_thread() -> bool:
    """Whether the kernel may tie the child's life to this thread (it does so per thread, and a
    worker thread of a server may end while the bot should live on)."""
    return _LIBC is not None and threading.current_thread() is threading.main_thread()


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the parent dies (Linux)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
