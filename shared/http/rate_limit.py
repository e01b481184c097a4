"""Per-user request budgets: a token bucket per caller, kept in this instance's memory.

Each Functions instance counts on its own, so with N instances a user may reach N times the
budget. That bounds what one leaked key can do to the model bill and the database without a
shared store on every request's path; see SECURITY.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from shared.http.problems import Problem

# Buckets that have refilled completely carry no state worth keeping; past this many
# callers they are dropped, so memory stays bounded however many principals appear.
_MAX_TRACKED = 10_000


@dataclass
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """`per_minute` requests a minute on average, up to `burst` at once; 0 turns it off."""

    def __init__(
        self, per_minute: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = max(1, burst)
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def check(self, caller: str) -> None:
        """Take one request from `caller`'s budget, or raise a 429 saying when to come back."""
        if self.rate <= 0:
            return
        now = self._clock()
        bucket = self._buckets.get(caller)
        if bucket is None:
            if len(self._buckets) >= _MAX_TRACKED:
                self._forget_idle(now)
            bucket = self._buckets[caller] = _Bucket(tokens=self.burst, updated=now)
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.updated) * self.rate)
        bucket.updated = now
        if bucket.tokens < 1:
            wait = math.ceil((1 - bucket.tokens) / self.rate)
            raise Problem(
                429,
                "Too many requests. Please slow down.",
                code="RATE_LIMITED",
                headers={"Retry-After": str(wait)},
            )
        bucket.tokens -= 1

    def _forget_idle(self, now: float) -> None:
        full = [
            caller
            for caller, b in self._buckets.items()
            if b.tokens + (now - b.updated) * self.rate >= self.burst
        ]
        for caller in full or list(self._buckets)[: len(self._buckets) // 2]:
            del self._buckets[caller]
