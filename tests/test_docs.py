"""The documentation site builds without a warning (``mkdocs build --strict``: broken links, missing
pages, API reference entries that do not resolve), and the sdist carries its sources."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_the_site_builds_strictly(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    api = (tmp_path / "site" / "api" / "agents" / "index.html").read_text()
    assert "make_agent" in api and "run_arena" in api  # the reference is generated from the docstrings
    assert (tmp_path / "site" / "changelog" / "index.html").is_file()


def test_the_sdist_carries_the_docs():
    manifest = (ROOT / "MANIFEST.in").read_text()
    assert "graft docs" in manifest and "mkdocs.yml" in manifest and "mkdocs_hooks.py" in manifest
