"""Reports: text tables (and, next, the HTML report) built from scored results."""
