"""The replay library: the games this server saved (``RECORDS_DIR/games.jsonl``), newest first.

Only the file's last :data:`LIBRARY_BYTES` are read for the list (at most :data:`LIBRARY_GAMES`
games), so a listing costs the same however long the server has run. A game is named by the byte
offset of its line, which stays valid while the server only appends; :func:`saved_game` reads one
line at such an offset (at most :data:`~manni_env.records.MAX_LINE_CHARS` bytes). A line being
written (no newline yet) or not a JSON object is left out.
"""

from __future__ import annotations

import json
from pathlib import Path

from manni_env.records import MAX_LINE_CHARS

from manni_agents.play.web.replay import summary

#: How much of the end of the records file a listing reads, and the most games it lists.
LIBRARY_BYTES, LIBRARY_GAMES = 4 * 2**20, 100


def _record(line: bytes) -> dict | None:
    if not line.endswith(b"\n"):
        return None
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def saved_games(path: Path) -> list[dict]:
    """The newest saved games: :func:`~manni_agents.play.web.replay.summary` of each, its ``index``
    the line's byte offset (see the module docstring)."""
    try:
        with path.open("rb") as f:
            size = f.seek(0, 2)
            start = max(0, size - LIBRARY_BYTES)
            f.seek(start)
            data = f.read(size - start)
    except FileNotFoundError:
        return []
    offset = 0
    if start > 0:  # the first line read is cut: skip it
        offset = data.find(b"\n") + 1 if b"\n" in data else len(data)
    games = []
    while offset < len(data):
        end = data.find(b"\n", offset)
        line = data[offset:] if end < 0 else data[offset:end + 1]
        record = _record(line)
        if record is not None:
            games.append(summary(record, start + offset))
        offset += len(line)
    return games[::-1][:LIBRARY_GAMES]


def saved_game(path: Path, offset: int) -> dict:
    """The record on the line at byte ``offset``; ``KeyError`` if no whole line starts there."""
    try:
        with path.open("rb") as f:
            if offset > 0:
                f.seek(offset - 1)
                if f.read(1) != b"\n":
                    raise KeyError(offset)
            else:
                f.seek(0)
            record = _record(f.readline(MAX_LINE_CHARS + 1))
    except FileNotFoundError:
        raise KeyError(offset) from None
    if record is None:
        raise KeyError(offset)
    return record
