"""Two filed captures about the office (one about cycling in, one a party) and what a question
over them cites: the small corpus the soft-match tests ask about."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.domain.classification import Bucket
from shared.services.ask import AskLimits, answer_of, ask, new_question
from shared.services.filing import file_capture
from tests.fakes import USER, Fakes, text_item

MON = datetime(2026, 11, 23, 9, tzinfo=UTC)
NOW = MON + timedelta(days=7)


async def file_text(fakes: Fakes, text: str, bucket: Bucket, day: int, title: str) -> str:
    item = fakes.repo.seed(text_item(text, created_at=MON + timedelta(days=day, hours=1)))
    filed = await file_capture(item, item.picked(bucket, title), fakes.repo, fakes.outbox)
    return filed.id


async def office(fakes: Fakes) -> dict[str, str]:
    return {
        "cycling": await file_text(
            fakes, "Cycling to the office from next week.", Bucket.IDEAS, 0, "Cycle in"
        ),
        "party": await file_text(
            fakes, "Office party on Friday, bring a bottle.", Bucket.ADMIN, 1, "Office party"
        ),
    }


async def cited(fakes: Fakes, text: str) -> list[str]:
    done = await answer_of(ask(USER, new_question(text), NOW, AskLimits(), fakes.adapters))
    return [c.capture_id for c in done.answer.citations]
