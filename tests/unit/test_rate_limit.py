"""The per-user token bucket, on a clock the test moves."""

from __future__ import annotations

import pytest

from shared.http.problems import Problem
from shared.http.rate_limit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def refused_after(limiter: RateLimiter, caller: str) -> tuple[int, int]:
    """How many requests pass before the first 429, and that 429's Retry-After."""
    passed = 0
    while True:
        try:
            limiter.check(caller)
        except Problem as refused:
            assert refused.status == 429 and refused.code == "RATE_LIMITED"
            return passed, int(refused.headers["Retry-After"])
        passed += 1


def test_a_burst_then_the_sustained_rate() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=30, burst=5, clock=clock)
    assert refused_after(limiter, "alice") == (5, 2)  # one token every 2 s
    clock.now += 2
    assert refused_after(limiter, "alice") == (1, 2)
    clock.now += 600  # a long pause refills to the burst, no further
    assert refused_after(limiter, "alice") == (5, 2)


def test_callers_do_not_share_a_budget() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=60, burst=2, clock=clock)
    assert refused_after(limiter, "alice") == (2, 1)
    assert refused_after(limiter, "bob") == (2, 1)


def test_retry_after_rounds_up_and_zero_turns_it_off() -> None:
    clock = Clock()
    limiter = RateLimiter(per_minute=7, burst=1, clock=clock)
    assert refused_after(limiter, "a") == (1, 9)  # 60/7 = 8.57 s
    off = RateLimiter(per_minute=0, burst=1, clock=clock)
    for _ in range(1000):
        off.check("a")


def test_memory_stays_bounded_by_forgetting_idle_callers(monkeypatch) -> None:
    monkeypatch.setattr("shared.http.rate_limit._MAX_TRACKED", 100)
    clock = Clock()
    limiter = RateLimiter(per_minute=60, burst=3, clock=clock)
    for i in range(1000):
        limiter.check(f"user{i}")
        clock.now += 0.01
    assert len(limiter._buckets) <= 100
    with pytest.raises(Problem):  # the busy caller is still remembered
        for _ in range(3):
            limiter.check("user999")
