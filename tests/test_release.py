"""Release hygiene: one version everywhere, a changelog entry for it, env ids with a version history."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import manni_env
from manni_env import GYM_ID, GYM_SELF_PLAY_ID, PETTINGZOO_ID, PETTINGZOO_V1_ID, env

ROOT = Path(__file__).resolve().parent.parent


def test_one_version_everywhere():
    version = manni_env.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    assert importlib.metadata.version("manni-env") == version  # pyproject reads manni_env.__version__
    assert f"\nversion: {version}\n" in (ROOT / "CITATION.cff").read_text()
    entries = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), flags=re.M)
    first = next(e for e in entries if e != "Unreleased")  # changes since the release may come above it
    assert first == version, f"CHANGELOG.md's newest release is {first}, the package is {version}"


def test_env_ids_carry_a_version_listed_in_the_history():
    history = env.__doc__.split("### Version History", 1)[1]
    for env_id in (PETTINGZOO_ID, GYM_ID, GYM_SELF_PLAY_ID, PETTINGZOO_V1_ID):
        version = re.search(r"-v(\d+)$", env_id).group(1)
        assert f"* v{version}:" in history, env_id
    assert manni_env.__version__ in history  # the history says which release each version belongs to
