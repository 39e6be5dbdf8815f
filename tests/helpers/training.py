"""A tiny ``manni train`` command line, for the tests that train for a few steps."""

from __future__ import annotations


def train_args(tmp_path, *extra: str) -> list[str]:
    """``manni train`` of Basic Manni (target 5) for 200 steps of a tiny network into
    ``tmp_path/records``, without evaluations or a progress bar; ``extra`` arguments come last
    (and so win)."""
    return ["train", "--variant", "basic", "--target", "5", "--total-steps", "200", "--num-envs", "8",
            "--num-steps", "16", "--hidden", "16", "--eval-every", "0", "--eval-deals", "4",
            "--final-eval-deals", "0", "--bc-epochs", "1", "--torch-threads", "1", "--no-overlap",
            "--no-progress-bar", "--runs-dir", str(tmp_path), "--run-name", "records", *extra]
