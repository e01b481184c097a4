"""The weekly review's summary by the model, against the scripted OpenAI server: one call with
the prompt of shared/adapters/prompts/ and the week's figures (titles and counts, never the
captures' text); any failure is None, so the review falls back to the rules."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date
from typing import TYPE_CHECKING

import pytest

from shared.adapters.review_summary import PROMPT, OpenAIReviewSummarizer
from shared.domain.digest import DigestEntry, Review
from shared.domain.documents import utcnow
from testkit.fake_openai import FakeOpenAI, completion, http_error

if TYPE_CHECKING:
    import openai

REVIEW = Review(
    week="2026-W13",
    start=date(2026, 3, 23),
    end=date(2026, 3, 29),
    time_zone="Europe/London",
    captures_per_bucket={"People": 1, "Projects": 2, "Ideas": 0, "Admin": 3, "unfiled": 0},
    quiet_projects=[DigestEntry(id="p", bucket="Projects", title="Shed roof", created_at=utcnow())],
    ideas=[],
    questions=[],
    summary="",
    summary_by="rules",
)


@pytest.fixture
async def client(fake: FakeOpenAI) -> AsyncIterator[openai.AsyncOpenAI]:
    client = fake.openai_client()
    yield client
    await client.close()


async def test_one_call_with_the_prompt_and_the_figures(
    fake: FakeOpenAI, client: openai.AsyncOpenAI
) -> None:
    fake.reset()
    fake.enqueue(completion("A busy week on admin.  The shed roof has gone quiet."))
    usage = []
    summarizer = OpenAIReviewSummarizer(client, "gpt-4o-mini", usage.append)
    summary = await summarizer.summarize(REVIEW)
    assert summary == "A busy week on admin. The shed roof has gone quiet."
    (request,) = fake.requests
    system, user = request.messages
    assert system == {"role": "system", "content": PROMPT}
    facts = json.loads(user["content"])
    assert facts["quietProjects"] == ["Shed roof"] and facts["capturesPerBucket"]["Admin"] == 3
    assert facts["capturesTotal"] == sum(facts["capturesPerBucket"].values())
    assert request.json["max_completion_tokens"] == 120
    assert len(usage) == 1 and usage[0].prompt_tokens > 0


async def test_a_failed_or_cut_answer_is_none(fake: FakeOpenAI, client: openai.AsyncOpenAI) -> None:
    fake.reset()
    fake.enqueue(http_error(500), completion("Half a sent", finish_reason="length"))
    summarizer = OpenAIReviewSummarizer(client, "gpt-4o-mini")
    assert await summarizer.summarize(REVIEW) is None
    assert await summarizer.summarize(REVIEW) is None
