"""The version of duplexeval (read by the build backend and recorded in every output)."""

__version__ = "0.1.0"
