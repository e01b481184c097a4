"""Where a capture is filed: its inbox item's `filedBucket` is the truth, and the four bucket
containers converge to it, whoever wrote last and whatever died half way.

Any writer of a capture (the classifier, a pick, an answer, an edit, DELETE, the delayed
check) saves the inbox item first (ETag-guarded) and then calls `converge`. One pass makes the
buckets say what the version in hand says: the filed item of its outcome in `filedBucket`, as
its details and the user's edits there say (the filed item is made from the inbox item
alone), nothing in the others, nothing at all for a deleted capture. Then it reads the inbox
item again: if someone saved meanwhile, its pass may have undone their work, so it passes
again on their version. A pass that acted on an old version is always followed by one on the
newest, so the last write to each bucket is made from the newest version: the buckets end as
the truth says.
"""

from __future__ import annotations

import logging
from typing import Any

from shared.domain.capture import InboxItem
from shared.domain.classification import Bucket, excerpt_to_classify
from shared.domain.details import details_for
from shared.domain.filed import FILED_MODELS, FiledItem
from shared.domain.ports import CaptureRepository

log = logging.getLogger(__name__)

# Each extra pass means another writer saved during ours, and that writer converges too.
PASSES = 5


async def converge(
    user_id: str, capture_id: str, repo: CaptureRepository, known: InboxItem | None = None
) -> InboxItem | None:
    """Make the buckets agree with the inbox item (`known`: the version just saved or read,
    else read now). Returns the version they agree with: None or a tombstone when deleted."""
    item = known if known is not None else await repo.get(user_id, capture_id)
    for _ in range(PASSES):
        await _match(user_id, capture_id, item, repo)
        latest = await repo.get(user_id, capture_id)
        if _same_version(latest, item):
            return latest
        item = latest
    # Still changing: whoever is changing it converges after its own save.
    log.warning("capture %s kept changing while its buckets were matched", capture_id)
    return item


def filed_item_for(settled: InboxItem) -> FiledItem:
    """The filed item of `settled`'s outcome, made from the inbox item alone: the same
    document whenever and by whomever it is made."""
    assert settled.filed_bucket is not None and settled.title is not None
    text = settled.text_to_classify()
    held = settled.holds_details
    details = _held_details(settled) if held else _legacy_details(settled, text)
    return FILED_MODELS[settled.filed_bucket](
        id=settled.id,
        user_id=settled.user_id,
        inbox_item_id=settled.id,
        title=settled.title,
        text=text,
        confidence=settled.confidence or 0.0,
        source=settled.source,
        settled_at=settled.settled_at,
        # The capture's own time: a bucket lists what was said newest first, not when filed.
        created_at=settled.created_at,
        **details,
    )


def _held_details(settled: InboxItem) -> dict[str, Any]:
    details: dict[str, Any] = {
        "people": settled.people or [],
        "due_date": settled.due_date,
        "done": bool(settled.done),
    }
    # A follow-up and a one-liner are the title, as edited; a next action is the user's own.
    if settled.filed_bucket is Bucket.PEOPLE:
        details["follow_up"] = settled.title
    elif settled.filed_bucket is Bucket.PROJECTS:
        details["next_action"] = settled.next_action
    elif settled.filed_bucket is Bucket.IDEAS:
        details["one_liner"] = settled.title
    return details


def _legacy_details(settled: InboxItem, text: str) -> dict[str, Any]:
    """A capture settled before its inbox item held the details: read from its words again,
    what a model read standing."""
    assert settled.filed_bucket is not None and settled.title is not None
    # Relative dates ("tomorrow") are read from the day they were said, not the day of a repair.
    today = settled.words_day()
    # The rules read what the classifier read (a long capture's start and end).
    details = details_for(settled.filed_bucket, excerpt_to_classify(text), settled.title, today)
    if settled.people:
        details["people"] = settled.people
    if settled.due_date is not None:
        details["due_date"] = settled.due_date
    return details


def agrees(filed: FiledItem, settled: InboxItem) -> bool:
    """Whether `filed` is what `settled` says its filed item is. A capture whose inbox item
    holds no details (settled before it did) agrees with any filed item of its outcome: the
    user may have edited that one, and it is all there is of the edit."""
    if filed.bucket is not settled.filed_bucket or filed.settled_at != settled.settled_at:
        return False
    if not settled.holds_details:
        return True
    fresh = filed_item_for(settled)
    return filed.model_dump(exclude={"etag"}) == fresh.model_dump(exclude={"etag"})


async def _match(
    user_id: str, capture_id: str, item: InboxItem | None, repo: CaptureRepository
) -> None:
    truth = None if item is None or item.is_deleted else item.filed_bucket
    for bucket in Bucket:
        if bucket is not truth:
            await repo.delete_filed(user_id, bucket, capture_id)
            continue
        assert item is not None
        filed = await repo.get_filed(user_id, bucket, capture_id)
        # The user's edits are in the inbox item: a filed item that says otherwise is behind.
        if filed is None or not agrees(filed, item):
            await repo.put_filed(filed_item_for(item))


def _same_version(a: InboxItem | None, b: InboxItem | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.etag is not None and a.etag == b.etag
