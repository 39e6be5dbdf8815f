"""The documentation site builds without a warning (``mkdocs build --strict`` with mkdocs.yml's
``validation``: broken links or anchors, pages left out of the nav, API reference entries that do not
resolve), the API reference shows no raw reST markup, every link of the README, guides and results
pages reaches a file and heading, the sdist carries the docs' sources, and the pages' Python snippets
run as written."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
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
    for page in sorted((tmp_path / "site" / "api").glob("*/index.html")):
        html = page.read_text()
        raw = re.findall(r".{40}(?::(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):|::).{40}", html)
        assert not raw, f"{page.parent.name}: reST markup left as text: {raw[:3]}"
        assert 'class="autorefs autorefs-internal"' in html  # the roles became links
    assert (tmp_path / "site" / "changelog" / "index.html").is_file()


def test_rest_markup_becomes_markdown():
    pytest.importorskip("griffe")
    sys.path.insert(0, str(ROOT))
    try:
        import griffe

        from mkdocs_hooks import rest_to_markdown
    finally:
        sys.path.remove(str(ROOT))
    engine = griffe.load("manni_env.engine")
    text = ("Raises :class:`IllegalActionError`; see :func:`~manni_env.view.SeatView` and ``x``.\n\n"
            "Typical use::\n\n    a = 1\n\n    b = a\n\nAfter.")
    assert rest_to_markdown(text, engine) == (  # a relative name resolved in the docstring's module
        'Raises <autoref identifier="manni_env.engine.IllegalActionError" optional>'
        "<code>IllegalActionError</code></autoref>; "
        'see <autoref identifier="manni_env.view.SeatView" optional><code>SeatView</code></autoref> and ``x``.'
        "\n\nTypical use:\n\n```python\na = 1\n\nb = a\n```\n\nAfter.")
    item = "- a list item, then text::\n\n      not python (\n\n  back in the item"
    assert rest_to_markdown(item, engine) == (
        "- a list item, then text:\n\n  ```text\n  not python (\n  ```\n\n  back in the item")


def test_the_sdist_carries_the_docs():
    manifest = (ROOT / "MANIFEST.in").read_text()
    assert "graft docs" in manifest and "mkdocs.yml" in manifest and "mkdocs_hooks.py" in manifest
    assert "include benchmarks/results/*.md" in manifest  # the results pages the site publishes


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
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Gymnasium's "out of date" notice among them
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


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$", flags=re.M)


def guide_pages() -> list[Path]:
    """The Markdown a reader follows links through: the README, the guides, the results pages."""
    results = sorted((ROOT / "benchmarks" / "results").glob("*.md"))
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *results]


def prose(path: Path) -> str:
    """``path``'s text without fenced code blocks, where a ``[x](y)`` or ``# x`` is not a link or heading."""
    return re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def anchors(path: Path) -> set[str]:
    """The heading ids of ``path`` as the site (the toc slugify of mkdocs.yml) and GitHub make them."""
    from pymdownx.slugs import slugify

    slug, seen = slugify(case="lower"), set()
    for _, title in HEADING.findall(prose(path)):
        base = slug(re.sub(r"`([^`]*)`", r"\1", title), "-")
        found, n = base, 0
        while found in seen:
            n += 1
            found = f"{base}_{n}"
        seen.add(found)
    return seen


def test_the_ray_trainers_pages_are_named_for_what_they_describe():
    """``--trainer ray`` has docs/ray.md, ``--trainer rllib`` docs/ray-rllib.md (the Ray trainer's
    page was docs/rllib.md)."""
    for page, trainer in (("ray.md", "ray"), ("ray-rllib.md", "rllib")):
        title = (ROOT / "docs" / page).read_text().splitlines()[0]
        assert title.startswith("# ") and f"`manni train --trainer {trainer}`" in title, page
    assert not (ROOT / "docs" / "rllib.md").exists()


def test_links_between_pages_reach_a_file_and_heading():
    pytest.importorskip("pymdownx")
    broken = []
    for page in guide_pages():
        for target in LINK.findall(prose(page)):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and "api" not in file.parts and anchor not in anchors(file):
                broken.append(f"{page.relative_to(ROOT)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
