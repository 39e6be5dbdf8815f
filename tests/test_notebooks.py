"""The notebooks run top to bottom (in fast mode: ``MANNI_FAST=1``), on this source tree."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

pytestmark = pytest.mark.slow


def test_the_notebooks_exist_with_outputs():
    assert {p.name for p in NOTEBOOKS} >= {"quickstart.ipynb", "train_and_evaluate.ipynb", "your_own_algorithm.ipynb"}
    for path in NOTEBOOKS:  # committed executed (fast mode), so they read like a page
        code = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
        assert all(cell.get("execution_count") for cell in code) and any(cell.get("outputs") for cell in code)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("MANNI_FAST", "1")  # the kernel inherits this process's environment
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))  # this tree
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in notebook.cells for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    warned = [o["text"] for o in outputs if o.get("name") == "stderr" and "Warning" in o.get("text", "")]
    assert not warned  # neither Gymnasium's "out of date" nor tqdm's "IProgress not found"
