"""Runs: executing a plan into a run directory, and reading one back.

:func:`open_run` is the documented way into a run directory (its files are described in
:mod:`duplexeval.runs._directory`)::

    from duplexeval.runs import open_run

    run = open_run("runs/cascade-multi-gen")
    config = run.read_config()          # system, capabilities, dataset, versions
    rows = run.read_metadata()          # one row per finished sample
    record = run.read_record(rows[0].sample_id, rows[0].event_id)   # trace, seed, frames

:func:`execute_run` runs a plan's work units (:mod:`duplexeval.runs._units`) on an executor:
:class:`LocalExecutor` (in process, the default), :class:`ProcessExecutor` (a pool of worker
processes on this machine, :mod:`duplexeval.runs._pool_executor`) or :class:`DaskExecutor` (a
Dask cluster, :mod:`duplexeval.runs._dask_executor`); the run directory comes out the same.
"""

from duplexeval.runs._dask_executor import DaskExecutor
from duplexeval.runs._directory import (
    AnalysisFiles,
    MetadataRow,
    RunConfigFile,
    RunDir,
    RunSummary,
    SampleRecord,
    ScoreFiles,
    open_run,
)
from duplexeval.runs._execution import (
    Executor,
    LocalExecutor,
    RunConfig,
    RunResult,
    dataset_hash,
    execute_run,
    summary_lines,
)
from duplexeval.runs._pool_executor import ProcessExecutor

__all__ = [
    "AnalysisFiles",
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "MetadataRow",
    "ProcessExecutor",
    "RunConfig",
    "RunConfigFile",
    "RunDir",
    "RunResult",
    "RunSummary",
    "SampleRecord",
    "ScoreFiles",
    "dataset_hash",
    "execute_run",
    "open_run",
    "summary_lines",
]
