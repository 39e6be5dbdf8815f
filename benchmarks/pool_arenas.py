"""Pool one head-to-head over several arenas: the same opponent, one arena per training seed.

    python benchmarks/pool_arenas.py benchmarks/results/training/ppo_70m/trjamann_s1*/vs_search_2026-12-04

Each argument is a ``manni arena --out`` directory (or its ``result.json``) whose first agent is a
run's network. Read from each is the head-to-head of that first agent against the opponent
(``--against SPEC``, or the arena's only other spec); every arena must name the same opponent and
variant. The pooled margin is the unweighted mean of the arenas' differences, with the 95% interval
of independent runs, as :mod:`time_to_strength` pools its seeds. The table goes to standard output
and to ``--out FILE`` (Markdown).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from manni_env.files import write_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from time_to_strength import pooled, text  # noqa: E402


def head_to_head(result: dict, against: str | None) -> dict:
    """The arena's row "first agent − opponent" (the opponent: ``against``, or the only other spec)."""
    first = result["settings"]["agents"][0]
    rows = [row for row in result["head_to_head"] if row["a"] == first and against in (None, row["b"])]
    if len(rows) != 1:
        others = sorted({row["b"] for row in result["head_to_head"] if row["a"] == first})
        raise ValueError(f"{first} has no single opponent {against or ''} here; its opponents: {others}")
    return rows[0]


def read_result(path: Path) -> dict:
    """A ``result.json``, given itself or the ``--out`` directory that holds it."""
    file = path / "result.json" if path.is_dir() else path
    try:
        return json.loads(file.read_text())
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"{file}: not an arena result ({error})") from None


def pool(paths: list[Path], against: str | None = None) -> tuple[list[tuple[Path, int, dict]], dict]:
    """Each arena's (path, units, head-to-head row) and the pooled difference over them."""
    arenas, variants = [], set()
    for path in paths:
        result = read_result(path)
        variants.add(result["settings"]["variant"])
        arenas.append((path, result["settings"]["units"], head_to_head(result, against)))
    opponents = {row["b"] for _, _, row in arenas}
    for kind, seen in (("variants", variants), ("opponents", opponents)):
        if len(seen) != 1:
            raise ValueError(f"the arenas have different {kind}: {sorted(seen)}")
    return arenas, pooled([row["difference"] for _, _, row in arenas])


def markdown(arenas: list[tuple[Path, int, dict]], total: dict) -> str:
    lines = [f"Against `{arenas[0][2]['b']}`:", "", "| arena | first agent | units | a − b [95% CI] |",
             "|---|---|---|---|"]
    lines += [f"| {path} | `{row['a']}` | {units} | {text(row['difference'])} |" for path, units, row in arenas]
    units = sum(units for _, units, _ in arenas)
    count = f"{len(arenas)} arena" + ("s" if len(arenas) != 1 else "")
    lines.append(f"| **pooled**, {count} | | {units} | **{text(total)}** |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("arenas", nargs="+", type=Path, help="manni arena --out directories or their result.json")
    parser.add_argument("--against", help="the opponent's spec, where an arena has more than one")
    parser.add_argument("--out", type=Path, help="also write the table to this Markdown file")
    args = parser.parse_args(argv)
    try:
        table = markdown(*pool(args.arenas, args.against))
        if args.out:
            write_text(args.out, table)
    except (ValueError, OSError) as error:
        parser.exit(2, f"pool_arenas: error: {error}\n")
    print(table, end="")


if __name__ == "__main__":
    main()
