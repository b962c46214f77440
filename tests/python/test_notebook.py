"""notebooks/explore.ipynb runs headless, top to bottom, on a small run."""

from __future__ import annotations

import nbformat
from nbclient import NotebookClient

from conftest import ROOT

NOTEBOOK = ROOT / "notebooks" / "explore.ipynb"


def test_explore_notebook_runs(out_dir, monkeypatch):
    monkeypatch.setenv("PAIRPIPE_OUT", str(out_dir))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT)}},
    )
    client.execute()  # raises CellExecutionError on the first failing cell

    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []
    images = sum(
        "image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs
    )
    # category bars, length histograms, the expansion boxes when IR is filled,
    # the token histogram and context-fit bars when the run counts tokens,
    # and the features per category
    assert images >= 6, f"expected the six plots, got {images} images"
