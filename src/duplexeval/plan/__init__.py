"""Plans: the evaluation samples of a dataset under each protocol, their fork points and costs.

:func:`build_plan` turns dialogues and :class:`PlanOptions` into a :class:`Plan` of
:class:`Sample` s under an :class:`EvalProtocol` (Single, Multi (gen), Multi (ref)); the rules
are those of the official M3 code (:mod:`duplexeval.plan._samples`).  Suites use a plan's costs
to choose their quick subsets, runs execute it.
"""

from duplexeval.plan._samples import (
    SAMPLE_JSON_KEYS,
    EvalProtocol,
    Plan,
    PlanOptions,
    PlanStats,
    Sample,
    build_plan,
    plan_dialogue,
    split_passes,
)

__all__ = ["SAMPLE_JSON_KEYS", "EvalProtocol", "Plan", "PlanOptions", "PlanStats", "Sample",
           "build_plan", "plan_dialogue", "split_passes"]
