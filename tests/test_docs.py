"""The documentation site builds without a warning (``mkdocs build --strict``: broken links, missing
pages, API reference entries that do not resolve), the sdist carries its sources, and the pages'
Python snippets run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
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


def blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / page).read_text(), flags=re.S)


def test_getting_started_and_environment_snippets(capsys):
    (ten,) = blocks("getting-started.md")
    exec(ten, {})
    assert capsys.readouterr().out.strip()
    aec, gym_snippet, openspiel_snippet = blocks("environments.md")
    namespace: dict = {}
    exec(aec, namespace)
    assert len(namespace["env"].unwrapped.game.rounds) == 1  # one episode: a deal, the default
    namespace = {}
    exec(gym_snippet, namespace)
    assert namespace["obs"].shape == (616,) and namespace["selfplay"].num_envs == 64 and namespace["envs"].num_envs == 8
    pytest.importorskip("pyspiel")
    exec(openspiel_snippet, {})


def test_bring_your_own_agent_snippets(tmp_path, monkeypatch, capsys, request):
    own, sb3 = blocks("agents.md")
    namespace: dict = {}
    exec(own, namespace)
    assert "| highest | 1 |" in capsys.readouterr().out
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch

    from manni_agents.envs import single_agent_env

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one small network per move: threads only contend with the other test worker
    request.addfinalizer(lambda: torch.set_num_threads(threads))

    model = sb3_contrib.MaskablePPO("MlpPolicy", single_agent_env(opponents=("random", "random"), seed=0),
                                    n_steps=32, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(32)
    model.save(tmp_path / "my_model.zip")
    monkeypatch.chdir(tmp_path)
    exec(sb3, namespace)
    assert "| my_model | 1 |" in capsys.readouterr().out
