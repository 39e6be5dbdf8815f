"""Write (or check) the golden arena runs of tests/golden/arena/: seeded ``manni arena`` runs whose
game records and results must stay byte-identical while the code around them is reorganised.

Each run plays a few duplicate deals (or games) of a fixed lineup with a fixed seed through the
command line (whatever module the arena lives in) and keeps two files:

1. ``<name>.jsonl``: every game as ``manni-record/1`` JSON lines, as ``--records`` writes them;
2. ``<name>.json``: ``result.json`` as ``--out`` writes it, less the measured time per move
   (``ms_per_move``, the one field that depends on the machine).

tests/test_golden.py replays every run and compares both files byte for byte. An intended change
of an agent's play, the arena's seeding or the record format changes them: rewrite them with
``python tests/golden/make_arena_golden.py`` and review the diff; ``--check`` only compares.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent / "arena"

#: file stem -> the arguments of ``manni arena`` (agents, variant, units, seed, mode): every shipped
#: kind of player that needs no optional extra, in every variant, each run a second or two
RUNS: dict[str, list[str]] = {
    "hornafjardar": ["random", "rule_based", "pimc:worlds=2", "--deals", "3", "--seed", "7"],
    "basic": ["ppo", "rule_based", "random", "--variant", "basic", "--deals", "3", "--seed", "3"],
    "basic_negative": ["rule_based", "ppo:plain", "pimc:worlds=2,rollout=random", "--variant", "basic",
                       "--negative", "--deals", "2", "--seed", "11"],
    "trjamann": ["ppo", "pimc:worlds=2", "rule_based", "--variant", "trjamann", "--deals", "2", "--seed", "5"],
    "laugarvatn": ["rule_based", "random", "ppo", "--variant", "laugarvatn", "--mode", "games", "--deals", "1",
                   "--seed", "2"],
    "search": ["search:worlds=2", "rule_based", "rule_based", "--deals", "1", "--seed", "9"],
}
TIMED = "ms_per_move"


def play(name: str) -> tuple[str, str]:
    """The records and the result (without :data:`TIMED`) of run ``name``, as text."""
    with tempfile.TemporaryDirectory() as tmp:
        records, out = Path(tmp) / "records.jsonl", Path(tmp) / "out"
        command = [sys.executable, "-m", "manni_env.cli", "arena", *RUNS[name], "--no-progress",
                   "--records", str(records), "--out", str(out)]
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
        result = json.loads((out / "result.json").read_text())
        for agent in result["agents"]:
            agent.pop(TIMED)
        return records.read_text(), json.dumps(result, indent=2, sort_keys=True) + "\n"


def paths_of(name: str) -> tuple[Path, Path]:
    return HERE / f"{name}.jsonl", HERE / f"{name}.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    args = parser.parse_args(argv)
    HERE.mkdir(exist_ok=True)
    differ = []
    for name in RUNS:
        texts = play(name)
        for path, text in zip(paths_of(name), texts):
            if args.check:
                if not path.is_file() or path.read_text() != text:
                    differ.append(path.name)
            else:
                path.write_text(text)
    if differ:
        print("differ: " + ", ".join(differ), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
