"""The weekly review's two sentences by the model: one chat call with the prompt in
prompts/review_summary.txt and the review's figures as JSON. Any failure is None (the service
falls back to the rules' summary): a review is never refused for want of a model."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from shared.domain.digest import Review

if TYPE_CHECKING:
    import openai
    from openai.types import CompletionUsage

log = logging.getLogger(__name__)

PROMPT = (Path(__file__).parent / "prompts" / "review_summary.txt").read_text()
# Two sentences: far more than they take, so a model that rambles is cut rather than waited for.
MAX_COMPLETION_TOKENS = 120
MAX_SUMMARY_CHARS = 400


def review_facts(review: Review) -> str:
    """What the model is told: counts and titles, never the captures' text."""
    return json.dumps(
        {
            "week": review.week,
            # The total given, so that a sentence naming it agrees with the parts.
            "capturesTotal": review.captures_total,
            "capturesPerBucket": review.captures_per_bucket,
            "quietProjects": [p.title for p in review.quiet_projects],
            "ideas": [i.title for i in review.ideas],
            "questionsWaiting": [q.title for q in review.questions],
        },
        ensure_ascii=False,
    )


class OpenAIReviewSummarizer:
    def __init__(
        self,
        client: openai.AsyncOpenAI,
        model: str,
        on_usage: Callable[[CompletionUsage], None] | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._on_usage = on_usage

    async def summarize(self, review: Review) -> str | None:
        import openai

        try:
            completion = await self._client.chat.completions.create(
                model=self._model,
                messages=[
                    {"role": "system", "content": PROMPT},
                    {"role": "user", "content": review_facts(review)},
                ],
                max_completion_tokens=MAX_COMPLETION_TOKENS,
            )
        except openai.OpenAIError as err:
            log.warning("review summary: model call failed (%s)", type(err).__name__)
            return None
        if completion.usage is not None and self._on_usage is not None:
            self._on_usage(completion.usage)
        choice = completion.choices[0] if completion.choices else None
        text = " ".join((choice.message.content or "").split()) if choice else ""
        if choice is None or not text or choice.finish_reason != "stop":
            return None
        return text[:MAX_SUMMARY_CHARS]
