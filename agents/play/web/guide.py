"""What ``manni serve`` teaches a newcomer: the variants on offer and the rules page.

:func:`variant_rows` is ``/api/variants``: one row per row of the rules table
(:data:`~manni_env.rules.VARIANT_TABLE`, in its order): the variant's display name, one-line
description, options with their defaults and facts (pack, hand, Manni, how the contract is chosen,
the game's end), all read from the table. :func:`rules_page` is ``/rules``: the
project's rules text (docs/RULES.md, shipped beside the static page) rendered to HTML, each
variant's section with the variant's id as its anchor (``/rules#basic``; Trjámann and
Laugarvatnsmanni share one section, ``/rules#trjamann``).
"""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

from markdown_it import MarkdownIt

from manni_env.rules import VARIANT_TABLE, ContractSource, EndRule, Rules, make_rules

RULES_FILE = Path(__file__).parent / "static" / "RULES.md"

def variant_rows() -> list[dict]:
    """The variants on offer, in the rules table's order (see the module docstring)."""
    rows = []
    for name, spec in VARIANT_TABLE.items():
        rules = make_rules(name)
        contract = {ContractSource.CUT: "cut card", ContractSource.ROTATION: "rotating trump",
                    ContractSource.ANNOUNCE: "announced"}[spec.contract_source]
        rows.append({"id": name, "name": spec.title, "description": spec.summary, "options": rules.options(),
                     "rules": rules_anchor(name),
                     "pack": spec.pack.bit_count(), "hand": spec.hand_size, "manni": spec.manni_size,
                     "contract": contract, "end": end_text(rules)})
    return rows


def end_text(rules: Rules) -> str:
    """How a game under ``rules`` ends, in words: ``"until a plus tally reaches 10"``, ``"12 deals"``."""
    return {EndRule.PLUS_TARGET: f"until a plus tally reaches {rules.target}",
            EndRule.UNIQUE_TOTAL_TARGET: f"until a total reaches {rules.target}",
            EndRule.FIXED_DEALS: f"{rules.max_deals} deals"}[rules.spec.end_rule]


@functools.cache
def _rendered() -> tuple[str, dict[str, str]]:
    """The rules text as HTML and, per variant, the id of the heading of its section (a heading
    naming variants by id, as ``(`trjamann`)``, gets the first one's id)."""
    md = MarkdownIt("commonmark").enable("table")
    tokens = md.parse(RULES_FILE.read_text(encoding="utf-8"))
    anchors: dict[str, str] = {}
    for opening, inline in zip(tokens, tokens[1:]):
        named = [v for v in re.findall(r"`(\w+)`", inline.content) if v in VARIANT_TABLE]
        if opening.type == "heading_open" and named:
            opening.attrSet("id", named[0])
            anchors.update(dict.fromkeys(named, named[0]))
    return md.renderer.render(tokens, md.options, {}), anchors


def rules_anchor(variant: str) -> str:
    """The rules page's link to ``variant``'s section."""
    return f"/rules#{_rendered()[1].get(variant, '')}".rstrip("#")


def rules_page() -> str:
    """The rules as one HTML page."""
    body = _rendered()[0]
    links = " · ".join(f'<a href="{rules_anchor(name)}">{html.escape(spec.title)}</a>' for name, spec in VARIANT_TABLE.items())
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n  <meta charset="utf-8">\n'
        '  <meta name="viewport" content="width=device-width, initial-scale=1">\n  <title>Manni: the rules</title>\n'
        '  <link rel="icon" href="data:,">\n  <link rel="stylesheet" href="/static/style.css">\n</head>\n<body>\n'
        '<header><h1><a href="/">Manni</a></h1><nav><a class="tab" href="/">Play</a></nav></header>\n'
        f'<main class="rules">\n<p class="rules-nav">Variants: {links}</p>\n{body}</main>\n</body>\n</html>\n'
    )
