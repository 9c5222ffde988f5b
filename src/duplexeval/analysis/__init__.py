"""Turning audio into timestamped speech: voice activity (and, later, ASR)."""
