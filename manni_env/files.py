"""Files written whole or not at all.

:func:`replace_atomically` writes a file beside its destination and renames it over the
destination in one step, so a reader, a crash, Ctrl-C or a full disk leaves either the previous
file or the new one, never half of one (the rename needs no space). Every result, checkpoint and
run file of the project is written through it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path


def replace_atomically(path: str | os.PathLike, write: Callable[[Path], object]) -> None:
    """``write(partial)`` into ``PATH.partial``, flushed to disk, then renamed over ``path``; on
    any error the partial file is removed, ``path`` is untouched and the error propagates."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    try:
        write(partial)
        fd = os.open(partial, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    """``path``'s new content ``text`` (UTF-8), written by :func:`replace_atomically`."""
    replace_atomically(path, lambda partial: partial.write_text(text, encoding="utf-8"))


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """``path``'s new content ``data``, written by :func:`replace_atomically`."""
    replace_atomically(path, lambda partial: partial.write_bytes(data))
