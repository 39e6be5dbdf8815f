"""Running a ``manni`` command in the test's process and reading its one error line."""

from __future__ import annotations

import pytest

from manni_env.cli import main


def usage_error(capsys, argv: list[str]) -> str:
    """The one error line of a command that must stop with exit code 2 and no traceback."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and "Traceback" not in err, err
    return err.strip().splitlines()[-1]
