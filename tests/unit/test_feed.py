"""The events feed told from the inbox item: every way a capture can move between two polls is
a valid AG-UI run, failures included (a step the feed opened is closed before RUN_ERROR)."""

from __future__ import annotations

import pytest
from ag_ui_validate.pytest_plugin import assert_valid_agui

from shared.agui.events import run_started
from shared.agui.narrator import events_between
from shared.domain.capture import InboxItem, Status
from shared.domain.progress import Stage
from shared.services.feed import FAST_FOR_S, SLOWEST_POLL_S, next_poll_s


def _item(source: str) -> InboxItem:
    return InboxItem(
        id="c",
        user_id="u",
        source=source,
        thread_id="t",
        run_id="r",
        status=Status.FAILED,
        error="CLASSIFY_FAILED",
    )


@pytest.mark.parametrize(
    ("source", "seen"),
    [
        ("text", Stage.CLASSIFYING),
        ("voice", Stage.WAITING),
        ("voice", Stage.TRANSCRIBING),
        ("voice", Stage.CLASSIFYING),
    ],
)
def test_a_failure_after_any_stage_ends_a_valid_run(source: str, seen: Stage) -> None:
    item = _item(source)
    shown = events_between(item, Stage.WAITING, seen)  # what the feed had sent before
    events = [run_started("t", "r"), *shown, *events_between(item, seen, Stage.FAILED)]
    dumped = [e.model_dump(mode="json", by_alias=True, exclude_none=True) for e in events]
    assert dumped[-1]["type"] == "RUN_ERROR" and dumped[-1]["code"] == "CLASSIFY_FAILED"
    assert_valid_agui(dumped, max_warnings=0)
    started = [e["stepName"] for e in dumped if e["type"] == "STEP_STARTED"]
    finished = [e["stepName"] for e in dumped if e["type"] == "STEP_FINISHED"]
    assert started == finished  # every step the feed opened is closed


def test_a_feed_polls_fast_while_the_capture_moves_then_backs_off_to_the_slowest() -> None:
    assert next_poll_s(0.2, quiet_s=0.0, fastest_s=0.2) == 0.2
    assert next_poll_s(1.5, quiet_s=FAST_FOR_S - 0.1, fastest_s=0.2) == 0.2  # a step resets
    waits, wait, quiet = [], 0.2, FAST_FOR_S
    for _ in range(10):
        wait = next_poll_s(wait, quiet, fastest_s=0.2)
        waits.append(wait)
        quiet += wait
    assert waits == sorted(waits) and waits[0] > 0.2
    assert waits[-1] == SLOWEST_POLL_S


def test_a_poll_setting_slower_than_the_backoff_is_kept() -> None:
    assert next_poll_s(5.0, quiet_s=60.0, fastest_s=5.0) == 5.0
