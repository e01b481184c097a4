"""A capture reopened with the person's typed answer, settled on what the answer says: a bucket
it names is where it goes (the person's pick); an answer that explains is classified on its own
first (and under the capture's words when they were only a heading, "marek"), with the earlier
words only as context, so gibberish before it cannot drag it down."""

from __future__ import annotations

from shared.domain.answers import read_answer, title_of
from shared.domain.capture import InboxItem
from shared.domain.classification import Classification, excerpt_to_classify
from shared.domain.outcomes import Outcome, decide
from shared.domain.ports import Classifier


async def settled_on_answer(
    item: InboxItem, classifier: Classifier, known: frozenset[str] = frozenset()
) -> InboxItem:
    """`item` (status received, its latest clarification the answer) settled: picked where the
    answer says, or classified (`known`: the user's people, as `InboxItem.classified` takes
    them)."""
    answer = item.clarifications[-1].text
    reading = read_answer(answer)
    if reading.bucket is not None:
        return item.picked(reading.bucket, _title_for_pick(item, reading.rest))
    said_on = item.words_day()
    alone = await classifier.classify(excerpt_to_classify(reading.rest), said_on=said_on)
    if decide(alone) is Outcome.CLASSIFIED:
        return item.classified(alone, known)
    heading = _heading(item)
    if heading:
        # Read as one capture written at once ("marek - pay his invoice by friday"): a bare
        # name or topic asked about is the heading of what the answer says.
        headed = await classifier.classify(
            excerpt_to_classify(f"{heading} - {reading.rest}"), said_on=said_on
        )
        alone = _better(alone, headed).model_copy(update={"title": alone.title})
        if decide(alone) is Outcome.CLASSIFIED:
            return item.classified(alone, known)
    # The whole story, the answer first: it may help an answer that says little by itself.
    together = await classifier.classify(
        excerpt_to_classify(item.text_to_classify()), said_on=said_on
    )
    return item.classified(_better(alone, together), known)


# A capture of at most this many words ("marek", "tía loli", "gas meters") names whom or what
# it is about but not what to do: the answer to its question says that.
_HEADING_WORDS = 3


def _heading(item: InboxItem) -> str:
    """The capture's own words when they are only a heading (a name or a topic) and this is
    the first answer to it, else "" (a second answer is read with the first)."""
    if len(item.clarifications) != 1:
        return ""
    words = [w for w in (item.text or "").split() if any(ch.isalnum() for ch in w)]
    return " ".join(words) if 0 < len(words) <= _HEADING_WORDS else ""


def _better(alone: Classification, together: Classification) -> Classification:
    """The better-supported guess, titled after the answer when the answer could be read."""
    better = together if _support(together) > _support(alone) else alone
    title = alone.title if alone.bucket is not None else better.title
    return better.model_copy(update={"title": title})


def _support(c: Classification) -> float:
    return c.confidence if c.bucket is not None else -1.0


def _title_for_pick(item: InboxItem, rest: str) -> str:
    """What was said, never the bucket's name: the rest of the answer; else, as for a pick by
    button, the title of a capture that was filed provisionally; else the words before."""
    if rest:
        return title_of(rest)
    if item.filed_bucket is not None and item.title:
        return item.title
    return title_of(_before(item))


def _before(item: InboxItem) -> str:
    """The person's words before their latest answer, the newest first."""
    earlier = [c.text for c in reversed(item.clarifications[:-1])]
    return "\n".join([*earlier, item.text or ""])
