"""A bot program as a child process speaking newline-delimited JSON, with a deadline on every answer.

The child runs in its own process group (Ctrl-C at the terminal reaches only this process, which
then stops it) and, on Linux, is killed by the kernel if this process dies first. Its stderr is
drained by a thread into a log file of bounded size, made only once there is something to log
(:class:`StderrLog`); a transcript file, if given, gets every line sent (``> ``) and received
(``< ``). An answer line longer than :data:`MAX_LINE_BYTES` is a fault, found in time linear in
what was read.
:meth:`BotProcess.close` says ``bye``, closes its stdin, waits briefly, then kills its whole
process group and every process it started that carries its mark (:func:`_descendants`); it also
runs when the owner is garbage-collected and at interpreter exit.
"""

from __future__ import annotations

import collections
import ctypes
import functools
import math
import os
import re
import secrets
import select
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil

from manni_agents.bots import protocol as P

#: how long a closing bot may take to exit on its own before its process group is killed
EXIT_GRACE_S = 0.5
#: longest answer line read from a bot (its newline excluded); a longer one is a fault
MAX_LINE_BYTES = 64 * 1024
#: stderr written to a bot's log file, all its processes together; beyond, a note and each
#: process's last :data:`LOG_TAIL_BYTES`, while the file is under twice this size
LOG_CAP_BYTES = 1024 * 1024
#: stderr kept in memory per process (its last bytes: error messages quote its last lines)
LOG_TAIL_BYTES = 16 * 1024
#: the environment variable that marks a bot's processes and everything they start
MARK = "MANNI_BOT_PROCESS"
_READ = 65536
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None
#: starts the bots of threads other than the main one (see :func:`_spawn`)
_SPAWNER: ThreadPoolExecutor


class BotFault(Exception):
    """The bot did not answer in time, exited, or wrote something that is not an answer; ``request``
    is the message it was given when it failed (set by :class:`~manni_agents.bots.agent.BotAgent`)."""

    def __init__(self, reason: str, request: dict | None = None):
        super().__init__(reason)
        self.request = request


class BotTimeout(BotFault):
    """No answer (or no room in the bot's input) before the deadline."""


def script_of(command: str) -> Path | None:
    """The first argument after the program that names a file (``mybot.py`` of ``python3 mybot.py``), if any."""
    return next((Path(arg) for arg in shlex.split(command)[1:] if Path(arg).is_file()), None)


def default_log_dir() -> Path:
    return Path(tempfile.gettempdir()) / "manni-bot-logs"


class StderrLog:
    """The stderr log file of one bot, shared by its successive processes, at most about
    2 × :data:`LOG_CAP_BYTES` long: the first :data:`LOG_CAP_BYTES` of stderr, then for each
    process that wrote more a note of how much was left out and its last :data:`LOG_TAIL_BYTES`.
    The file is created at the first byte of stderr (``path`` is None until then): a bot that
    writes nothing there leaves no file."""

    def __init__(self, command: str, log_dir: Path | None = None):
        self.dir = default_log_dir() if log_dir is None else Path(log_dir)
        self.dir.mkdir(parents=True, exist_ok=True)  # here, so that a directory that cannot be made fails at start
        program = script_of(command) or shlex.split(command)[0]
        self.slug = re.sub(r"[^A-Za-z0-9_.-]", "-", Path(program).name)[:40] or "bot"
        self.path: Path | None = None
        self.size = 0
        self.lock = threading.Lock()

    def file(self) -> Path:
        """The log's path, creating the file on the first call (hold :attr:`lock`)."""
        if self.path is None:
            fd, path = tempfile.mkstemp(dir=self.dir, prefix=f"{self.slug}-", suffix=".log")
            os.close(fd)
            self.path = Path(path)
        return self.path


class _Drain(threading.Thread):
    """Reads one process's stderr to its end: logs what fits in its :class:`StderrLog` and keeps the
    last :data:`LOG_TAIL_BYTES` in memory."""

    def __init__(self, pipe, log: StderrLog):
        super().__init__(daemon=True, name="manni-bot-stderr")
        self.pipe, self.log = pipe, log
        self._tail: collections.deque[bytes] = collections.deque()
        self._kept = 0
        self._lock = threading.Lock()

    def tail(self) -> bytes:
        with self._lock:
            return b"".join(self._tail)[-LOG_TAIL_BYTES:]

    def run(self) -> None:
        try:
            self._drain()
        finally:
            self.pipe.close()  # here, not by the owner: the descriptor is never closed under a read

    def _drain(self) -> None:
        log, dropped, out = self.log, 0, None
        try:
            while chunk := _read(self.pipe):
                with self._lock:
                    self._tail.append(chunk)
                    self._kept += len(chunk)
                    while self._kept - len(self._tail[0]) >= LOG_TAIL_BYTES:
                        self._kept -= len(self._tail.popleft())
                with log.lock:
                    room = max(0, LOG_CAP_BYTES - log.size)
                    if room:
                        if out is None:
                            out = open(log.file(), "ab")  # noqa: SIM115 (closed below)
                        out.write(chunk[:room])
                        out.flush()
                    log.size += min(room, len(chunk))
                    dropped += max(0, len(chunk) - room)
            with log.lock:
                if dropped and log.size < 2 * LOG_CAP_BYTES:
                    kept = self.tail()
                    note = (f"\n[manni: {dropped:,} bytes of this process's stderr are not logged (the log keeps "
                            f"the first {LOG_CAP_BYTES:,}); its last {len(kept):,} follow]\n").encode()
                    with open(log.file(), "ab") as end:
                        end.write(note + kept)
                    log.size += len(note) + len(kept)
        finally:
            if out is not None:
                out.close()


class BotProcess:
    """One running bot program. ``ask`` sends a message and returns the answer line."""

    def __init__(self, command: str, log: StderrLog, transcript: Path | None = None):
        argv = shlex.split(command)
        if not argv:
            raise ValueError("a bot command is a non-empty command line")
        self.command, self._log = command, log
        self.mark = secrets.token_hex(8)
        try:
            self.proc = _spawn(argv, dict(os.environ, **{MARK: self.mark}))
        except OSError as err:
            raise BotFault(f"cannot start {command!r}: {err.strerror or err}") from None
        self._out = self.proc.stdout.fileno()
        self._in = self.proc.stdin.fileno()
        os.set_blocking(self._in, False)
        self._buffer = bytearray()
        self._stderr = _Drain(self.proc.stderr, log)
        self._stderr.start()
        self._transcript = None if transcript is None else open(transcript, "ab")  # noqa: SIM115 (closed in _stop)
        self._finalizer = weakref.finalize(self, _stop, self.proc, self.mark, self._transcript, self._stderr)

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
                if not _ready(self._in, select.POLLOUT, deadline):
                    raise BotTimeout("it does not read its input")

    def receive(self, deadline: float) -> bytes:
        """The next line the bot writes, waiting at most until ``deadline``; a line over
        :data:`MAX_LINE_BYTES` is a :class:`BotFault` (each byte is searched for the newline once)."""
        searched = 0
        while (end := self._buffer.find(b"\n", searched)) < 0:
            searched = len(self._buffer)
            if searched > MAX_LINE_BYTES:
                raise BotFault(f"answer too long ({searched:,} bytes without a newline > {MAX_LINE_BYTES:,})")
            if not _ready(self._out, select.POLLIN, deadline):
                raise BotTimeout("no answer" if not searched else f"no end of line after {searched:,} bytes")
            chunk = os.read(self._out, _READ)
            if not chunk:
                raise BotFault(self._gone())
            self._buffer += chunk
        if end > MAX_LINE_BYTES:
            raise BotFault(f"answer too long ({end:,} bytes > {MAX_LINE_BYTES:,})")
        line = bytes(self._buffer[:end])
        del self._buffer[: end + 1]
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

    @property
    def log(self) -> Path | None:
        """The stderr log file, or None while the bot has written nothing to stderr."""
        return self._log.path

    def log_tail(self, lines: int = 5) -> str:
        """The last lines the bot wrote to stderr, joined by `` | `` so that an error stays one line
        (complete once the process is closed)."""
        text = self._stderr.tail().decode(errors="replace").strip()
        return " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip())

    def close(self) -> None:
        """Say bye, close stdin, wait :data:`EXIT_GRACE_S`, then kill the process group and the rest."""
        if self.proc.poll() is None:
            try:
                self.send(P.bye(), time.monotonic() + EXIT_GRACE_S)
            except BotFault:
                pass
        self._finalizer()

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None


def _ready(fd: int, event: int, deadline: float) -> bool:
    """Whether ``fd`` is ready for ``event`` (or closed) before ``deadline``; ``poll``, unlike
    ``select``, takes descriptors beyond 1024 (a server with many connections)."""
    left = deadline - time.monotonic()
    if left <= 0:
        return False
    poller = select.poll()
    poller.register(fd, event)
    return bool(poller.poll(math.ceil(left * 1000)))


def _read(pipe) -> bytes:
    try:
        return os.read(pipe.fileno(), _READ)
    except OSError:
        return b""


def _spawn(argv: list[str], env: dict[str, str]) -> subprocess.Popen:
    """Start the bot. The kernel's parent-death signal is tied to the *thread* that started the
    child, so a bot asked for by a short-lived thread (a server's worker) is started by one
    long-lived thread instead: it dies with this process, not with the thread."""
    popen = functools.partial(
        subprocess.Popen, argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True, bufsize=0, env=env, preexec_fn=_die_with_parent if _LIBC is not None else None)
    if threading.current_thread() is threading.main_thread():
        return popen()
    return _SPAWNER.submit(popen).result()


def _new_spawner() -> None:
    global _SPAWNER
    _SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="manni-bot-spawner")


_new_spawner()
os.register_at_fork(after_in_child=_new_spawner)  # a forked child has none of its parent's threads


def _descendants(proc: subprocess.Popen, mark: str) -> list[psutil.Process]:
    """Every live process the bot started: its descendants now, and any process whose environment
    carries its mark (one that left the process group with ``setsid`` and was orphaned; the same
    trick as Jenkins's process tree killer). A process that scrubs its environment and was
    orphaned escapes."""
    found: dict[int, psutil.Process] = {}
    try:
        found.update((p.pid, p) for p in psutil.Process(proc.pid).children(recursive=True))
    except psutil.Error:
        pass
    me = os.getuid() if hasattr(os, "getuid") else None
    for p in psutil.process_iter(["uids"]):
        if p.pid in found or p.pid == proc.pid or (me is not None and p.info["uids"] and p.info["uids"].real != me):
            continue
        try:
            if p.environ().get(MARK) == mark:
                found[p.pid] = p
        except psutil.Error:
            pass
    return list(found.values())


def _stop(proc: subprocess.Popen, mark: str, transcript, stderr: threading.Thread) -> None:
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
    rest = _descendants(proc, mark)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the bot and anything it started
    except (ProcessLookupError, PermissionError):
        pass
    for p in rest:
        try:
            p.kill()
        except psutil.Error:
            pass
    proc.wait()
    stderr.join(timeout=1.0)  # its writers are gone: the rest of stderr is read at once


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the parent dies (Linux)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
