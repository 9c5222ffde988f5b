"""FLEXI's output folders re-scored at parity with its released evaluator (:mod:`~.scorer`)."""
