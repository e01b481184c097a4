"""An ask told as an AG-UI run: the tools, then the answer with its citations on the message's
end and in RUN_FINISHED; a refusal mid-run as RUN_ERROR with its code, the answer's message
closed first."""

from __future__ import annotations

from collections.abc import AsyncIterator

from shared.agui.narrator import ask_run
from shared.domain.errors import Unavailable
from shared.services.ask_run import (
    Answer,
    Answered,
    AnswerText,
    AskProgress,
    Citation,
    ToolFinished,
    ToolStarted,
)

CITED = Citation(capture_id="c1", bucket=None, title="Tiles", quote="Kuba does the tiles")


async def told(steps: list[AskProgress | Exception]) -> list[dict]:
    async def progress() -> AsyncIterator[AskProgress]:
        for step in steps:
            if isinstance(step, Exception):
                raise step
            yield step

    return [
        e.model_dump(mode="json", by_alias=True, exclude_none=True)
        async for e in ask_run("t", "r", progress())
    ]


async def test_tools_then_the_answer_with_its_citations() -> None:
    answer = Answer(answer="Kuba [1].", citations=[CITED])
    events = await told(
        [
            ToolStarted("c-1", "search", {"query": "tiles"}),
            ToolFinished("c-1", "search", {"items": []}),
            AnswerText("Kuba "),
            AnswerText("[1]."),
            Answered(answer),
        ]
    )
    assert [e["type"] for e in events] == [
        "RUN_STARTED",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert events[2]["delta"] == '{"query": "tiles"}'
    assert events[4]["toolCallId"] == "c-1" and events[4]["role"] == "tool"
    assert events[8]["metadata"]["citations"] == [answer.to_json()["citations"][0]]
    assert events[-1]["result"] == answer.to_json()


async def test_a_refusal_mid_answer_closes_the_message_and_ends_in_run_error() -> None:
    events = await told(
        [AnswerText("Kuba"), Unavailable("Storage is down.", "STORAGE_UNAVAILABLE")]
    )
    assert [e["type"] for e in events][-3:] == [
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_ERROR",
    ]
    assert events[-1]["code"] == "STORAGE_UNAVAILABLE"
