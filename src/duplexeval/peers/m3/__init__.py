"""The official M3-DuplexBench pipeline's output folders re-scored by duplexeval's M3 rules
(:mod:`~.outputs`; ``duplexeval score --m3``)."""
