"""The timing metric variants, one module each with its rules beside it: ``m3`` (the official
M3 code's), ``flexi`` (FLEXI's, :mod:`~.flexi_rules`), ``mtr`` (MTR-DuplexBench's,
:mod:`~.mtr_rules`) and ``fdb-v1`` (Full-Duplex-Bench v1's, :mod:`~.fdb_rules`).  The interface
they implement is :class:`duplexeval.metrics._base.TimingVariant`."""
