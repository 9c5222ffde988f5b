"""Systems under test: the interface, built-in systems and adapters."""
