"""Ask: a question (and the thread's earlier turns) answered from the caller's own captures
only, citing them: the tools of services/tools.py called as a model would, offline by the
question's shape and the captures' own words, or by a model's tool-calling loop when one is
given. The use case reports domain progress (tools started and answered, the answer's text,
the answer); the doors tell it (AG-UI run, plain JSON, MCP)."""

from __future__ import annotations

import json
import math
import re
import unicodedata
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Literal

from pydantic import Field

from shared.domain.chat import (
    AskThread,
    ChatTurn,
    DraftCitation,
    ModelTurn,
    ThreadTurn,
    ToolCall,
    ToolSpec,
)
from shared.domain.classification import Bucket
from shared.domain.documents import Document
from shared.domain.errors import (
    STORAGE_DOWN,
    EmbedderUnavailable,
    Invalid,
    ModelUnavailable,
    Refused,
    StaleItem,
    StorageUnavailable,
    Unavailable,
)
from shared.domain.ports import Adapters, AskModel, AskThreads
from shared.domain.said_dates import CALENDAR_WORDS, dates_in, day, resolved_dates
from shared.domain.text import valid_text
from shared.services.recall import search_terms
from shared.services.tools import READ_TOOLS, Tool

MAX_QUESTION_CHARS = 1000
# A thread id a client chooses (GET /api/ask's threadId, MCP's ask).
THREAD_ID_PATTERN = r"^[A-Za-z0-9._:-]{1,100}$"
MAX_EARLIER_TURNS = 12
MAX_TURN_CHARS = 2000
MAX_QUOTE_CHARS = 240
MAX_CITATIONS = 5
# A tool's answer as the model reads it: enough for a page of hits, never a whole export.
MAX_TOOL_RESULT_CHARS = 6000


# -- what comes in and what goes out ------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """What is asked, and the thread's earlier turns (user and assistant words, oldest first)."""

    text: str
    earlier: tuple[ChatTurn, ...] = ()


@dataclass(frozen=True)
class AskLimits:
    """How far the model's loop may go: model turns, tool calls a turn, tokens in all."""

    max_steps: int = 4
    max_calls_per_step: int = 4
    max_tokens: int = 12000


class Citation(Document):
    capture_id: str = Field(description="The cited capture (GET /api/captures/{captureId}).")
    bucket: Bucket | None = Field(description="Where it is filed; null while in the inbox.")
    title: str
    quote: str = Field(description="The capture's own words the answer rests on.")


class Answer(Document):
    answer: str = Field(description="The answer; markers [1], [2] follow the citations' order.")
    citations: list[Citation]


@dataclass(frozen=True)
class ToolStarted:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolFinished:
    """A tool's answer as JSON, or `{"error": {"code", "message"}}` when it refused."""

    call_id: str
    name: str
    result: dict[str, Any]


@dataclass(frozen=True)
class AnswerText:
    delta: str


@dataclass(frozen=True)
class Answered:
    answer: Answer
    # Tokens the model took over the whole question (0 offline): the cost figures.
    tokens: int = 0
    by_model: bool = False


AskProgress = ToolStarted | ToolFinished | AnswerText | Answered

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def new_question(text: str, earlier: Sequence[tuple[str, str]] = ()) -> Question:
    """The rules a question meets whatever its door: valid Unicode (NFC), not blank, within
    MAX_QUESTION_CHARS, no control characters; earlier turns (role, text) kept as words only,
    the last MAX_EARLIER_TURNS of them."""
    text = unicodedata.normalize("NFC", valid_text(text)).strip()
    if not text:
        raise Invalid("Ask a question: the text is empty.", "EMPTY_QUESTION")
    if len(text) > MAX_QUESTION_CHARS:
        raise Invalid(
            f"A question is at most {MAX_QUESTION_CHARS} characters.", "QUESTION_TOO_LONG"
        )
    if _CONTROL.search(text):
        raise Invalid("The question holds control characters.", "INVALID_TEXT")
    turns = tuple(
        ChatTurn(role="user" if role == "user" else "assistant", content=words[:MAX_TURN_CHARS])
        for role, words in earlier
        if role in ("user", "assistant") and words.strip()
    )
    return Question(text=text, earlier=turns[-MAX_EARLIER_TURNS:])


def tool_specs(tools: Sequence[Tool[Any]] = READ_TOOLS) -> list[ToolSpec]:
    """The tools as a model is offered them: the catalogue's own names, words and schemas."""
    return [ToolSpec(t.name, t.description, t.input_schema()) for t in tools]


# -- the use case ---------------------------------------------------------------------------


async def ask(
    user_id: str,
    question: Question,
    now: datetime,
    limits: AskLimits,
    adapters: Adapters,
    *,
    model: AskModel | None = None,
) -> AsyncIterator[AskProgress]:
    """Answer `question` from `user_id`'s captures: tool calls as they start and answer, the
    answer's text in pieces, then the answer. With a `model`, its tool-calling loop; without
    one, or when it fails, the offline answer. Refused when storage is down."""
    run = _Run(user_id, adapters)
    if model is not None:
        try:
            async for step in _model_answer(run, question, limits, model):
                yield step
            return
        except ModelUnavailable:
            pass  # the captures still answer: offline, over the same tools
    async for step in _offline_answer(run, question, now):
        yield step


class _Run:
    """The tools of one question, for one user: each call told as it starts and answers, and
    what it read kept, so that only a capture a tool gave may be cited."""

    def __init__(self, user_id: str, adapters: Adapters) -> None:
        self.user_id = user_id
        self.adapters = adapters
        self.tools = {t.name: t for t in READ_TOOLS}
        self.seen: dict[str, _Source] = {}
        self.calls = 0

    async def call(
        self, name: str, arguments: dict[str, Any], call_id: str | None = None
    ) -> AsyncIterator[ToolStarted | ToolFinished]:
        self.calls += 1
        # Unique across the thread's runs: a client keeps every run's tool calls by id.
        call_id = call_id or f"call_{uuid.uuid4().hex[:16]}"
        yield ToolStarted(call_id, name, arguments)
        tool = self.tools.get(name)
        result: dict[str, Any]
        try:
            if tool is None:
                known = ", ".join(self.tools)
                raise Invalid(f"There is no tool {name!r}; there are {known}.", "UNKNOWN_TOOL")
            found = await tool.call(self.user_id, arguments, self.adapters)
            result = found.to_json()
            self._keep(result)
        except Unavailable:
            raise
        except StorageUnavailable as down:
            raise Unavailable(STORAGE_DOWN, "STORAGE_UNAVAILABLE") from down
        except Refused as refused:
            result = {"error": {"code": refused.code, "message": refused.message}}
        yield ToolFinished(call_id, name, result)

    def _keep(self, result: dict[str, Any]) -> None:
        """The captures a tool's answer holds, by the richest view of each."""
        rows = result.get("items") if isinstance(result.get("items"), list) else [result]
        for row in rows or []:
            source = _Source.of(row)
            if source is None:
                continue
            had = self.seen.get(source.id)
            if had is not None:
                source = had.merged(source)
            self.seen[source.id] = source


@dataclass
class _Source:
    """What an answer may draw on of one capture: as a tool gave it."""

    id: str
    bucket: Bucket | None
    title: str
    text: str
    created_at: datetime
    people: list[str] = field(default_factory=list)
    due_date: date | None = None
    next_action: str | None = None
    whole: bool = True  # False: a search snippet, not the whole text
    detailed: bool = True  # False: a search hit, without its people and dates

    @classmethod
    def of(cls, row: Any) -> _Source | None:
        if not isinstance(row, dict) or not isinstance(row.get("id"), str):
            return None
        created = row.get("createdAt")
        if not isinstance(created, str):
            return None
        bucket = row.get("bucket", row.get("filedBucket"))
        snippet = row.get("snippet")
        text = row.get("text") if isinstance(row.get("text"), str) else snippet
        due = row.get("dueDate")
        title = str(row.get("title") or "")
        return cls(
            id=row["id"],
            bucket=Bucket(bucket) if bucket in {b.value for b in Bucket} else None,
            title=title,
            text=str(text or ""),
            created_at=datetime.fromisoformat(created.replace("Z", "+00:00")),
            people=list(row.get("people") or []),
            due_date=date.fromisoformat(due) if isinstance(due, str) else None,
            next_action=row.get("nextAction"),
            # A search snippet is the whole text only when it is not cut, and not the title (a
            # match in the title alone shows the title).
            whole=not isinstance(snippet, str)
            or not (snippet.startswith("…") or snippet.endswith("…") or snippet == title),
            detailed="people" in row,
        )

    def merged(self, other: _Source) -> _Source:
        """One capture as two tools gave it: the fuller text, and every detail either held (a
        search hit has no due date; the bucket's list has)."""
        fuller, rest = (other, self) if _fuller(other, self) else (self, other)
        return _Source(
            id=fuller.id,
            bucket=fuller.bucket or rest.bucket,
            title=fuller.title or rest.title,
            text=fuller.text,
            created_at=fuller.created_at,
            people=fuller.people or rest.people,
            due_date=fuller.due_date or rest.due_date,
            next_action=fuller.next_action or rest.next_action,
            whole=fuller.whole,
            detailed=fuller.detailed or rest.detailed,
        )


def _fuller(a: _Source, b: _Source) -> bool:
    return (a.whole, len(a.text)) > (b.whole, len(b.text))


async def _tell(answer: Answer, **done: Any) -> AsyncIterator[AnswerText | Answered]:
    """The answer's text a few words at a time (as a model streams it), then the answer."""
    words = re.findall(r"\S+\s*", answer.answer)
    for at in range(0, len(words), 4):
        yield AnswerText("".join(words[at : at + 4]))
    yield Answered(answer, **done)


# -- offline: the question's shape, the tools, the captures' own words ----------------------

Shape = Literal["who", "what", "when", "due", "next", "count", "latest"]

NOTHING = "I found nothing in your captures that answers that."

_APOSTROPHES = "'\u2019"
_WORD = re.compile(r"[^\W_]+(?:[" + _APOSTROPHES + r"][^\W_]+)*")
_STOP_WORDS = """a about above after again against all am an and any anyone anything are as
    at be been
    before being below between both but by can could did do does doing done down during each
    else ever few for from further get got had has have having he her here hers herself him
    himself his how i if in into is it its itself just know let like ll me mine more most my
    myself no nor not now of on once only or other our ours out over own re s same say
    said she should so some still such t tell than that the their theirs them then there these
    they this those through to too under until up us very was we were what whats when where
    which while who whom whos whose why will with would you your yours d m ve thing things
    happening happen going go anything something remind one ones did didn don doesn isn wasn
    currently any again stuff sort kind think thought wrote write note notes capture captures
    might must may ought
    said saying mentioned mention situation info details story deal everything"""
_STOP = frozenset(_STOP_WORDS.split())
_SHAPE_LIST = """many much often times latest last newest recent recently next due deadline when day
    date time week weeks today tomorrow yesterday month soon new news update updates status
    originally original initially first settle settled decide decided finally final eventually
    current supposed days plan plans progress"""
_SHAPE_WORDS = frozenset(_SHAPE_LIST.split())
_FOLLOW_UP = re.compile(
    r"^\s*(and|also|but|so|what about|how about|and what|and who|and when)\b|"
    r"\b(it|that|this|they|them|there|he|she|her|his|him|those|these)\b",
    re.IGNORECASE,
)


def shape_of(text: str) -> Shape:
    """What kind of answer the question wants, from its words."""
    q = text.casefold()
    if re.search(r"\bhow (many|often)\b|\bnumber of\b", q):
        return "count"
    if re.search(r"\b(due|deadline|owe|overdue|by when)\b", q):
        return "due"
    if re.search(r"\bwhen\b|\bwhat (day|date|time)\b", q):
        return "when"
    if re.search(r"\bnext\b|\bto do\b|\btodo\b", q):
        return "next"
    if re.search(r"\b(latest|newest|most recent|last|now|currently|still)\b", q):
        return "latest"
    if re.search(r"\bwho\b|\bwhom\b|\bwhose\b", q):
        return "who"
    return "what"


# English's irregular verbs a capture is likely to use, as their stems.
_LEMMAS = {
    "paid": "pay", "owed": "owe", "owes": "owe", "owing": "owe", "said": "say", "bought": "buy",
    "went": "go", "gone": "go", "made": "mak",
    "took": "tak", "taken": "tak", "gave": "giv", "given": "giv", "told": "tell",
    "thought": "think", "lent": "lend", "left": "leav", "met": "meet", "sent": "send",
    "spent": "spend", "kept": "keep", "found": "find", "got": "get", "ran": "run",
    "built": "build", "brought": "bring", "sold": "sell", "wrote": "writ", "written": "writ",
    "began": "begin", "begun": "begin", "chose": "choos", "chosen": "choos", "fell": "fall",
    "broke": "break", "broken": "break", "ate": "eat", "saw": "see", "seen": "see",
    "rang": "ring", "rung": "ring", "lost": "los", "heard": "hear",
    "felt": "feel", "held": "hold", "stood": "stand", "understood": "understand",
}  # fmt: skip
# Words about money: in a question, one term that any of them, or an amount, answers.
MONEY = "¤money"
_MONEY_STEMS = frozenset(
    {"ow", "owe", "pay", "money", "cost", "pric", "spend", "quot", "deposit", "cash", "bill", "fee",
     "charg", "refund", "afford", "expens", "cheap", "budget", "lend", "borrow", "debt"}
)  # fmt: skip
_AMOUNT = re.compile(r"[£$€]\s?\d|\d\s?(?:eur|euros?|pounds?|dollars?|quid)\b", re.IGNORECASE)


# Words for the people around us that mean the same (after stem): one term for each. A capture
# says "next door" where a question says "neighbour" (in `_stems`).
_SAME_PERSON = {
    "neighbor": "neighbour", "mom": "mum", "moth": "mum", "mam": "mum", "mummy": "mum",
    "fath": "dad", "daddy": "dad", "children": "kid", "child": "kid", "grandma": "gran",
    "granny": "gran", "nan": "gran", "grandmoth": "gran", "grandfath": "grandpa",
    "granddad": "grandpa", "grandad": "grandpa",
}  # fmt: skip
_NEXT_DOOR = re.compile(r"\bnext[\s-]door\b", re.IGNORECASE)


_DOUBLED = re.compile(r"([bdgmnprt])\1$")


def stem(word: str) -> str:
    """A word as it is matched: casefolded, accents off, a plural or -ing/-ed/-er off."""
    w = "".join(
        c for c in unicodedata.normalize("NFKD", word.casefold()) if not unicodedata.combining(c)
    )
    w = _bare(w)
    if w in _LEMMAS:
        return _LEMMAS[w]
    for suffix in ("ing", "ers", "ies", "ied", "er", "ed", "es", "s"):
        base = w[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
        if w.endswith(suffix) and len(base) >= 3:  # "bus" and "red" stay whole
            w = base
            if suffix in ("ing", "ed") and len(w) > 4 and _DOUBLED.search(w):
                # "shopping" is "shop", "planned" "plan"; "falling" stays "fall", and
                # "wedding" "wedd" (not "wed", Wednesday).
                w = w[:-1]
            break
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return _SAME_PERSON.get(w, w)


def _bare(word: str) -> str:
    """A word without its 's or 're: "who's" is "who", "Priya's" is "Priya"."""
    return re.split(f"[{_APOSTROPHES}]", word)[0]


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def _terms(text: str) -> list[str]:
    """The question's words that say what it is about (not how it asks)."""
    out = []
    for word in _words(text):
        folded = _bare(word).casefold()
        if folded in _STOP or folded in _SHAPE_WORDS or len(folded) < 2 or folded.isdigit():
            continue
        out.append(word)
    return list(dict.fromkeys(out))


def _names(text: str) -> list[str]:
    """Capitalised words not opening a sentence: the people a question may name."""
    names = []
    for match in _WORD.finditer(text):
        word = match.group()
        before = text[: match.start()].rstrip()
        opens = not before or before[-1] in ".?!"
        folded = _bare(word).casefold()
        if word[:1].isupper() and not opens and folded not in _STOP and word != "I":
            names.append(_bare(word))
    return list(dict.fromkeys(names))


@dataclass(frozen=True)
class _Asked:
    """A question read: its shape, its terms (with weights: a term carried from an earlier
    turn counts half), the names it mentions (`own_names`: in its own words), which capture
    answers where several speak of it (`order`: the newest, unless it asks how it was at
    first), and, for a follow-up that points back ("how much was it?"), the words the last
    answer quoted (`referents`)."""

    shape: Shape
    terms: dict[str, float]
    names: list[str]
    words: list[str]  # what to search for, as written
    own_names: tuple[str, ...] = ()
    who: bool = False  # asks who (whatever its shape: "who's doing it now?")
    order: Literal["newest", "oldest", "default"] = "default"
    referents: tuple[str, ...] = ()
    before: str = ""  # a follow-up's earlier question, whose subject it carries


# A question that asks how things stand now, or how they ended; and one that asks how they were
# at first.
_NOW = re.compile(
    r"\b(now|latest|newest|most recent|currently|current|still|in the end|finally|final|"
    r"settled?|decided?|ended up|eventually|so far|these days)\b",
    re.IGNORECASE,
)
_AT_FIRST = re.compile(
    r"\b(originally|original|initially|at first|first|used to|to begin with|at the start)\b",
    re.IGNORECASE,
)
# A follow-up that points back at what was just said.
_POINTS_BACK = re.compile(
    r"\b(it|that|this|he|she|him|her|his|hers|they|them|their|those|these)\b", re.IGNORECASE
)
_QUOTED = re.compile(r"\u201c([^\u201d]{8,})\u201d")


def read_question(question: Question) -> _Asked:
    """The question, with a follow-up's subject taken from the thread's last question ("and
    who's doing the tiles?" after "what's happening with the kitchen?") and, when it points
    back ("when is it?"), the captures the last answer quoted."""
    own_text = re.sub(r"\bin the end\b", " ", question.text, flags=re.IGNORECASE)
    own = _terms(own_text)
    terms = {_term(t): 1.0 for t in own}
    words = list(own)
    names = _names(question.text)
    own_names = tuple(names)
    earlier = [t.content or "" for t in question.earlier if t.role == "user"]
    referents: tuple[str, ...] = ()
    before = ""
    if earlier and (_FOLLOW_UP.search(question.text) or len(own) <= 1):
        before = earlier[-1]
        for word in _terms(before):
            if _term(word) not in terms:
                terms[_term(word)] = 0.5
                words.append(word)
        names += [n for n in _names(before) if n not in names]
        answers = [t.content or "" for t in question.earlier if t.role == "assistant"]
        if answers and _POINTS_BACK.search(question.text):
            quotes = [q.strip(" …") for q in _QUOTED.findall(answers[-1]) if q.strip(" …")]
            referents = tuple(" ".join(q.split()).casefold() for q in quotes)
    if _AT_FIRST.search(question.text):
        order: Literal["newest", "oldest", "default"] = "oldest"
    elif _NOW.search(question.text):
        order = "newest"
    else:
        order = "default"
    who = bool(re.search(r"\bwho(?:m|se)?\b", question.text, re.IGNORECASE))
    return _Asked(
        shape_of(question.text), terms, names, words, own_names, who, order, referents[:1], before
    )


def _term(word: str) -> str:
    """A question's word as the term it is matched by (any money word: MONEY)."""
    stemmed = stem(word)
    return MONEY if stemmed in _MONEY_STEMS else stemmed


def _stems(text: str) -> set[str]:
    """The stems of `text`'s words, and MONEY where it speaks of money or names an amount."""
    found = {stem(w) for w in _words(text)}
    if found & _MONEY_STEMS or _AMOUNT.search(text):
        found.add(MONEY)
    if _NEXT_DOOR.search(text):
        found.add("neighbour")
    return found


def _weight(asked: _Asked, text: str) -> float:
    """How much of the question `text` speaks of (the terms' weights it holds)."""
    have = _stems(text)
    return sum(w for t, w in asked.terms.items() if t in have)


def _have(source: _Source) -> set[str]:
    return _stems(f"{source.title} {source.text} {' '.join(source.people)}")


def specificity(asked: _Asked, found: list[_Source]) -> dict[str, float]:
    """Each term's weight, lower the more of what the tools found holds it (a word every
    capture has says little; a word none has, that the question is about something never
    captured): its own weight over 1 + ln(1 + how many found captures hold it)."""
    held = [_have(s) for s in found]
    return {t: w / (1.0 + math.log1p(sum(t in h for h in held))) for t, w in asked.terms.items()}


def coverage(weights: dict[str, float], source: _Source) -> float:
    """How much of what the question is about the capture speaks of (0..1)."""
    total = sum(weights.values())
    if not total:
        return 0.0
    have = _have(source)
    return sum(w for t, w in weights.items() if t in have) / total


def relevant(asked: _Asked, weights: dict[str, float], source: _Source, cut: float) -> bool:
    """Whether the capture holds more than `cut` of what the question is about, and one of its
    own words."""
    own = [t for t, w in asked.terms.items() if w == 1.0]
    have = _have(source)
    return coverage(weights, source) > cut and (not own or any(t in have for t in own))


def kinship(found: list[_Source]) -> Callable[[_Source, _Source], float]:
    """How much two captures are about the same thing (0..1): the specific words they share
    (each weighted by its rarity among what the tools found, ln(N / how many hold it)) over
    the geometric mean of each one's, so that a short capture is not kin to all by a common
    word ("Wrightsons emailed the FENSA cert" and "call Wrightsons re the FENSA certificate"
    share the rare ones; "paid the hydro bill" and "paid Bruno the deposit" a common one)."""
    held = {s.id: {t for t in _have(s) if t not in _STOP and len(t) > 2} for s in found}
    count: dict[str, int] = {}
    for terms in held.values():
        for t in terms:
            count[t] = count.get(t, 0) + 1
    n = max(len(found), 2)
    rarity = {t: math.log(n / c) for t, c in count.items()}

    def kin(a: _Source, b: _Source) -> float:
        ta, tb = held.get(a.id, set()), held.get(b.id, set())
        both = math.sqrt(sum(rarity[t] for t in ta) * sum(rarity[t] for t in tb))
        return sum(rarity[t] for t in ta & tb) / both if both else 0.0

    return kin


def _anchor(asked: _Asked, found: list[_Source]) -> set[str]:
    """The names of the question's own words that the captures found know: a capture answers
    only if it names one of them ("Leila's birthday" is not answered by Dmitri's)."""
    return {
        stem(name)
        for name in asked.own_names
        if any(stem(name) in _have(source) for source in found)
    }


def _anchored(anchor: set[str], source: _Source) -> bool:
    return not anchor or bool(anchor & _have(source))


def _referents(asked: _Asked, found: list[_Source]) -> set[str]:
    """The captures the last answer quoted, for a follow-up that points back at them: all of
    it ("how much was it?"), or one of its own words in them ("and when does he start?"; not
    "and what's her phone number?", which they may not answer)."""
    own = _own_terms(asked)
    return {
        s.id
        for s in found
        if any(quote in " ".join(s.text.split()).casefold() for quote in asked.referents)
        and (not own or bool(set(own) & _have(s)))
    }


def _own_terms(asked: _Asked) -> list[str]:
    return [t for t, w in asked.terms.items() if w == 1.0]


async def _offline_answer(
    run: _Run, question: Question, now: datetime
) -> AsyncIterator[AskProgress]:
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
    chosen = _choose(asked, run, listed, today, meaning)
    # What the answer rests on is read whole, and with its details (who it was filed with,
    # its date) where the answer tells them.
    details = asked.who or asked.shape in ("due", "when", "next")
    for source in chosen:
        if not source.whole or (details and not source.detailed):
            async for step in run.call("get_capture", {"captureId": source.id}):
                yield step
    chosen = [run.seen[s.id] for s in chosen]
    async for said in _tell(compose(asked, chosen, listed)):
        yield said


# How many hits the question as asked adds, by its meaning.
MEANING_HITS = 12

# How many of the best hits search showed in part are read whole before choosing.
MAX_READ_WHOLE = 6

# How far ahead "what's the next …?" looks for an open Admin item with a date.
NEXT_DAYS = 45

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
# How many captures the meaning of the question is read for (the nearest, and those its
# words find).
MEANING_CANDIDATES = 50


async def _meaning(run: _Run, question: Question, asked: _Asked) -> dict[str, float]:
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


def _weigh(
    weights: dict[str, float], meaning: dict[str, float], floor: float, among: list[_Source]
) -> Callable[[_Source], float]:
    """A capture's weight: its words' coverage plus its meaning above `floor`, or, where the
    question names someone the captures know, above the median of that person's other
    captures (a name makes a question near every capture of them: "what's Kuba's phone
    number?" is near "Kuba is doing the tiles")."""

    def weight(source: _Source) -> float:
        similarity = meaning.get(source.id, floor)
        others = sorted(meaning.get(s.id, floor) for s in among if s.id != source.id)
        least = max(floor, others[len(others) // 2]) if others else floor
        above = max(0.0, similarity - least) / (1.0 - floor)
        return coverage(weights, source) + MEANING_WEIGHT * above

    return weight


def _choose(
    asked: _Asked,
    run: _Run,
    listed: set[str],
    today: date,
    meaning: dict[str, float] | None = None,
) -> list[_Source]:
    """The captures the answer rests on: those weighing past the cut by their words and meaning
    (or listed, for a bare "what's due?"; or quoted by the last answer, for a follow-up
    pointing back), about the same thing as the best; the newest first (the oldest, asked how
    it was at first), the soonest due for a "what's the next …?"."""
    found = list(run.seen.values())
    weights = specificity(asked, found)
    if asked.shape == "due":
        # A bare "what's due?" lists what is still ahead.
        listed = {i for i in listed if (d := run.seen[i].due_date) is not None and d >= today}
    anchor = _anchor(asked, found)
    named = [s for s in found if anchor and _anchored(anchor, s)]
    # The person it names is what every capture weighed holds: the rest of its words say
    # which of theirs answers ("Leila's birthday" is not "Leila's new job").
    if any(t not in anchor for t in weights):
        weights = {t: w for t, w in weights.items() if t not in anchor}
    weight = _weigh(weights, meaning or {}, run.adapters.embedder.min_similarity, named)
    referents = _referents(asked, found)
    scored = [(weight(s), coverage(weights, s), s) for s in found if _anchored(anchor, s)]
    if asked.who:
        # A "who" is answered by a capture that names someone ("who is painting the kitchen?"
        # is not answered by "choose the paint colour").
        scored = [(w, c, s) for w, c, s in scored if _people(asked, s) or s.id in referents]
    keep = [
        (w, c, s) for w, c, s in scored if w >= ANSWER_CUT or s.id in listed or s.id in referents
    ]
    if not keep:
        return []
    best = max(w for w, _, _ in keep)
    best_words = max(c for _, c, _ in keep)
    lead = max(keep, key=lambda k: k[0])[2]
    kin = kinship(found)
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
            relevant(asked, weights, s, NEWER_CUT)
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
    return top[: 3 if asked.order != "default" else limit]


def compose(asked: _Asked, chosen: list[_Source], listed: set[str] | None = None) -> Answer:
    """The answer in the captures' own words: the newest first, what changed said so, each
    quote with its day and its dates as days, markers in the citations' order."""
    if not chosen:
        return Answer(answer=NOTHING, citations=[])
    citations: list[Citation] = []
    lines: list[str] = []

    def cite(source: _Source) -> str:
        quote = best_quote(asked, source)
        citations.append(
            Citation(
                capture_id=source.id,
                bucket=source.bucket,
                title=source.title or quote[:60],
                quote=quote,
            )
        )
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


def _lead(asked: _Asked, source: _Source) -> str:
    if asked.shape == "next" and source.next_action:
        return f"Next: {source.next_action}. "
    if asked.shape in ("due", "next") and source.due_date:
        return f"Due {day(source.due_date)}. "
    if asked.shape == "when" and source.due_date:
        return f"{day(source.due_date)}. "
    if asked.shape == "who":
        # The names in the sentence that speaks most of the question.
        sentences = _SENTENCE.findall(source.text) or [source.text]
        best = max(sentences, key=lambda s: _weight(asked, s))
        names = [
            w
            for w in dict.fromkeys(_words(best))
            if w[:1].isupper() and w.casefold() in _people(asked, source)
        ]
        # The people it was filed with, as written, where the sentence (else the capture)
        # names them: not the places it names.
        asked_about = {stem(n) for n in asked.names}
        filed = [
            p
            for p in source.people
            if not {stem(w) for w in _words(p)} & asked_about and _stems(p) & _stems(source.text)
        ]
        in_best = [p for p in filed if _stems(p) & _stems(best)]
        names = in_best or filed or names
        if names:
            return f"{', '.join(names)}. "
    return ""


def _differs(asked: _Asked, newest: _Source, older: _Source) -> bool:
    """Whether the older capture says something else about the same thing: other people (a
    "who"), another day (a "when"), or, for a single fact, other words at all."""
    if asked.shape == "who":
        return _people(asked, newest) != _people(asked, older)
    if asked.shape in ("when", "due"):
        a = newest.due_date or _first_day(newest)
        b = older.due_date or _first_day(older)
        return a is not None and b is not None and a != b
    return asked.shape == "latest"


def _people(asked: _Asked, source: _Source) -> set[str]:
    """Who a capture names: its filed people, and capitalised words that are not what the
    question is about ("Marco pulled out. Kuba is doing the tiles": Marco and Kuba)."""
    named = {p.casefold() for p in source.people}
    for word in _words(source.text):
        folded = word.casefold()
        calendar = folded in CALENDAR_WORDS  # not "Marco" for "mar", nor "Sunil" for "sun"
        if (
            word[:1].isupper()
            and folded not in _STOP
            and not calendar
            and (stem(word) not in asked.terms)
        ):
            named.add(folded)
    # "dad found someone", "my sister is": people named by who they are to the user.
    named |= (_stems(source.text) & _RELATIONS) - set(asked.terms)
    return named - {"i"} - {n.casefold() for n in asked.names}


# The people around us, that a capture may name instead of a name (as their stems).
_RELATION_WORDS = """mum dad sister brother wife husband partner boyfriend girlfriend boss friend
    neighbour aunt uncle cousin son daughter gran grandpa kid landlord landlady colleague
    nephew niece doctor"""
_RELATIONS = frozenset(stem(word) for word in _RELATION_WORDS.split())


def _first_day(source: _Source) -> date | None:
    found = resolved_dates(source.text, source.created_at.date())
    return found[0][1] if found else None


_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def best_quote(asked: _Asked, source: _Source) -> str:
    """The capture's own words that speak most of the question: the whole of a short capture,
    else its best sentence (and the next one, while within MAX_QUOTE_CHARS)."""
    text = " ".join(source.text.split())
    if len(text) <= MAX_QUOTE_CHARS:
        return text
    sentences: list[str] = [s.strip() for s in _SENTENCE.findall(text) if s.strip()]
    if not sentences:
        return text[:MAX_QUOTE_CHARS].rstrip() + "…"

    at = max(range(len(sentences)), key=lambda i: (_weight(asked, sentences[i]), -i))
    quote = sentences[at]
    if at + 1 < len(sentences) and len(quote) + len(sentences[at + 1]) < MAX_QUOTE_CHARS:
        quote = f"{quote} {sentences[at + 1]}"
    return quote if len(quote) <= MAX_QUOTE_CHARS else quote[: MAX_QUOTE_CHARS - 1] + "…"


# -- with a model: its tool-calling loop over the same tools ---------------------------------


async def _model_answer(
    run: _Run, question: Question, limits: AskLimits, model: AskModel
) -> AsyncIterator[AskProgress]:
    """The model asks for tools (each run for this user only, its answer given back as data)
    until it answers, within `limits`; its answer's citations are checked against what the
    tools gave. ModelUnavailable when it fails or runs out of turns without an answer."""
    conversation: list[ChatTurn] = [*question.earlier, ChatTurn("user", question.text)]
    specs = tool_specs()
    tokens = 0
    for step in range(limits.max_steps):
        must_answer = step == limits.max_steps - 1 or tokens >= limits.max_tokens
        turn = await model.turn(conversation, specs, must_answer=must_answer)
        tokens += turn.prompt_tokens + turn.completion_tokens
        if turn.answer is not None:
            answer = checked_answer(turn, run.seen, read_question(question))
            async for said in _tell(answer, tokens=tokens, by_model=True):
                yield said
            return
        if must_answer or not turn.tool_calls:
            raise ModelUnavailable("the model gave no answer")
        calls = turn.tool_calls[: limits.max_calls_per_step]
        conversation.append(ChatTurn("assistant", tool_calls=calls))
        for call in calls:
            result: dict[str, Any] = {}
            async for told in run.call(call.name, _arguments(call), call.id):
                yield told
                if isinstance(told, ToolFinished):
                    result = told.result
            conversation.append(ChatTurn("tool", content=_as_data(result), tool_call_id=call.id))
    raise ModelUnavailable("the model ran out of turns")


def _arguments(call: ToolCall) -> dict[str, Any]:
    """The model's arguments as an object; anything else is given to the tool as nothing, and
    the tool says what is missing."""
    try:
        parsed = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _as_data(result: dict[str, Any]) -> str:
    """A tool's answer as the model reads it: JSON, cut to MAX_TOOL_RESULT_CHARS."""
    text = json.dumps(result, ensure_ascii=False)
    return text if len(text) <= MAX_TOOL_RESULT_CHARS else text[:MAX_TOOL_RESULT_CHARS] + "…"


_MARKER = re.compile(r"\[(\d{1,2})\]")


def checked_answer(turn: ModelTurn, seen: dict[str, _Source], asked: _Asked) -> Answer:
    """The model's answer with only the citations a tool gave this run (another user's id, or
    one made up, is dropped with its marker); each quote the capture's own words (else its
    best sentence); markers renumbered to follow the citations' order; NOTHING when no
    citation is left."""
    text = turn.answer or ""
    kept: dict[int, DraftCitation] = {}
    for n, draft in enumerate(turn.citations, start=1):
        if draft.capture_id in seen:
            kept[n] = draft
    order: list[int] = []
    for m in _MARKER.finditer(text):
        n = int(m[1])
        if n in kept and n not in order:
            order.append(n)
    unmarked = [n for n in kept if n not in order]
    order += unmarked
    number = {old: new for new, old in enumerate(order, start=1)}

    def renumber(m: re.Match[str]) -> str:
        n = int(m[1])
        return f"[{number[n]}]" if n in number else ""

    text = _MARKER.sub(renumber, text).strip()
    text = re.sub(r"[ \t]+([.,;:!?])", r"\1", re.sub(r"[ \t]{2,}", " ", text))
    if unmarked:
        text += " " + "".join(f"[{number[n]}]" for n in unmarked)
    citations = []
    for old in order:
        draft = kept[old]
        source = seen[draft.capture_id]
        quote = " ".join(draft.quote.split())
        own = " ".join(source.text.split())
        if not quote or quote.casefold() not in own.casefold():
            quote = best_quote(asked, source)
        citations.append(
            Citation(
                capture_id=source.id,
                bucket=source.bucket,
                title=source.title or quote[:60],
                quote=quote,
            )
        )
    if not citations:
        # An answer that cites none of the user's captures did not come from them, whatever
        # the model wrote: it is told as nothing found, never passed on.
        text = NOTHING
    return Answer(answer=text, citations=citations)


@dataclass(frozen=True)
class ThreadQuestion:
    """A question for a door that holds no conversation (GET /api/ask, MCP): its text, and the
    thread whose earlier turns count (None: a question on its own)."""

    text: str
    thread_id: str | None = None


async def ask_on_thread(
    user_id: str,
    asked: ThreadQuestion,
    now: datetime,
    limits: AskLimits,
    adapters: Adapters,
    threads: AskThreads,
    *,
    model: AskModel | None = None,
) -> Answered:
    """The answer to a question on a thread kept for the caller: the thread's earlier turns
    count, and the question and its answer join them (the last MAX_EARLIER_TURNS kept)."""
    new_question(asked.text)  # refused before anything is read
    thread = await threads.get(user_id, asked.thread_id) if asked.thread_id else None
    earlier = [(t.role, t.text) for t in thread.turns] if thread else []
    question = new_question(asked.text, earlier)
    done = await answer_of(ask(user_id, question, now, limits, adapters, model=model))
    if asked.thread_id is not None:
        said = [
            ThreadTurn(role="user", text=question.text),
            ThreadTurn(role="assistant", text=done.answer.answer),
        ]
        await _remember(user_id, asked.thread_id, said, now, threads, thread)
    return done


async def _remember(
    user_id: str,
    thread_id: str,
    said: list[ThreadTurn],
    now: datetime,
    threads: AskThreads,
    thread: AskThread | None,
) -> None:
    """The turns added to the thread under its ETag: one that changed meanwhile (another
    question on it) is read again, and the turns go after its own."""
    for _ in range(3):
        base = thread or AskThread(id=thread_id, user_id=user_id)
        turns = [*base.turns, *said][-MAX_EARLIER_TURNS:]
        try:
            await threads.save(base.model_copy(update={"turns": turns, "updated_at": now}))
            return
        except StaleItem:
            thread = await threads.get(user_id, thread_id)


async def answer_of(progress: AsyncIterator[AskProgress]) -> Answered:
    """The answer alone, for a door that does not stream (GET /api/ask, MCP)."""
    async for step in progress:
        if isinstance(step, Answered):
            return step
    raise ModelUnavailable("no answer")  # pragma: no cover - every path ends with one


def turns_of(messages: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """A client's conversation (AG-UI messages as JSON) as (role, words) turns."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            texts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
            content = "\n".join(str(p.get("text", "")) for p in texts)
        if isinstance(content, str) and m.get("role") in ("user", "assistant"):
            out.append((str(m["role"]), content))
    return out
