"""Fit torch's CPU threads to the cores other processes leave free (``--torch-threads 0``).

Torch starts one thread per core; beside another busy process, two threads then fight for one
free core and each matrix product waits for the slower one. :class:`ThreadFitter` counts the cores
this process may use (``os.sched_getaffinity``), measures from ``/proc/stat`` how busy the machine
is apart from this process, and gives torch the free cores (at least one); it measures again every
``every_s`` seconds of training. Where ``/proc/stat`` cannot be read it leaves torch's default.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import torch


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _machine_busy() -> tuple[float, float] | None:
    """(busy, total) jiffies of all CPUs since boot (``/proc/stat``), or ``None`` where unavailable."""
    try:
        with open("/proc/stat") as f:
            fields = [float(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
    return sum(fields[:8]) - idle, sum(fields[:8])


def free_cores(usable: int, machine: int, busy: float, total: float, own_cpu_s: float, wall_s: float) -> float:
    """Usable cores that other processes left free over an interval in which the ``machine``'s
    cores were busy for ``busy`` of ``total`` jiffies and this process used ``own_cpu_s`` CPU
    seconds in ``wall_s`` seconds."""
    others = busy / max(total, 1e-9) * machine - own_cpu_s / max(wall_s, 1e-6)
    return usable - max(0.0, others)


class ThreadFitter:
    """Sets ``torch.set_num_threads`` to the free usable cores now and every ``every_s`` seconds; with
    a helper process (the rollout process of ``--overlap``), ``helper_cpu_s()`` its CPU seconds so
    far (counted as this process's); :meth:`reserve` keeps cores for it once it runs."""

    def __init__(self, every_s: float = 30.0, first_sample_s: float = 0.25,
                 helper_cpu_s: Callable[[], float] = lambda: 0.0):
        self.cores, self.every_s, self.reserved, self.helper_cpu_s = usable_cores(), every_s, 0, helper_cpu_s
        self.threads = torch.get_num_threads()
        self._mark = self._sample()
        if self._mark is not None:
            time.sleep(first_sample_s)
            self.refit()

    def _sample(self) -> tuple[float, float, float, float] | None:
        machine = _machine_busy()
        return None if machine is None else (*machine, time.process_time() + self.helper_cpu_s(), time.monotonic())

    def refit(self) -> int:
        """Measure since the last sample and set torch's threads; the thread count."""
        now = self._sample()
        if now is None or self._mark is None:
            return self.threads
        since, self._mark = self._mark, now
        free = free_cores(self.cores, os.cpu_count() or 1, now[0] - since[0], now[1] - since[1], now[2] - since[2],
                          now[3] - since[3])
        self.threads = max(1, min(self.cores - self.reserved, int(free + 0.5) - self.reserved))
        torch.set_num_threads(self.threads)
        return self.threads

    def reserve(self, cores: int) -> int:
        """Keep ``cores`` of the free cores for a helper process from now on; the thread count."""
        self.threads = max(1, min(self.cores, self.threads) - cores + self.reserved)
        self.reserved = cores
        torch.set_num_threads(self.threads)
        return self.threads

    def maybe_refit(self) -> int:
        """:meth:`refit` when ``every_s`` seconds have passed since the last sample."""
        if self._mark is not None and time.monotonic() - self._mark[3] >= self.every_s:
            return self.refit()
        return self.threads
