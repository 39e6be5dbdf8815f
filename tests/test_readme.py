"""The README's code snippets run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).parent.parent / "README.md").read_text()


def snippets(section: str) -> list[str]:
    """The ```python blocks of a README section (from its ``## `` heading to the next one)."""
    body = README.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


def test_gymnasium_and_openspiel_snippets():
    gym_snippet, openspiel_snippet = snippets("Gymnasium, vector env, OpenSpiel")
    namespace: dict = {}
    exec(gym_snippet, namespace)
    assert namespace["obs"].shape == (616,) and namespace["selfplay"].num_envs == 64
    pytest.importorskip("pyspiel")
    exec(openspiel_snippet, {})


def test_bring_your_own_agent_snippets(tmp_path, monkeypatch, capsys, request):
    own, sb3 = snippets("Bring your own agent")
    namespace: dict = {}
    exec(own, namespace)
    assert "| highest | 1 |" in capsys.readouterr().out
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch

    from agents.envs import single_agent_env

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
