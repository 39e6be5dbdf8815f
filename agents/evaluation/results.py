"""Result files of the arena and the league, and the one atomic file write of the project.

:func:`atomic_write` writes every file a reader may open while it is being replaced (arena and
league results, a trainer's history and resume state): to a temporary file beside the target,
then renamed over it, so a reader sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

#: the files :func:`write_outputs` writes (``manni arena --out``)
RESULT_FILES = ("result.json", "result.md", "result.png")


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """``write(tmp)`` to a temporary file next to ``path`` (same suffix), then rename it to ``path``;
    the temporary file is removed if ``write`` fails."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=path.suffix)
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_outputs(result, out: str | Path) -> None:
    """``result.json``, ``result.md`` and ``result.png`` of an
    :class:`~manni_agents.evaluation.arena.ArenaResult` in directory ``out`` (created if needed),
    each written atomically (:func:`atomic_write`)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "result.json", lambda p: p.write_text(json.dumps(result.to_dict(), indent=2) + "\n"))
    atomic_write(out / "result.md", lambda p: p.write_text(result.to_markdown()))
    atomic_write(out / "result.png", result.plot)
