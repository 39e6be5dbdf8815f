"""Files written whole or not at all.

:func:`replace_atomically` writes files beside their destinations and renames them over the
destinations only once every one is written and flushed, so a reader, a crash, Ctrl-C or a full
disk leaves the previous files or the new ones, never half of one (a rename needs no space). The
results, checkpoints and run files of the project are written through it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

Writer = Callable[[Path], object]


def partial_path(path: Path) -> Path:
    """Where ``path`` is written before its rename: a hidden sibling with the same suffix (so
    writers that choose a format by the suffix, like matplotlib, still do)."""
    return path.with_name(f".{path.stem}.partial-{os.getpid()}{path.suffix}")


def replace_atomically(*files: tuple[str | os.PathLike, Writer]) -> None:
    """For each ``(path, write)``: ``write(partial)`` into :func:`partial_path`, flushed to disk;
    then, all written, each renamed over its ``path`` (in order). On any error every partial file
    is removed, no ``path`` is touched and the error propagates (an ``OSError`` naming the file)."""
    partials = []
    try:
        for path, write in files:
            partial = partial_path(Path(path))
            partials.append(partial)
            try:
                write(partial)
                _flush(partial)
            except OSError as err:
                if err.filename is None:  # a write error (a full disk) names no file: name the destination
                    err.filename = os.fspath(path)
                raise
        for (path, _), partial in zip(files, partials):
            os.replace(partial, path)
    except BaseException:
        for partial in partials:
            partial.unlink(missing_ok=True)
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    """``path``'s new content ``text`` (UTF-8), written by :func:`replace_atomically`."""
    replace_atomically((path, lambda partial: partial.write_text(text, encoding="utf-8")))


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """``path``'s new content ``data``, written by :func:`replace_atomically`."""
    replace_atomically((path, lambda partial: partial.write_bytes(data)))


def _flush(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
