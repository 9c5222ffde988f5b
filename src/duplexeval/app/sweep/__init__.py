"""``duplexeval sweep``: a system run and scored over a condition's grid, with a table and a plot
per metric against the condition's strength (:mod:`duplexeval.app.sweep._run`; the grid's syntax:
:mod:`duplexeval.app.sweep._grid`; the table: :mod:`duplexeval.report._sweep`)."""

from duplexeval.app.sweep._grid import SweepGrid, SweepPoint, parse_grid
from duplexeval.app.sweep._run import SweepResult, run_sweep

__all__ = ["SweepGrid", "SweepPoint", "SweepResult", "parse_grid", "run_sweep"]
