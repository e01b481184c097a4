"""The events feed told from the inbox item: every way a capture can move between two polls is
a valid AG-UI run, failures included (a step the feed opened is closed before RUN_ERROR)."""

from __future__ import annotations

import pytest
from ag_ui_validate.pytest_plugin import assert_valid_agui

from shared.domain.capture import InboxItem, Status
from shared.services.agui import run_started
from shared.services.feed import Stage, events_between


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
