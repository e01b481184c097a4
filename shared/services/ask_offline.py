"""The offline answer: the tools called as the question's shape asks, each capture found
weighed by its words and its meaning, those that answer chosen (the newest of one matter
first), and the answer composed from their own words (`ask_compose`)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable
from datetime import date, datetime, timedelta
from typing import Any

from shared.domain.errors import STORAGE_DOWN, EmbedderUnavailable, StorageUnavailable, Unavailable
from shared.services.ask_compose import compose
from shared.services.ask_kinds import holds, unanswered
from shared.services.ask_rank import Evidence, rerank
from shared.services.ask_run import AskProgress, Question, Run, Source, tell
from shared.services.ask_soft import Soft, soft_matches
from shared.services.ask_words import (
    MONEY,
    STOP_WORDS,
    Asked,
    people_named,
    read_question,
    stem,
    stems_of,
)
from shared.services.recall import search_terms


async def answer_offline(run: Run, question: Question, now: datetime) -> AsyncIterator[AskProgress]:
    """The answer without a model: the tools called as the question's shape asks (its words
    and its meaning searched, the people it names, a bucket's list for a bare "what's due?"),
    the captures found weighed and chosen, and the answer told in their own words."""
    asked = read_question(question)
    today = now.date()
    if asked.words:
        query = " ".join(asked.words)[:200]
        async for step in run.call("search", {"query": query, "limit": 20}):
            yield step
    if asked.words and question.text.casefold() != " ".join(asked.words).casefold():
        # The question as asked, for its meaning: what answers may hold none of its words
        # ("did I consider commuting by bicycle when it snows?": "biking to the office in
        # winter").
        async for step in run.call("search", {"query": question.text, "limit": MEANING_HITS}):
            yield step
    for quote in asked.referents:
        # A follow-up pointing back: what the last answer quoted, found again by its words.
        async for step in run.call("search", {"query": quote[:200], "limit": 3}):
            yield step
    for name in asked.names[:2]:
        async for step in run.call("person", {"name": name, "limit": 20}):
            yield step
    listed: set[str] = set()
    if asked.shape in ("due", "next") and not _own_terms(asked) and not asked.referents:
        # "what's due this week?": the list is the answer, not a search.
        bucket = "admin" if asked.shape == "due" else "projects"
        args: dict[str, Any] = {"bucket": bucket, "done": False, "limit": 20}
        if asked.shape == "due":
            args["due_before"] = (today + timedelta(days=8)).isoformat()
        before = set(run.seen)
        async for step in run.call("list_bucket", args):
            yield step
        listed = set(run.seen) - before
    elif asked.shape == "next":
        # "what's the next bill?": what is open with a date ahead, beside what search found,
        # so the soonest can come first (a search hit carries no due date).
        ahead = {"bucket": "admin", "done": False, "limit": 20}
        ahead["due_before"] = (today + timedelta(days=NEXT_DAYS)).isoformat()
        async for step in run.call("list_bucket", ahead):
            yield step
    # The best hits search showed only in part are read whole before they are weighed: what
    # answers may be outside the snippet ("Mme Ouellet next door … her shopping").
    for source in [s for s in run.seen.values() if not s.whole][:MAX_READ_WHOLE]:
        async for step in run.call("get_capture", {"captureId": source.id}):
            yield step
    meaning = await _meaning(run, question, asked) if asked.words else {}
    soft = await _soft(run, asked, meaning) if asked.words else {}
    chosen = _choose(asked, run, listed, today, meaning, soft)
    chosen = _second_look(asked, question, run, listed, chosen, today, meaning, soft)
    if chosen and not listed and unanswered(asked, question.text, chosen):
        # About the question's subject, but none says what it asks for ("What did the
        # surveyor charge?" for "the surveyor was here 2 hrs"): nothing answers it.
        chosen = []
    # What the answer rests on is read whole, and with its details (who it was filed with,
    # its date) where the answer tells them.
    details = asked.who or asked.shape in ("due", "when", "next")
    for source in chosen:
        if not source.whole or (details and not source.detailed):
            async for step in run.call("get_capture", {"captureId": source.id}):
                yield step
    chosen = [run.seen[s.id] for s in chosen]
    async for said in tell(compose(asked, chosen, listed)):
        yield said


# How many hits the question as asked adds, by its meaning.
MEANING_HITS = 12

# How many of the best hits search showed in part are read whole before choosing.
MAX_READ_WHOLE = 6

# How far ahead "what's the next …?" looks for an open Admin item with a date.
NEXT_DAYS = 45

# The most captures an answer cites (3 for a who, when or latest, and where it asks how things
# stand now or were at first).
MAX_CITATIONS = 5

# A capture's weight for a question: its words (`coverage`, 0..1) plus its meaning, the cosine
# similarity of its stored vector to the question's above the model's floor
# (`Embedder.min_similarity`), scaled to 0..1 and weighed MEANING_WEIGHT. A capture answers
# from ANSWER_CUT; those within BAND of the best are about the same thing. Measured with
# MiniLM on the tuning parts of bench/data/ask_questions.jsonl, ask2_ and ask4_: the best
# capture of a question with nothing to find mostly weighs 0-0.38 (but 1-1.5 where a capture
# is about its subject and not what it asks: "what did the surveyor charge?" for "the surveyor
# was here 2 hrs"), the expected capture of a question mostly 0.4-2.3; the figures hold from
# 0.36 to 0.42 and MEANING_WEIGHT 1.5 to 3, BAND 0.15 to 0.4, SAME_THING 0.1 to 0.25.
MEANING_WEIGHT = 2.0
ANSWER_CUT = 0.42
BAND = 0.25
WORDS_BAND = 0.2
# A newer capture past NEWER_CUT of the question's words (or ANSWER_CUT), about the same thing
# as the best (`kinship` from SAME_THING), is kept too: it may say the older one changed.
# Measured on the tuning sets: captures of one matter share 0.16-0.44, of others 0-0.11.
NEWER_CUT = 0.4
SAME_THING = 0.15
# A follow-up's meaning: its own words', and its earlier question's at this weight.
CARRIED_MEANING = 0.5
# How many of the best captures (by their weight without it) the soft word match reads.
SOFT_CANDIDATES = 12
# How many captures the meaning of the question is read for (the nearest, and those its
# words find).
MEANING_CANDIDATES = 50


async def _meaning(run: Run, question: Question, asked: Asked) -> dict[str, float]:
    """Each capture's similarity in meaning to the question (a follow-up's: to it and, less,
    its earlier question), by id, as the hybrid search weighs it over the stored vectors; none
    without an embedding model at hand."""
    embedder = run.adapters.embedder
    texts = [question.text, *([asked.before] if asked.before else [])]
    try:
        vectors = await embedder.embed(texts)
    except EmbedderUnavailable:
        return {}
    vector = list(vectors[0])
    if len(vectors) > 1:
        vector = [a + CARRIED_MEANING * b for a, b in zip(vector, vectors[1], strict=True)]
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    vector = [x / norm for x in vector]
    terms = search_terms(" ".join(asked.words) or question.text)
    try:
        found = await run.adapters.search.hybrid(
            run.user_id, terms, question.text, vector, MEANING_CANDIDATES
        )
    except StorageUnavailable as down:
        raise Unavailable(STORAGE_DOWN, "STORAGE_UNAVAILABLE") from down
    return found.similarity


async def _soft(run: Run, asked: Asked, meaning: dict[str, float]) -> Soft:
    """The soft matches of the question's terms no capture found holds (`ask_soft`), among
    the words of the SOFT_CANDIDATES best captures by their weight without them (the words
    compared are what a question's cold cache pays for: about a millisecond each)."""
    found = list(run.seen.values())
    held: set[str] = set().union(*(_have(s) for s in found))
    anchor, weights, named = anchored_terms(asked, found)
    weight = _weigh(weights, meaning, run.adapters.embedder.min_similarity, named)
    best = sorted((s for s in found if _anchored(anchor, s)), key=lambda s: (-weight(s), s.id))
    return await soft_matches(run.adapters.embedder, asked, best[:SOFT_CANDIDATES], held)


def _choose(
    asked: Asked,
    run: Run,
    listed: set[str],
    today: date,
    meaning: dict[str, float] | None = None,
    soft: Soft | None = None,
) -> list[Source]:
    """The captures the answer rests on: those weighing past the cut by their words and meaning
    (or listed, for a bare "what's due?"; or quoted by the last answer, for a follow-up
    pointing back), about the same thing as the best; the newest first (the oldest, asked how
    it was at first), the soonest due for a "what's the next …?"."""
    found = list(run.seen.values())
    if asked.shape == "due":
        # A bare "what's due?" lists what is still ahead.
        listed = {i for i in listed if (d := run.seen[i].due_date) is not None and d >= today}
    anchor, weights, named = anchored_terms(asked, found)
    weight = _weigh(weights, meaning or {}, run.adapters.embedder.min_similarity, named, soft)
    referents = _referents(asked, found)
    scored = [(weight(s), coverage(weights, s, soft), s) for s in found if _anchored(anchor, s)]
    if asked.who:
        # A "who" is answered by a capture that names someone ("who is painting the kitchen?"
        # is not answered by "choose the paint colour").
        scored = [(w, c, s) for w, c, s in scored if people_named(asked, s) or s.id in referents]
    keep = [
        (w, c, s) for w, c, s in scored if w >= ANSWER_CUT or s.id in listed or s.id in referents
    ]
    if not keep:
        return []
    best = max(w for w, _, _ in keep)
    best_words = max(c for _, c, _ in keep)
    lead = max(keep, key=lambda k: k[0])[2]
    kin = kinship(found)
    if asked.history:
        return _steps(asked, keep, lead, kin, best)
    bare_list = listed and not _own_terms(asked)
    if (asked.shape == "count" and asked.order != "newest") or bare_list:
        band = [s for _, _, s in keep]
    else:
        # About the same thing as the best: near its weight, or near its words and sharing
        # its specific words ("the kitchen budget" is not "the kitchen tiler").
        band = [
            s
            for w, c, s in keep
            if w >= best - BAND
            or (c >= best_words - WORDS_BAND and kin(lead, s) >= SAME_THING)
            or s.id in referents
        ]
    newest = max(s.created_at for s in band)
    # A newer capture about the same thing as the best (the specific words they share), that
    # answers or speaks of part of the question: it may say the older one changed. One about
    # something else, however newer, does not.
    updates = [
        s
        for w, c, s in scored
        if s.created_at > newest
        and asked.order != "oldest"
        and (
            relevant(asked, weights, s, NEWER_CUT, soft)
            or (w >= ANSWER_CUT and kin(lead, s) >= SAME_THING)
        )
    ]
    top = band + [s for s in updates if s not in band]
    updated = {s.id for s in updates}
    ahead = [s for s in top if s.due_date is not None and s.due_date >= today]
    if asked.shape == "due" and listed:
        top.sort(key=lambda s: (s.due_date or date.max, s.id))
    elif asked.order == "newest":
        top.sort(key=lambda s: s.created_at, reverse=True)
    elif asked.order == "oldest":
        top.sort(key=lambda s: s.created_at)
    elif asked.shape == "next" and ahead and not referents:
        # The next one: the soonest still ahead.
        top = sorted(ahead, key=lambda s: (s.due_date or date.max, s.id))[:2]
    else:
        # Newest first; a newer capture that only shares part of the question (a possible
        # change) after those that answer it.
        top.sort(key=lambda s: (s.id not in updated, s.created_at), reverse=True)
    if referents:
        # A follow-up pointing back: what the last answer quoted first, what is newer after.
        top.sort(key=lambda s: s.id not in referents)
    limit = MAX_CITATIONS if asked.shape in ("count", "what", "due", "next") else 3
    top = top[: 3 if asked.order != "default" else limit]
    covered = {s.id: c for _, c, s in scored}
    held = any(covered[s.id] > 0.0 for s in top)
    if weights and not bare_list and not referents and not held:
        # Near the question by meaning, or by the person it names, and holding none of its
        # words: about something else ("is Priya coming to the Christmas drinks?" is not
        # answered by "Priya's off to the gym at the weekend").
        return []
    return top


def _second_look(
    asked: Asked,
    question: Question,
    run: Run,
    listed: set[str],
    chosen: list[Source],
    today: date,
    meaning: dict[str, float],
    soft: Soft,
) -> list[Source]:
    """The chooser's captures picked again by the fitted ranker (`ask_rank`): as many, the
    newest first (the oldest, asked how it was at first; the soonest due for a "what's the
    next …?"; what the last answer quoted first). A bare list stays as it is."""
    if not chosen or (listed and not _own_terms(asked)):
        return chosen
    found = list(run.seen.values())
    anchor, weights, named = anchored_terms(asked, found)
    floor = run.adapters.embedder.min_similarity
    referents = _referents(asked, found)
    weight = _weigh(weights, meaning, floor, named, soft)
    # Only what the chooser could cite: naming whom the question names, and for a "who",
    # naming someone.
    found = [
        s
        for s in found
        if _anchored(anchor, s) and (not asked.who or people_named(asked, s) or s.id in referents)
    ]
    evidence = Evidence(
        words={s.id: coverage(weights, s) for s in found},
        held={s.id: _have(s) for s in found},
        kin=kinship(found),
        meaning=meaning,
        floor=floor,
        named=anchor,
        referents=referents,
        weight=weight,
    )
    picked = rerank(asked, question.text, found, chosen, evidence)
    if weights and not referents and not any(evidence.words[s.id] > 0.0 for s in picked):
        # None holds a word of the question: the chooser's own, which does.
        return chosen
    picked.sort(key=lambda s: s.created_at, reverse=asked.order != "oldest")
    ahead = [s for s in picked if s.due_date is not None and s.due_date >= today]
    if asked.shape == "next" and ahead and not referents:
        rest = [s for s in picked if s not in ahead]
        picked = sorted(ahead, key=lambda s: (s.due_date or date.max, s.id)) + rest
    if referents:
        picked.sort(key=lambda s: s.id not in referents)
    return picked


def _steps(
    asked: Asked,
    keep: list[tuple[float, float, Source]],
    lead: Source,
    kin: Callable[[Source, Source], float],
    best: float,
) -> list[Source]:
    """For "how has the quote changed?": every capture that answers and speaks of its subject
    (one of its own words, or the best's matter), holding an amount where it asks about money;
    the best weighed first, newest first."""
    subject = set(_own_terms(asked)) - {MONEY}
    steps = [
        (w, s)
        for w, _, s in keep
        if s is lead or subject & _have(s) or w >= best - BAND or kin(lead, s) >= SAME_THING
    ]
    if MONEY in asked.terms:
        steps = [(w, s) for w, s in steps if s is lead or holds(asked, s, "amount")]
    most = sorted(steps, key=lambda k: -k[0])[:MAX_CITATIONS]
    return sorted((s for _, s in most), key=lambda s: s.created_at, reverse=True)


def anchored_terms(
    asked: Asked, found: list[Source]
) -> tuple[set[str], dict[str, float], list[Source]]:
    """The names the captures know (`_anchor`), the terms' weights, and the captures that name
    one of them. The person it names is what every capture weighed holds: the rest of its
    words say which of theirs answers ("Leila's birthday" is not "Leila's new job")."""
    weights = specificity(asked, found)
    anchor = _anchor(asked, found)
    named = [s for s in found if anchor and _anchored(anchor, s)]
    if any(t not in anchor for t in weights):
        weights = {t: w for t, w in weights.items() if t not in anchor}
    return anchor, weights, named


def _weigh(
    weights: dict[str, float],
    meaning: dict[str, float],
    floor: float,
    among: list[Source],
    soft: Soft | None = None,
) -> Callable[[Source], float]:
    """A capture's weight: its words' coverage plus its meaning above `floor`, or, where the
    question names someone the captures know, above the median of that person's other
    captures (a name makes a question near every capture of them: "what's Kuba's phone
    number?" is near "Kuba is doing the tiles")."""

    def weight(source: Source) -> float:
        similarity = meaning.get(source.id, floor)
        others = sorted(meaning.get(s.id, floor) for s in among if s.id != source.id)
        least = max(floor, others[len(others) // 2]) if others else floor
        above = max(0.0, similarity - least) / (1.0 - floor)
        return coverage(weights, source, soft) + MEANING_WEIGHT * above

    return weight


# -- a capture's weight by its words --------------------------------------------------------


def _have(source: Source) -> set[str]:
    return stems_of(f"{source.title} {source.text} {' '.join(source.people)}")


def specificity(asked: Asked, found: list[Source]) -> dict[str, float]:
    """Each term's weight, lower the more of what the tools found holds it (a word every
    capture has says little; a word none has, that the question is about something never
    captured): its own weight over 1 + ln(1 + how many found captures hold it)."""
    held = [_have(s) for s in found]
    return {t: w / (1.0 + math.log1p(sum(t in h for h in held))) for t, w in asked.terms.items()}


def coverage(weights: dict[str, float], source: Source, soft: Soft | None = None) -> float:
    """How much of what the question is about the capture speaks of (0..1): a term it holds
    by its words, and one no capture holds for the credit of its soft match (`ask_soft`)."""
    total = sum(weights.values())
    if not total:
        return 0.0
    have = _have(source)
    held = sum(w for t, w in weights.items() if t in have)
    if soft:
        held += sum(w * soft.get(t, {}).get(source.id, 0.0) for t, w in weights.items())
    return held / total


def relevant(
    asked: Asked, weights: dict[str, float], source: Source, cut: float, soft: Soft | None = None
) -> bool:
    """Whether the capture holds more than `cut` of what the question is about, and one of its
    own words (or a word near one no capture holds)."""
    own = [t for t, w in asked.terms.items() if w == 1.0]
    have = _have(source)
    near = soft or {}
    held = any(t in have or source.id in near.get(t, {}) for t in own)
    return coverage(weights, source, soft) > cut and (not own or held)


def kinship(found: list[Source]) -> Callable[[Source, Source], float]:
    """How much two captures are about the same thing (0..1): the specific words they share
    (each weighted by its rarity among what the tools found, ln(N / how many hold it)) over
    the geometric mean of each one's, so that a short capture is not kin to all by a common
    word ("Wrightsons emailed the FENSA cert" and "call Wrightsons re the FENSA certificate"
    share the rare ones; "paid the hydro bill" and "paid Bruno the deposit" a common one)."""
    held = {s.id: {t for t in _have(s) if t not in STOP_WORDS and len(t) > 2} for s in found}
    count: dict[str, int] = {}
    for terms in held.values():
        for t in terms:
            count[t] = count.get(t, 0) + 1
    n = max(len(found), 2)
    rarity = {t: math.log(n / c) for t, c in count.items()}
    own = {i: sum(rarity[t] for t in terms) for i, terms in held.items()}

    def kin(a: Source, b: Source) -> float:
        ta, tb = held.get(a.id, set()), held.get(b.id, set())
        both = math.sqrt(own.get(a.id, 0.0) * own.get(b.id, 0.0))
        return sum(rarity[t] for t in ta & tb) / both if both else 0.0

    return kin


def _anchor(asked: Asked, found: list[Source]) -> set[str]:
    """The names of the question's own words that the captures found know as someone's (filed
    with a capture as one of its people): a capture answers only if it names one of them
    ("Leila's birthday" is not answered by Dmitri's). A place, a shop or a firm is a word like
    any other ("who am I sharing a room with in Dublin?" is answered by "sharing with dewi",
    which does not say Dublin)."""
    people = {stem(word) for s in found for p in s.people for word in p.split()}
    return {
        stem(name)
        for name in asked.own_names
        if stem(name) in people and any(stem(name) in _have(source) for source in found)
    }


def _anchored(anchor: set[str], source: Source) -> bool:
    return not anchor or bool(anchor & _have(source))


def _referents(asked: Asked, found: list[Source]) -> set[str]:
    """The captures the last answer quoted, for a follow-up that points back at them: all of
    it ("how much was it?"), or one of its own words in them ("and when does he start?"; not
    "and what's her phone number?", which they may not answer), or, for a "who", someone they
    name ("who's giving him a lift?" of "Margaret's taking him")."""
    own = _own_terms(asked)
    return {
        s.id
        for s in found
        if any(quote in " ".join(s.text.split()).casefold() for quote in asked.referents)
        and (not own or bool(set(own) & _have(s)) or (asked.who and bool(people_named(asked, s))))
    }


def _own_terms(asked: Asked) -> list[str]:
    return [t for t, w in asked.terms.items() if w == 1.0]
