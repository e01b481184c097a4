"""Reading back what was filed: a bucket a page at a time, the people named and one person's
items, and a search over every capture. Only the caller's partition is ever read."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal

from pydantic import Field

from shared.domain.capture import InboxItem, Status
from shared.domain.classification import Bucket
from shared.domain.documents import Document, Timestamp
from shared.domain.errors import EmbedderUnavailable, Malformed, NotFound
from shared.domain.filed import FiledItem, person_key
from shared.domain.ports import Adapters, CaptureSearch, Embedder, FiledFilter, FiledItems
from shared.services import keyset
from shared.services.embedding import with_embedding
from shared.services.inbox import get_capture

MAX_PAGE = 100
MAX_QUERY_CHARS = 200
MAX_NAME_CHARS = 100
MAX_SEARCH = 50
MAX_TERMS = 8

BUCKET_OF_PATH = {b.value.lower(): b for b in Bucket}


class FiledView(Document):
    """One filed item as clients see it; `etag` is what PATCH's If-Match names."""

    id: str = Field(description="The capture id.")
    bucket: Bucket
    title: str
    text: str
    source: Literal["text", "voice"]
    created_at: Timestamp
    people: list[str]
    due_date: date | None
    done: bool
    next_action: str | None
    one_liner: str | None
    etag: str = Field(description="The filed document's ETag, for PATCH's If-Match.")

    @classmethod
    def of(cls, item: FiledItem) -> FiledView:
        return cls(
            id=item.id,
            bucket=item.bucket,
            title=item.title,
            text=item.text,
            source=item.source,
            created_at=item.created_at,
            people=item.people,
            due_date=item.due_date,
            done=item.done,
            next_action=getattr(item, "next_action", None),
            one_liner=getattr(item, "one_liner", None),
            etag=item.etag or "",
        )

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True)  # the etag too


# -- a bucket, a page at a time ------------------------------------------------------------------


@dataclass(frozen=True)
class BucketQuery:
    """Which page of a bucket: up to `limit` (1..MAX_PAGE) of the items `where` takes, from
    where `continuation_token` says the last page ended."""

    limit: int = 20
    continuation_token: str | None = None
    where: FiledFilter = dataclasses.field(default_factory=FiledFilter)


class BucketPage(Document):
    bucket: Bucket
    items: list[FiledView]
    continuation_token: str | None


def bucket_named(name: str) -> Bucket:
    bucket = BUCKET_OF_PATH.get(name)
    if bucket is None:
        raise NotFound(
            f"There is no such bucket; there are {', '.join(BUCKET_OF_PATH)}.", "NO_SUCH_BUCKET"
        )
    return bucket


async def list_bucket(
    user_id: str, bucket: Bucket, query: BucketQuery, filed: FiledItems
) -> BucketPage:
    """Admin by due date (none last), the others newest first; every page one indexed query
    from where the last one ended (a keyset on listOrder, never OFFSET)."""
    after = _decode(query.continuation_token) if query.continuation_token else None
    found = await filed.page(user_id, bucket, query.where, after=after, limit=query.limit + 1)
    items = found[: query.limit]
    token = _encode(items[-1].list_order) if len(found) > query.limit else None
    return BucketPage(
        bucket=bucket, items=[FiledView.of(i) for i in items], continuation_token=token
    )


def _encode(list_order: str) -> str:
    return base64.urlsafe_b64encode(list_order.encode()).decode().rstrip("=")


def _decode(token: str) -> str:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, ValueError) as exc:
        raise Malformed("The continuation token is not valid.", "BAD_TOKEN") from exc
    if not raw.isprintable() or "|" not in raw:
        raise Malformed("The continuation token is not valid.", "BAD_TOKEN")
    return raw


# -- people --------------------------------------------------------------------------------------


class PersonSummary(Document):
    name: str = Field(description="As most often written.")
    mentions: int = Field(description="Filed items naming them.")
    last_mentioned_at: Timestamp
    open_items: int = Field(description="Items naming them not done.")


class PeopleList(Document):
    people: list[PersonSummary]


@dataclass(frozen=True)
class PersonQuery:
    """Which page of a person's items: up to `limit` (1..MAX_PAGE), newest first, from where
    `continuation_token` says the last page ended."""

    limit: int = 20
    continuation_token: str | None = None


class PersonPage(Document):
    name: str
    items: list[FiledView]
    continuation_token: str | None


# The people lists this process made, by user, with the version of the filed items they were
# made from (`FiledItems.version`): a list is made again only when something was filed,
# edited, moved or removed since (issue 42: the list read and folded every mention, thousands
# of documents, on every request). Least recently used first out.
PEOPLE_CACHED = 64
_people: OrderedDict[str, tuple[str, PeopleList]] = OrderedDict()


async def list_people(user_id: str, filed: FiledItems) -> PeopleList:
    """Everyone the filed items name, one entry per person however they were written
    ("Zoë", "zoe"), most recently mentioned first. Made again only when the user's filed
    items changed since this process last made it."""
    version = await filed.version(user_id)
    held = _people.get(user_id)
    if version is not None and held is not None and held[0] == version:
        _people.move_to_end(user_id)
        return held[1]
    # Read after the version: a write in between makes the next version differ, so a list
    # newer than its version is made again, never an older one kept.
    made = await _people_named(user_id, filed)
    if version is not None:
        _people[user_id] = (version, made)
        _people.move_to_end(user_id)
        while len(_people) > PEOPLE_CACHED:
            _people.popitem(last=False)
    return made


async def _people_named(user_id: str, filed: FiledItems) -> PeopleList:
    spellings: dict[str, Counter[str]] = {}
    mentions: Counter[str] = Counter()
    open_items: Counter[str] = Counter()
    last: dict[str, Timestamp] = {}
    # A few dozen names over thousands of items: each name folded once (issue 42: folding
    # every name of every item was a third of the list's time).
    keys: dict[str, str] = {}
    for mention in await filed.mentions(user_id):
        named = set()
        for name in mention.people:
            key = keys.get(name)
            if key is None:
                key = keys[name] = person_key(name)
            named.add(key)
            spelled = spellings.get(key)
            if spelled is None:
                spelled = spellings[key] = Counter()
            spelled[name] += 1
        for key in named:
            mentions[key] += 1
            if not mention.done:
                open_items[key] += 1
            seen = last.get(key)
            if seen is None or mention.created_at > seen:
                last[key] = mention.created_at
    summaries = [
        PersonSummary(
            name=spellings[key].most_common(1)[0][0],
            mentions=mentions[key],
            last_mentioned_at=last[key],
            open_items=open_items[key],
        )
        for key in mentions
        if key
    ]
    summaries.sort(key=lambda s: (s.last_mentioned_at, s.name), reverse=True)
    return PeopleList(people=summaries)


async def get_person(user_id: str, name: str, query: PersonQuery, filed: FiledItems) -> PersonPage:
    """Every item naming them, across the buckets, newest first, a page at a time (a keyset on
    createdAt that carries the ids shown at the page's last instant: ties neither lost nor
    repeated)."""
    key = person_key(name)
    cursor = keyset.decode(query.continuation_token) if query.continuation_token else None
    # One more than a page, and as many again as the ids the cursor says were sent already.
    wanted = query.limit + 1 + (len(cursor.ids) if cursor else 0)
    found = (
        await filed.newest_mentioning(user_id, key, wanted, cursor.t if cursor else None)
        if key
        else []
    )
    found = [i for i in found if not (cursor and cursor.sent(i))]
    if not found and cursor is None:
        raise NotFound("Nobody by that name is named in your items.", "NO_SUCH_PERSON")
    items = found[: query.limit]
    more = len(found) > query.limit
    token = keyset.encode(keyset.cursor_after(items, cursor)) if more else None
    written = Counter(p for i in items for p in i.people if person_key(p) == key)
    return PersonPage(
        name=written.most_common(1)[0][0] if written else name,
        items=[FiledView.of(i) for i in items],
        continuation_token=token,
    )


# -- search --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchQuery:
    """What to look for (`q`: up to MAX_QUERY_CHARS, not blank), and how many hits at most
    (1..MAX_SEARCH)."""

    q: str
    limit: int = 20


class SearchHit(Document):
    id: str
    bucket: Bucket | None
    status: Status
    title: str
    snippet: str = Field(description="A short piece of the text around the match.")
    people: list[str] = Field(
        default_factory=list, description="Whom the capture names, as it was filed with them."
    )
    due_date: date | None = Field(default=None, description="Its due date, where it has one.")
    score: float = Field(
        description="Search: our term-match score (0 for a hit by meaning alone; the order is "
        "the ranking's). Related: the cosine similarity to the capture."
    )
    created_at: Timestamp


class SearchResults(Document):
    query: str
    items: list[SearchHit]
    ranking: Literal["hybrid", "words"] = Field(
        default="words",
        description="hybrid: words and meaning fused by reciprocal rank; words: the term "
        "match alone (no embedding model at hand).",
    )


_TERM = re.compile(r"\w+")
SNIPPET_BEFORE = 40
SNIPPET_AFTER = 100


def search_terms(q: str) -> list[str]:
    """The query's words, lowercased, each once (the whole query when it has no word)."""
    words = list(dict.fromkeys(_TERM.findall(q.lower())))[:MAX_TERMS]
    return words or [q.strip().lower()]


async def search(
    user_id: str, query: SearchQuery, finder: CaptureSearch, embedder: Embedder | None = None
) -> SearchResults:
    """The caller's captures best matching `query`, best first. With `embedder`: by words and
    meaning, the two rankings fused by reciprocal rank (`finder.hybrid`: Cosmos DB's RRF, or
    the local stand-in's), so "bike commute" finds "cycling to work". Without it, or with
    the model down: matches over text and transcripts, titles and clarification answers, in
    the store's order where it ranks (Azure's BM25), else by our score, then newest."""
    terms = search_terms(query.q)
    vector = await _vector_of(query.q, embedder)
    if vector is not None and embedder is not None:
        found = await finder.hybrid(user_id, terms, query.q, vector, query.limit)
        hits = [_hit(item, terms, query.q) for item in found.items]
        # A capture that matches no word must be near in meaning, not merely the nearest of
        # what there is: vector search always has a nearest.
        hits = [
            h
            for h in hits
            if h.score > 0 or found.similarity.get(h.id, -1.0) >= embedder.min_similarity
        ]
        return SearchResults(query=query.q, items=hits[: query.limit], ranking="hybrid")
    found = await finder.search(user_id, terms, query.limit)
    hits = [_hit(item, terms, query.q) for item in found.items]
    if not found.ranked:
        # Stable: equal scores stay newest first, as the store returned them.
        hits.sort(key=lambda h: h.score, reverse=True)
    return SearchResults(query=query.q, items=hits[: query.limit])


async def _vector_of(q: str, embedder: Embedder | None) -> list[float] | None:
    if embedder is None:
        return None
    try:
        [vector] = await embedder.embed([q.strip()])
    except EmbedderUnavailable:
        return None  # the words alone: a search still answers
    return vector


def rank_by_words(items: list[InboxItem], terms: list[str], q: str) -> list[InboxItem]:
    """Term matches best first by `score` (equal scores in the order given: newest first)."""
    scored = [
        (score(i.title or "", [i.text or "", *(c.text for c in i.clarifications)], terms, q), i)
        for i in items
    ]
    return [i for _, i in sorted(scored, key=lambda pair: pair[0], reverse=True)]


# -- related items -------------------------------------------------------------------------------

MAX_RELATED = 20


@dataclass(frozen=True)
class RelatedQuery:
    """How many related items at most (1..MAX_RELATED)."""

    limit: int = 5


class RelatedItems(Document):
    id: str = Field(description="The capture they are related to.")
    items: list[SearchHit]


async def related(
    user_id: str, capture_id: str, query: RelatedQuery, adapters: Adapters
) -> RelatedItems:
    """The caller's filed captures nearest in meaning to this one (cosine similarity of their
    vectors), nearest first; 404 for a capture that is not the caller's. A capture not
    embedded yet (stored before embeddings, or the model was down) is embedded for the
    question, not stored; with no model at hand, nothing is related."""
    item = await get_capture(user_id, capture_id, adapters.repo)
    current = await with_embedding(item, adapters.embedder)
    vector = current.embedding
    if vector is None:
        return RelatedItems(id=item.id, items=[])
    found = await adapters.search.nearest(user_id, vector, query.limit, excluding=item.id)
    least = adapters.embedder.min_similarity
    similarity = found.similarity
    hits = [
        SearchHit(
            id=near.id,
            bucket=near.filed_bucket,
            status=near.status,
            title=near.title or _cut(near.text or "", 0, 60),
            snippet=_cut(near.text_to_classify(), 0, SNIPPET_BEFORE + SNIPPET_AFTER),
            people=near.people or [],
            due_date=near.due_date,
            score=round(similarity.get(near.id, 0.0), 4),
            created_at=near.created_at,
        )
        for near in found.items
        if near.user_id == user_id and similarity.get(near.id, -1.0) >= least
    ]
    return RelatedItems(id=item.id, items=hits[: query.limit])


def _hit(item: InboxItem, terms: list[str], q: str) -> SearchHit:
    text = item.text or ""
    answers = [c.text for c in item.clarifications]
    title = item.title or ""
    return SearchHit(
        id=item.id,
        bucket=item.filed_bucket,
        status=item.status,
        title=title or _cut(text, 0, 60),
        snippet=snippet([text, *answers, title], terms),
        people=item.people or [],
        due_date=item.due_date,
        score=score(title, [text, *answers], terms, q),
        created_at=item.created_at,
    )


def score(title: str, texts: list[str], terms: list[str], q: str) -> float:
    """Each term counts: in the title twice, in the text (or an answer) up to three times by
    how often; the whole query as written adds two. Over the number of terms, so that scores of
    different queries read alike."""
    folded = [t.casefold() for t in terms]
    title_f, body = title.casefold(), "\n".join(texts).casefold()
    total = sum(2.0 * (t in title_f) + min(body.count(t), 3) for t in folded)
    phrase = q.strip().casefold()
    if len(terms) > 1 and (phrase in body or phrase in title_f):
        total += 2.0
    return round(total / len(terms), 3)


def snippet(fields: list[str], terms: list[str]) -> str:
    """Around the first match in the first field that has one; the start of the text else."""
    for field in fields:
        hits = [i for i in (find_folded(field, t) for t in terms) if i is not None]
        if hits:
            return _cut(field, max(0, min(hits) - SNIPPET_BEFORE), SNIPPET_BEFORE + SNIPPET_AFTER)
    return _cut(fields[0], 0, SNIPPET_BEFORE + SNIPPET_AFTER)


def find_folded(text: str, term: str) -> int | None:
    """Where `term` first occurs in `text` case-insensitively, as an offset into `text` itself.
    Case folding changes lengths ("İ" is two characters folded, "ß" and "ﬁ" two, "ΐ" three), so
    an offset found in the folded text is mapped back to the character it came from."""
    needle = term.casefold()
    if not needle:
        return None
    folded: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        piece = ch.casefold()
        folded.append(piece)
        origin.extend([i] * len(piece))
    at = "".join(folded).find(needle)
    return origin[at] if at >= 0 else None


def _cut(text: str, start: int, length: int) -> str:
    """`length` characters from `start`, widened to whole words, with an ellipsis where cut."""
    end = min(len(text), start + length)
    # A word at most 20 characters further each way: a text with no spaces is cut anyway.
    floor, ceiling = max(0, start - 20), min(len(text), end + 20)
    while start > floor and not text[start - 1].isspace():
        start -= 1
    while end < ceiling and not text[end].isspace():
        end += 1
    piece = " ".join(text[start:end].split())
    return ("…" if start > 0 else "") + piece + ("…" if end < len(text) else "")
