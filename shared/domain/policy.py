"""The settings the use cases follow, as one value the composition root hands them with the
adapters (shared/bootstrap.py builds it from the app settings): no service reads settings."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Policy(BaseModel):
    model_config = ConfigDict(frozen=True)

    # When a write's safety-net check comes due (RECOVERY_DELAY_S).
    recovery_delay_s: float
    # When readers of captures-outcomes see an outcome (PUSH_DELAY_S).
    push_delay_s: float
    # How long a voice note's upload URL lives, and how long its audio may come after.
    upload_url_ttl_s: float
    upload_grace_s: float
    # The events feed: how many a user holds on an instance, when it gives up, how often it
    # reads the capture while it moves.
    max_feeds_per_user: int
    events_timeout_s: float
    events_poll_s: float
