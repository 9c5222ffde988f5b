"""Counting what judging cost: requests, retries, cached answers and tokens, and money when
prices are given.

Conventions: tokens are the usage the server reported for requests actually made in this run
(cached answers cost nothing and are counted apart).  :class:`Prices` are in US dollars per
token; without them no cost is shown, never an estimate.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

__all__ = ["Prices", "UsageMeter"]


@dataclass(frozen=True)
class Prices:
    """US dollars per prompt token and per completion token."""

    prompt: float
    completion: float


class UsageMeter:
    """Thread-safe running totals for one judge."""

    def __init__(self, judge_model: str, prices: Prices | None = None) -> None:
        self.judge_model = judge_model
        self.prices = prices
        self.requests = 0
        self.retries = 0
        self.cached = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._lock = threading.Lock()

    def add_call(self, attempts: int, prompt_tokens: int, completion_tokens: int) -> None:
        """One item requested: ``attempts`` HTTP requests, and the answer's usage (0 when the
        call failed)."""
        with self._lock:
            self.requests += attempts
            self.retries += max(0, attempts - 1)
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens

    def add_cached(self) -> None:
        """One item answered from the cache."""
        with self._lock:
            self.cached += 1

    @property
    def cost(self) -> float | None:
        """US dollars for the tokens counted, or ``None`` without prices."""
        if self.prices is None:
            return None
        return (self.prompt_tokens * self.prices.prompt
                + self.completion_tokens * self.prices.completion)

    def summary(self) -> str:
        """One line, e.g. ``judge m: 12 requests (3 retries), 5 cached; 900 prompt + 120
        completion tokens; cost $0.0012``."""
        cost = self.cost
        money = f"; cost ${cost:.4f}" if cost is not None else "; cost not computed (no prices)"
        return (f"judge {self.judge_model}: {self.requests} requests ({self.retries} retries), "
                f"{self.cached} cached; {self.prompt_tokens} prompt + "
                f"{self.completion_tokens} completion tokens{money}")
