"""Joining a Ray cluster or starting a local one, for the Ray trainers (``--address``, ``--num-cpus``)."""

from __future__ import annotations

from pathlib import Path


def start_ray(address: str | None, num_cpus: int | None) -> bool:
    """Join the cluster at ``address`` ('auto', 'HOST:6379' or 'ray://HOST:10001'), shipping this
    checkout's ``manni_env``, ``agents`` and ``train`` packages to its workers (``runtime_env``
    ``py_modules``), or start a private in-process Ray with ``num_cpus`` CPUs (default: all).
    Returns whether this call started Ray: a caller's own running instance is used and left to it."""
    import ray

    import agents
    import manni_env
    import train

    if ray.is_initialized():
        return False
    if address:
        runtime_env = {"py_modules": [str(Path(m.__file__).parent) for m in (manni_env, agents, train)]}
        ray.init(address=address, runtime_env=runtime_env)
    else:
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False)
    return True
