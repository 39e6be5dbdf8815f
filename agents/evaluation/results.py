"""Result files of the arena (``manni arena --out``), written whole or not at all
(:func:`manni_env.files.replace_atomically`, the one atomic file write of the project)."""

from __future__ import annotations

import json
from pathlib import Path

from manni_env.files import replace_atomically

#: the files :func:`write_outputs` writes (``manni arena --out``)
RESULT_FILES = ("result.json", "result.md", "result.png")


def write_outputs(result, out: str | Path) -> None:
    """``result.json``, ``result.md`` and ``result.png`` of an
    :class:`~manni_agents.evaluation.arena.ArenaResult` in directory ``out`` (created if needed),
    renamed into place together once all three are written (a full disk keeps the previous three)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result.to_dict(), indent=2) + "\n"
    replace_atomically((out / "result.json", lambda p: p.write_text(text)),
                       (out / "result.md", lambda p: p.write_text(result.to_markdown())), (out / "result.png", result.plot))
