"""The Prefer request header (RFC 7240): how long a client is willing to wait for an answer."""

from __future__ import annotations

import re

# Without a preference a capture is waited for this long; no client is kept longer than the
# most (a capture that takes longer is answered 202 and can be read, or followed, later).
DEFAULT_WAIT_S = 10
MOST_WAIT_S = 30

_WAIT = re.compile(r"wait\s*=\s*\"?(\d{1,6})\"?", re.IGNORECASE)
_ASYNC = re.compile(r"respond-async", re.IGNORECASE)


def preferred_wait_s(prefer: str | None) -> int:
    """The seconds to wait: `wait=N` (capped at MOST_WAIT_S), else 0 for `respond-async`, else
    DEFAULT_WAIT_S. A preference that cannot be read is ignored, as the RFC asks."""
    for preference in (prefer or "").split(","):
        token = preference.split(";")[0].strip()
        match = _WAIT.fullmatch(token)
        if match:
            return min(int(match[1]), MOST_WAIT_S)
    if any(_ASYNC.fullmatch(p.split(";")[0].strip()) for p in (prefer or "").split(",")):
        return 0
    return DEFAULT_WAIT_S
