"""mkdocs hooks of the documentation site (mkdocs.yml ``hooks``).

- Pages that other work adds (:data:`OPTIONAL_PAGES`) stay in the nav only while their file exists,
  so ``mkdocs build --strict`` passes before and after they land; any other missing page fails.
- A link from a page to a repository file outside ``docs/`` (``../benchmarks/results/x.md``) works
  on GitHub but not on the site: pictures are copied into the site, other files become a link to
  the repository (``repo_url``) or, without one, their path as text.
- ``changelog.md`` is the repository's ``CHANGELOG.md``.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent
OPTIONAL_PAGES = {"bot-protocol.md", "search.md", "tables.md", "training.md", "reliability.md"}
IMAGES = {".png", ".svg", ".jpg", ".jpeg", ".gif"}
REPO_COPY = "repository"  # where copied pictures live in the site
LINK = re.compile(r"(!?)\[([^\]]*)\]\((\.\./[^)#\s]+)(#[^)\s]*)?\)")


def _prune(items: list, docs: Path) -> list:
    kept = []
    for item in items:
        if isinstance(item, dict):
            (title, value), = item.items()
            if isinstance(value, list):
                value = _prune(value, docs)
                if not value:
                    continue
            elif value in OPTIONAL_PAGES and not (docs / value).is_file():
                continue
            kept.append({title: value})
        else:
            kept.append(item)
    return kept


def on_config(config, **kwargs):
    config["nav"] = _prune(config["nav"], Path(config["docs_dir"]))
    return config


def _outside(page_src: str, target: str) -> str | None:
    """The repository path of ``target`` (relative to the page) when it leaves docs/, else None."""
    path = posixpath.normpath(posixpath.join("docs", posixpath.dirname(page_src), target))
    return None if path.startswith(("docs/", "..")) else path


def on_files(files, config, **kwargs):
    files.append(File.generated(config, "changelog.md", abs_src_path=str(ROOT / "CHANGELOG.md")))
    for page in [f for f in files if f.src_uri.endswith(".md") and f.abs_src_path]:
        for bang, _, target, _ in LINK.findall(Path(page.abs_src_path).read_text(encoding="utf-8")):
            path = _outside(page.src_uri, target)
            if bang and path and (ROOT / path).suffix in IMAGES and (ROOT / path).is_file():
                uri = f"{REPO_COPY}/{path}"
                if files.get_file_from_path(uri) is None:
                    files.append(File.generated(config, uri, abs_src_path=str(ROOT / path)))
    return files


def on_page_markdown(markdown, page, config, **kwargs):
    def repl(m: re.Match) -> str:
        bang, text, target, anchor = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        path = _outside(page.file.src_uri, target)
        if path is None or not (ROOT / path).exists():
            return m.group(0)  # inside docs/ (mkdocs checks it) or a broken link (left for mkdocs to report)
        if bang and (ROOT / path).suffix in IMAGES:
            up = "../" * page.file.src_uri.count("/")
            return f"![{text}]({up}{REPO_COPY}/{path})"
        if config.get("repo_url"):
            kind = "tree" if (ROOT / path).is_dir() else "blob"
            return f"[{text}]({config['repo_url'].rstrip('/')}/{kind}/main/{path}{anchor})"
        return f"`{path}`" if text.strip("`").rstrip("/") == path else f"{text} (`{path}`)"

    return LINK.sub(repl, markdown)
