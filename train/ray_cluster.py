"""Joining a Ray cluster or starting a local one, for the Ray trainers (``--address``, ``--num-cpus``)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path


def start_ray(address: str | None, num_cpus: int | None) -> bool:
    """Join the cluster at ``address`` ('auto', 'HOST:6379' or 'ray://HOST:10001'), shipping this
    checkout's ``manni_env``, ``manni_agents`` and ``manni_train`` packages to its workers
    (``runtime_env`` ``py_modules``), or start a private in-process Ray with ``num_cpus`` CPUs (default: all).
    Returns whether this call started Ray: a caller's own running instance is used and left to it."""
    import ray

    import manni_agents
    import manni_env
    import manni_train

    if ray.is_initialized():
        return False
    if address:
        # Ray names a shipped module after its folder, and a checkout's folders agents/ and train/
        # install as manni_agents and manni_train: ship copies under the import names
        with tempfile.TemporaryDirectory(prefix="manni_py_modules_") as staging:
            folders = []
            for package in (manni_env, manni_agents, manni_train):
                folder = Path(staging) / package.__name__
                shutil.copytree(Path(package.__file__).parent, folder, ignore=shutil.ignore_patterns("__pycache__"))
                folders.append(str(folder))
            ray.init(address=address, runtime_env={"py_modules": folders})
    else:
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False)
    return True
