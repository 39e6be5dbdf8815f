"""The README's code snippets run as written, and the README stays a front page."""

from __future__ import annotations

import re
import warnings
from pathlib import Path


ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()


def snippets(section: str) -> list[str]:
    """The ```python blocks of a README section (from its ``## `` heading to the next one)."""
    body = README.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", body, flags=re.S)


def test_ten_lines_gymnasium_and_own_agent_snippets(capsys):
    ten, gym_snippet, own = snippets("Ten lines")
    assert len(ten.strip().splitlines()) <= 12  # the ten lines (imports and a blank line aside)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no snippet warns (Gymnasium's "out of date" notice among them)
        namespace: dict = {}
        exec(ten, namespace)
        game = namespace["env"].unwrapped.game
        assert game.finished and game.winners  # a whole game, to its end
        assert capsys.readouterr().out.strip().endswith(str(game.winners))
        namespace = {}
        exec(gym_snippet, namespace)
        assert namespace["obs"].shape == (616,) and namespace["info"]["action_mask"].any()
        assert namespace["selfplay"].num_envs == 64
        exec(own, {})
    assert "| highest | 1 |" in capsys.readouterr().out


def test_front_page_size_and_links():
    assert len(README.splitlines()) <= 200
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)", README):  # relative links and pictures
        assert (ROOT / target).exists(), f"README links to a missing {target}"


def test_headline_numbers_are_the_measured_ones():
    """Every strength number of the headline table is in the strength and ladder pages or the arena
    results it summarizes."""
    table = README.split("\n## Headline results\n", 1)[1].split("```", 1)[0]
    pages = [ROOT / "benchmarks/results/strength" / f"{v}.md" for v in ("hornafjardar", "basic", "trjamann", "laugarvatn")]
    arenas = sorted((ROOT / "benchmarks/results/training").glob("ppo_*m/**/*.md"))  # long runs' arenas, pooled tables
    ladder = sorted((ROOT / "benchmarks/results/ladder").rglob("*.md"))  # pages and their cells
    measured = "".join(p.read_text() for p in [*pages, *ladder, *arenas])
    for interval in re.findall(r"[+−-]\d\.\d{3} \[[+−-]\d\.\d{3}, [+−-]\d\.\d{3}\]", table):
        assert interval.replace("−", "-") in measured.replace("−", "-"), interval
    for ms in re.findall(r"\| (\d\.\d{3}) \|", table):
        assert f"| {ms} |" in measured, ms
    assert "TEST_TIME" not in README and "MEMORY" not in README.replace("memory", "")
