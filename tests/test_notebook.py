"""The example notebook runs in a fresh Jupyter kernel, shows its figure and returns frames."""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = Path(__file__).parents[1] / "examples" / "notebook_quickstart.ipynb"


def test_the_quickstart_notebook_runs_and_displays_its_figure():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    kinds = [set(o.get("data", {})) for o in outputs]
    # the frontier cell ends in an assignment: the figure shows because the kernel's inline
    # backend draws pyplot figures, with no %matplotlib inline in the notebook
    assert any("image/png" in k for k in kinds), kinds
    # the tables come back as DataFrames (an HTML table in Jupyter)
    assert sum("text/html" in k for k in kinds) >= 2, kinds
    src = "".join(c.source for c in nb.cells if c.cell_type == "code")
    assert "%matplotlib" not in src and "pyplot" not in src
