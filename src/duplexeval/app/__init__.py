"""The application layer beside :mod:`duplexeval.cli`: the jobs a command starts that span every
stage (the demo: suites, plans, runs, analysis, the timing table)."""
