"""mkdocs hooks of the documentation site (mkdocs.yml ``hooks``).

- Pages that other work adds (:data:`OPTIONAL_PAGES`) stay in the nav only while their file exists,
  so ``mkdocs build --strict`` passes before and after they land; any other missing page fails.
- The results pages (``benchmarks/results/*.md``, :data:`RESULTS`) are published as ``results/*.md``,
  ``CHANGELOG.md`` as ``changelog.md`` and the format schemas (``manni_env/schemas/*.schema.json``)
  as ``schemas/*.schema.json``. Every page links by its path in the repository, as
  GitHub shows it; on the site a link to a published page points to that page, a picture outside
  ``docs/`` is copied into the site, and any other file outside ``docs/`` becomes a link to the
  repository (``repo_url``) or, without one, its path as text.
- :class:`ReSTMarkup`, a griffe extension (mkdocs.yml, mkdocstrings ``extensions``), turns the reST
  markup of the docstrings into Markdown before mkdocstrings renders them: a role such as
  ``:class:`~manni_env.engine.RoundResult``` becomes a cross-reference (a link where the object has a
  page, its name otherwise) and a ``text::`` literal block a fenced code block.
"""

from __future__ import annotations

import ast
import html
import posixpath
import re
import textwrap
from pathlib import Path

import griffe
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent
OPTIONAL_PAGES = {"bot-protocol.md", "search.md", "tables.md", "training.md", "reliability.md"}
RESULTS = "benchmarks/results"
SCHEMAS = "manni_env/schemas"
IMAGES = {".png", ".svg", ".jpg", ".jpeg", ".gif"}
REPO_COPY = "repository"  # where copied pictures live in the site
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)#\s]*)(#[^)\s]*)?\)")


def published() -> dict[str, str]:
    """The repository's files outside ``docs/`` that the site shows: repository path → site path."""
    pages = {f"{RESULTS}/{path.name}": f"results/{path.name}" for path in sorted((ROOT / RESULTS).glob("*.md"))}
    schemas = {f"{SCHEMAS}/{path.name}": f"schemas/{path.name}" for path in sorted((ROOT / SCHEMAS).glob("*.schema.json"))}
    return {"CHANGELOG.md": "changelog.md", **pages, **schemas}


def _repo_path(src_uri: str) -> str:
    """Where the site page ``src_uri`` lives in the repository."""
    return {site: repo for repo, site in published().items()}.get(src_uri, f"docs/{src_uri}")


def _target(src_uri: str, link: str) -> str | None:
    """The repository path a relative link of page ``src_uri`` points to (None for a web address)."""
    if re.match(r"[a-z][a-z0-9+.-]*:", link):
        return None
    return posixpath.normpath(posixpath.join(posixpath.dirname(_repo_path(src_uri)), link))


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


def on_files(files, config, **kwargs):
    for repo, site in published().items():
        files.append(File.generated(config, site, abs_src_path=str(ROOT / repo)))
    for page in [f for f in files if f.src_uri.endswith(".md") and f.abs_src_path]:
        for bang, _, link, _ in LINK.findall(Path(page.abs_src_path).read_text(encoding="utf-8")):
            path = _target(page.src_uri, link) if bang and link else None
            if path and not path.startswith("docs/") and (ROOT / path).suffix in IMAGES and (ROOT / path).is_file():
                uri = f"{REPO_COPY}/{path}"
                if files.get_file_from_path(uri) is None:
                    files.append(File.generated(config, uri, abs_src_path=str(ROOT / path)))
    return files


def on_page_markdown(markdown, page, config, **kwargs):
    here = posixpath.dirname(page.file.src_uri)

    def repl(m: re.Match) -> str:
        bang, text, link, anchor = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        path = _target(page.file.src_uri, link) if link else None
        if path is None or not (ROOT / path).exists():
            return m.group(0)  # a web address, an anchor of this page or a broken link (left for mkdocs to report)
        site = published().get(path) or (path.removeprefix("docs/") if path.startswith("docs/") else None)
        if bang and not site and (ROOT / path).suffix in IMAGES:
            site = f"{REPO_COPY}/{path}"
        if site:
            return f"{bang}[{text}]({posixpath.relpath(site, here or '.')}{anchor})"
        if config.get("repo_url"):
            kind = "tree" if (ROOT / path).is_dir() else "blob"
            return f"[{text}]({config['repo_url'].rstrip('/')}/{kind}/main/{path}{anchor})"
        return f"`{path}`" if text.strip("`").rstrip("/") == path else f"{text} (`{path}`)"

    return LINK.sub(repl, markdown)


ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|data|exc|obj|const):`(~?)([^`]+)`")
LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d+\.)\s+")


def _full_name(obj: griffe.Object, name: str) -> str:
    """``name`` as written in ``obj``'s docstring, made absolute from ``obj``'s scope where it is relative."""
    first, dot, rest = name.partition(".")
    try:
        return obj.resolve(first) + dot + rest
    except (griffe.NameResolutionError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return name


def _literal_blocks(text: str) -> str:
    """``text`` with each reST ``paragraph::`` + indented literal block as ``paragraph:`` + a fenced block."""
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.rstrip().endswith("::"):
            out.append(line)
            continue
        item = LIST_ITEM.match(line)
        inner = " " * (item.end() if item else len(line) - len(line.lstrip()))  # the paragraph's indentation
        end = i
        while end < len(lines) and (not lines[end].strip() or lines[end].startswith((inner + " ", inner + "\t"))):
            end += 1
        code = textwrap.dedent("\n".join(lines[i:end])).strip("\n")
        if not code:
            out.append(line)
            continue
        try:
            ast.parse(code)
            language = "python"
        except SyntaxError:
            language = "text"
        intro = line.rstrip()[:-2].rstrip()
        if intro.strip():
            out += [intro + ":", ""]
        out += [f"{inner}```{language}", *(inner + c if c else "" for c in code.split("\n")), inner + "```"]
        if end < len(lines):
            out.append("")
        i = end
    return "\n".join(out)


def rest_to_markdown(text: str, obj: griffe.Object) -> str:
    """The Markdown of a docstring written with reST roles and ``::`` literal blocks."""

    def role(match: re.Match) -> str:
        tilde, name = match.groups()
        target = _full_name(obj, name.lstrip("."))
        shown = name.rsplit(".", 1)[-1] if tilde else name
        return f'<autoref identifier="{html.escape(target)}" optional><code>{html.escape(shown)}</code></autoref>'

    return ROLE.sub(role, _literal_blocks(text))


class ReSTMarkup(griffe.Extension):
    """Rewrites every docstring of a loaded package from reST markup to Markdown (see the module docstring)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs) -> None:
        todo = [pkg]
        while todo:
            obj = todo.pop()
            if obj.docstring is not None:
                obj.docstring.value = rest_to_markdown(obj.docstring.value, obj)
            todo.extend(member for member in obj.members.values() if not member.is_alias)
