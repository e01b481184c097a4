"""Classify and file a stored capture: the one place a settled capture becomes documents.

Idempotent by construction: ids come from the capture, a settled capture is returned as
it is, and a move writes the new filed item, then the inbox item, then converges the buckets
to it (placement.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from shared import tracing
from shared.domain.capture import InboxItem
from shared.domain.classification import excerpt_to_classify
from shared.domain.errors import CaptureDeleted, StaleItem, StorageUnavailable
from shared.domain.outcomes import FailureCode
from shared.domain.ports import CaptureRepository, Classifier, Embedder, Outbox
from shared.services.answers import settled_on_answer
from shared.services.embedding import carrying, vector_for, with_embedding
from shared.services.placement import converge, filed_item_for

log = logging.getLogger(__name__)


async def classify_and_file(
    item: InboxItem,
    repo: CaptureRepository,
    classifier: Classifier,
    outbox: Outbox,
    *,
    publish: bool = True,
    embedder: Embedder | None = None,
) -> InboxItem:
    """One model call (two for an answer that says little by itself), then file, with the
    capture's vector (`embedder`; services/embedding.py) written in the same save. Raises
    ClassifierUnavailable when the model cannot answer. `publish=False`: the caller tells the
    outcome (a live run holds it for its stream).

    The vector is of the very words the classifier is asked, asked for at the same time:
    inside the model's wait. With Azure OpenAI the two calls run side by side; offline too
    (the classifier's multilingual-e5-small and the embedder's MiniLM, on two threads), and
    where the classifier runs on MiniLM as well the one loaded model makes one forward pass
    for both (encoders/minilm.py)."""
    if item.is_deleted:
        raise CaptureDeleted(item.id)
    if item.is_settled:
        return item  # a retry or a duplicate delivery: it was filed once already
    text = item.text_to_classify()
    if not text:
        raise ValueError(f"capture {item.id} has no text to classify")
    with tracing.span("classify"):
        if item.clarifications:
            known = await _known_people(item.user_id, repo)
            answered = await settled_on_answer(item, classifier, known)
            settled = await with_embedding(answered, embedder)
            return await file_capture(item, settled, repo, outbox, publish=publish)
        guess, embedded, known = await asyncio.gather(
            classifier.classify(excerpt_to_classify(text), said_on=item.words_day()),
            vector_for(item, embedder),
            _known_people(item.user_id, repo),
        )
    try:
        settled = carrying(item.classified(guess, known), embedded, embedder)
        return await file_capture(item, settled, repo, outbox, publish=publish)
    except StaleItem:
        # Marked queued meanwhile (a run handing the capture over while the worker already
        # had it): the same words still waiting get the same answer, with no second model call.
        current = await repo.get(item.user_id, item.id)
        if current is None or not current.may_be_classified() or current.clarifications:
            raise
        if current.text_to_classify() != text:
            raise
        settled = carrying(current.classified(guess, known), embedded, embedder)
        return await file_capture(current, settled, repo, outbox, publish=publish)


async def _known_people(user_id: str, repo: CaptureRepository) -> frozenset[str]:
    """The names the user's filed items said with a person's cue, for the people rules; none
    when the store cannot say now: they refine a capture's people, never block its filing."""
    try:
        return await repo.known_people(user_id)
    except StorageUnavailable:
        log.warning("known people unavailable for a capture; read without them")
        return frozenset()


async def file_capture(
    item: InboxItem,
    settled: InboxItem,
    repo: CaptureRepository,
    outbox: Outbox,
    *,
    publish: bool = True,
) -> InboxItem:
    """Store `settled` (`item` after `classified` or `picked`): the filed item, then the inbox
    item (ETag-guarded), then remove filed items the capture no longer has. The classifier
    yields to whoever settled the capture first; the user's choice does not (StaleItem
    propagates, and the caller reads again and retries)."""
    with tracing.span("file capture"):
        saved = await _file(item, settled, repo, outbox, publish)
        assert saved.outcome is not None
        outcome = saved.outcome.value
        tracing.annotate(capture_id=saved.id, user_id=saved.user_id, outcome=outcome)
    # Ids, outcome and bucket only: the title is the model's summary of what was said.
    log.info("capture %s: %s, bucket %s", saved.id, outcome, saved.filed_bucket or "none")
    return saved


async def _file(
    item: InboxItem,
    settled: InboxItem,
    repo: CaptureRepository,
    outbox: Outbox,
    publish: bool,
) -> InboxItem:
    by_user = settled.chosen_by == "user"
    try:
        if settled.filed_bucket is None:
            saved = await repo.save(settled)
        elif by_user or item.filed_bucket is not None:
            # The filed item first: a crash after it and before the save leaves an extra copy
            # that the delayed check removes, never a filed capture with nothing in its bucket.
            await repo.put_filed(filed_item_for(settled))
            saved = await repo.save(settled)
        else:
            saved = await _first_filing(settled, repo)
    except StaleItem:
        # Someone saved first: theirs is the truth, and what we wrote goes unless it agrees.
        current = await converge(item.user_id, item.id, repo)
        if current is None or current.is_deleted:
            raise CaptureDeleted(item.id) from None
        if by_user or not current.is_settled:
            raise
        # A duplicate delivery or a retried request settled it first: theirs stands.
        return current
    # A capture filed for the first time has nothing elsewhere to remove. A move, or a pick
    # (which may be re-running a move interrupted anywhere), converges every bucket.
    told = saved
    if by_user or item.filed_bucket not in (None, settled.filed_bucket):
        current = await converge(saved.user_id, saved.id, repo, known=saved)
        if current is None or current.is_deleted:
            raise CaptureDeleted(item.id)
        # Someone may have moved it since: the caller tells where it really is.
        told = current if current.has_ended else saved
    if publish:
        outbox.publish(saved)
    return told


async def _first_filing(settled: InboxItem, repo: CaptureRepository) -> InboxItem:
    """The classifier filing a capture for the first time: its filed item and its save side by
    side, one storage round trip after the model instead of two (a text capture's time over
    the model, issue 42). Both have landed, or failed, when this returns, so whoever reads
    the capture after it finds its filed item. A crash between the two may leave the save
    without the filed item: the capture's check (a live run's, held until its outcome is
    delivered; or the worker's own job, delivered again) converges it, as it removes the extra
    copy the other order leaves."""
    put, save = await asyncio.gather(
        repo.put_filed(filed_item_for(settled)), repo.save(settled), return_exceptions=True
    )
    if isinstance(save, BaseException):
        raise save  # a StaleItem is converged by the caller, after the filed item's write
    if isinstance(put, BaseException):
        # Saved, but its bucket lacks it: once more, from what was saved.
        log.warning("capture %s: its filed item was written again", settled.id)
        await repo.put_filed(filed_item_for(save))
    return save


async def fail(
    item: InboxItem, code: FailureCode, repo: CaptureRepository, outbox: Outbox
) -> InboxItem:
    """Save `item` failed with `code` and publish the failure, as an outcome is published, so
    that a user who left is told. If the item changed since it was read, the stored one stands
    (and nothing is published: whoever changed it tells its own story)."""
    try:
        saved = await repo.save(item.failed(code))
    except StaleItem:
        return await repo.get(item.user_id, item.id) or item
    outbox.publish(saved)
    return saved


async def record(
    item: InboxItem, change: Callable[[InboxItem], InboxItem], repo: CaptureRepository
) -> InboxItem:
    """Save `change(item)`, a lifecycle transition that is not an outcome (transcribing,
    queued, failed). If the item changed since it was read, the stored one stands and is
    returned."""
    try:
        return await repo.save(change(item))
    except StaleItem:
        return await repo.get(item.user_id, item.id) or item
