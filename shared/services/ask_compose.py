"""The offline answer's text: the chosen captures in their own words, the newest first, what
changed said so, each quote with its day and its dates as days, markers in the citations'
order; and the quote a citation shows."""

from __future__ import annotations

import re
from datetime import date

from shared.domain.said_dates import dates_in, day, resolved_dates
from shared.services.ask_run import NOTHING, Answer, Citation, Source
from shared.services.ask_words import Asked, people_named, stem, stems_of, weight_of, words_of

# A capture longer than this is quoted by its best sentence or two.
MAX_QUOTE_CHARS = 240


def compose(asked: Asked, chosen: list[Source], listed: set[str] | None = None) -> Answer:
    """The answer in the captures' own words: the newest first, what changed said so, each
    quote with its day and its dates as days, markers in the citations' order."""
    if not chosen:
        return Answer(answer=NOTHING, citations=[])
    citations: list[Citation] = []
    lines: list[str] = []

    def cite(source: Source) -> str:
        quote = best_quote(asked, source)
        citations.append(source.cited(quote))
        days = dates_in(quote, source.created_at.date())
        said = f" ({'; '.join(days)})" if days else ""
        return f"“{quote}” [{len(citations)}]{said}"

    newest, rest = chosen[0], chosen[1:]
    if asked.shape == "count":
        n = len(chosen)
        lines.append(f"{n} of your captures speak of it:" if n != 1 else "One capture:")
        lines += [f"- {day(s.created_at)}: {cite(s)}" for s in chosen]
        return Answer(answer="\n".join(lines), citations=citations)
    if asked.shape == "due" and listed:  # a bare "what's due?"
        lines.append("Due soon:" if len(chosen) > 1 else "Due:")
        for s in chosen:
            when = f"due {day(s.due_date)}" if s.due_date else "no date"
            lines.append(f"- {when}: {cite(s)}")
        return Answer(answer="\n".join(lines), citations=citations)
    lead = _lead(asked, newest)
    lines.append(f"{lead}On {day(newest.created_at)} you wrote: {cite(newest)}.")
    for older in rest:
        if older.created_at > newest.created_at:
            # A newer capture that speaks of part of it: said, after what answers.
            lines.append(f"Since then, on {day(older.created_at)}: {cite(older)}.")
        elif asked.shape in ("who", "when", "due", "latest", "what") and _differs(
            asked, newest, older
        ):
            lines.append(
                f"That changed: earlier, on {day(older.created_at)}, it was {cite(older)}."
            )
        else:
            lines.append(f"Also, on {day(older.created_at)}: {cite(older)}.")
    return Answer(answer="\n".join(lines), citations=citations)


def _lead(asked: Asked, source: Source) -> str:
    """What the answer opens with, by the question's shape: the next step, the day, or who."""
    if asked.shape == "next" and source.next_action:
        return f"Next: {source.next_action}. "
    if asked.shape in ("due", "next") and source.due_date:
        return f"Due {day(source.due_date)}. "
    if asked.shape == "when" and source.due_date:
        return f"{day(source.due_date)}. "
    if asked.shape == "who":
        # The names in the sentence that speaks most of the question.
        sentences = _SENTENCE.findall(source.text) or [source.text]
        best = max(sentences, key=lambda s: weight_of(asked, s))
        names = [
            w
            for w in dict.fromkeys(words_of(best))
            if w[:1].isupper() and w.casefold() in people_named(asked, source)
        ]
        # The people it was filed with, as written, where the sentence (else the capture)
        # names them: not the places it names.
        asked_about = {stem(n) for n in asked.names}
        filed = [
            p
            for p in source.people
            if not {stem(w) for w in words_of(p)} & asked_about
            and stems_of(p) & stems_of(source.text)
        ]
        in_best = [p for p in filed if stems_of(p) & stems_of(best)]
        names = in_best or filed or names
        if names:
            return f"{', '.join(names)}. "
    return ""


def _differs(asked: Asked, newest: Source, older: Source) -> bool:
    """Whether the older capture says something else about the same thing: other people (a
    "who"), another day (a "when"), or, for a single fact, other words at all."""
    if asked.shape == "who":
        return people_named(asked, newest) != people_named(asked, older)
    if asked.shape in ("when", "due"):
        a = newest.due_date or _first_day(newest)
        b = older.due_date or _first_day(older)
        return a is not None and b is not None and a != b
    return asked.shape == "latest" or asked.history


def _first_day(source: Source) -> date | None:
    found = resolved_dates(source.text, source.created_at.date())
    return found[0][1] if found else None


_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def best_quote(asked: Asked, source: Source) -> str:
    """The capture's own words that speak most of the question: the whole of a short capture,
    else its best sentence (and the next one, while within MAX_QUOTE_CHARS)."""
    text = " ".join(source.text.split())
    if len(text) <= MAX_QUOTE_CHARS:
        return text
    sentences: list[str] = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    if not sentences:
        return text[:MAX_QUOTE_CHARS].rstrip() + "…"

    at = max(range(len(sentences)), key=lambda i: (weight_of(asked, sentences[i]), -i))
    quote = sentences[at]
    if at + 1 < len(sentences) and len(quote) + len(sentences[at + 1]) < MAX_QUOTE_CHARS:
        quote = f"{quote} {sentences[at + 1]}"
    return quote if len(quote) <= MAX_QUOTE_CHARS else quote[: MAX_QUOTE_CHARS - 1] + "…"
