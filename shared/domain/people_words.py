"""The words the people rules read around a name, shared by the rules for capitalised and
lowercase names: what is never a name, what a person does, what comes before a place or a
thing; and how the rules look between a capture's words."""

from __future__ import annotations

import re

from shared.domain.calendar_words import (
    MONTHS,
    MONTHS_ELSEWHERE,
    TIME_WORDS,
    WEEKDAYS,
    WEEKDAYS_ELSEWHERE,
)

# German's pronouns, determiners, numbers and small adverbs, a closed class that no English
# list holds and a few name lists do ("schickt mir seine Daten", "mit uns allen", "und zwei
# Pflegekräfte", "sonst kommt es nicht").
GERMAN_SMALL_WORDS = {
    "mir", "mich", "dir", "dich", "ihm", "ihn", "ihnen", "uns", "euch", "sich", "mein",
    "meine", "meinen", "meinem", "meiner", "dein", "deine", "deinen", "deinem", "deiner",
    "sein", "seine", "seinen", "seinem", "seiner", "ihre", "ihren", "ihrem", "ihrer",
    "unser", "unsere", "unseren", "unserem", "unserer", "eure", "euren", "alle", "allen",
    "alles", "allem", "aller", "jede", "jeden", "jeder", "jedes", "kein", "keine", "keinen",
    "keinem", "keiner", "nichts", "etwas", "sonst", "zwei", "drei", "vier", "fünf", "sechs",
    "sieben", "acht", "neun", "zehn", "zwölf", "heute", "morgen", "gestern", "jetzt",
    "dann", "wieder", "immer", "schon", "noch", "auch", "nur", "sehr", "ganz", "gern",
    "gerne", "bitte", "danke", "hier", "dort", "mal", "viel", "viele", "vielen",
    # and its helper verbs ("oma wird am 14. März 90")
    "wird", "werden", "wurde", "wurden", "hatte", "hatten", "kann", "konnte", "muss",
    "musste", "soll", "sollte", "wollte", "möchte", "habe", "haben", "sind",
}  # fmt: skip
# Capitalised words that start a capture or name a time, not a person: the verbs a capture
# starts with, pronouns and fillers, holidays, days and months (full and short, and in the
# other languages read below, but for those that are also first names).
NOT_NAMES = {
    "I", "I'm", "I'll", "Call", "Email", "Text", "Ask", "Tell", "Remind", "Remember", "Meet",
    "Message", "Ring", "Phone", "Send", "Buy", "Book", "Pay", "Check", "Talk", "The", "A",
    "Need", "Get", "Pick", "Invite", "Thank", "Follow", "Catch", "Schedule", "Set", "Write",
    "Review", "Sign", "Transfer", "Return", "Renew", "Cancel", "Swap", "Finish", "Paint",
    "Move", "Order", "Pitch", "Apply", "Share", "Visit", "Fix", "Collect", "Drop", "Bring",
    "Take", "Give", "Lend", "Borrow", "Help", "See", "Find", "Make", "Sort", "Plan",
    "Organise", "Organize", "Arrange", "Confirm", "Update", "Reply", "Chase", "Contact",
    "Post", "Print", "Read", "Watch", "Try", "Start", "Fill", "Congratulate",
    "Today", "Tomorrow", "Tonight", "Next", "This", "Note", "Idea", "What", "Which", "Maybe",
    "Should",
    "Wish", "It", "We", "He", "She", "They", "My", "Our", "Don't", "Please", "Also", "And",
    "But", "If", "When", "Before", "After", "About", "For", "With", "From", "To", "An",
    "Christmas", "Easter", "Halloween", "Diwali", "Eid", "Hanukkah", "Ramadan", "New", "Year",
    "Navidad", "Nochebuena", "Pascua", "Weihnachten", "Ostern", "Silvester", "Natale",
    "Pasqua", "Natal",
    *(d.title() + "s" for d in WEEKDAYS),
    "Jan", "Feb", "Mar", "Apr", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
    *(d.title() for d in WEEKDAYS), *(m.title() for m in MONTHS),
    *(d.title() for days in WEEKDAYS_ELSEWHERE for d in days),
    *(m.title() for months in MONTHS_ELSEWHERE for m in months),
    # German's small words where a sentence starts ("Alles Gute", "Heute"), but those
    # that are first names in English too
    *(w.title() for w in GERMAN_SMALL_WORDS - {"allen", "mir", "nur", "mich", "aller"}),
} - {"Maja", "Mei", "Domingo", "Domenica"}  # fmt: skip
# Nationalities and languages ("the Lebanese place", "Thai food", "Spanish lessons").
NATIONALITIES = {
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
    # and the peoples and ages of history ("viking teeth", "Victorian terrace")
    "Viking", "Vikings", "Roman", "Romans", "Celtic", "Norse", "Victorian", "Edwardian",
    "Medieval", "Gothic", "Baroque", "Neolithic",
}  # fmt: skip
# German's verbs said with "es" and its "'s" ("wie geht's", "gibt's", "klappt's"): the "'s"
# is "es", not a possessive.
GERMAN_ES_VERBS = {"geht", "gibt", "klappt", "passt", "steht", "läuft", "reicht", "tut"}
# The same in lowercase, with the times: never a name, whatever stands around it.
LOWER_NOT_NAMES = (
    TIME_WORDS
    | {w.lower() for w in NOT_NAMES}
    | {w.lower() for w in NATIONALITIES}
    | GERMAN_SMALL_WORDS
    | GERMAN_ES_VERBS
)
# Family words name a person on their own, capitalised or not ("ask nan", "Mum's birthday").
FAMILY = {
    "mum", "mom", "mam", "dad", "nan", "nana", "nanna", "gran", "granny", "grandma",
    "grandad", "granddad", "grandpa", "grandmother", "grandfather", "oma", "opa", "abuela",
    "abuelo", "nonna", "nonno", "yaya", "yayo", "amona", "aitona",  # "amona": Basque's
    "mamá", "papá", "mama", "papa", "mami", "papi", "mutti", "vati",  # Spanish, German
}  # fmt: skip
# Kinship words said before a name stay part of it, as people file them ("Grandma Rose",
# "Uncle Padraig", "Abuela Carmen"); alone, only the family words above name someone.
KIN = {
    "aunt", "auntie", "aunty", "uncle", "cousin", "granny", "grandma", "grandad", "granddad",
    "grandpa", "nan", "nana", "nanna", "gran", "nonna", "nonno", "oma", "opa", "abuela",
    "abuelo", "abuelita", "abuelito", "yaya", "yayo", "amona", "aitona", "tía", "tia", "tío",
    "tio", "tante", "onkel", "tata",
    "great-aunt", "great-uncle", "grandmother", "grandfather", "nain", "taid", "mamgu",
    "tadcu", "granda", "grampa", "grandpops",
}  # fmt: skip
# Words that are no one's name when written in lowercase: what a lowercase word in a person's
# place (before "says", after "ask", before "'s") usually is instead: pronouns, articles,
# prepositions, helpers, times, roles and the plain nouns of errands and work.
COMMON = {
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
    "toda", "todos", "todas", "nadie", "alguien", "hoy", "ayer",
    "aber", "auch", "noch", "schon", "nicht", "nur", "sehr", "gut", "mais", "très", "appt", "appts",
    "engineer", "guard", "architect", "surveyor", "lawyer", "solicitor", "accountant",
    "cleaner", "nanny", "childminder", "delivery", "parcel", "package", "phone", "women", "men",
    "children", "ladies", "lads", "channel", "channels", "group", "chat", "thread",
}  # fmt: skip
# A lowercase word is a person at the start of a clause before these (as after a contact verb,
# lowercase_names.py): "ravi says", "gary can start", "hana to send the invites", "jürgen
# schickt die strings". Verbs of people: said, wanted, owned, had.
SUBJECT_VERBS = {
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
# After a sentence's first word, these say it was a person ("Ravi is", "Chen mentioned"):
# otherwise a capitalised first word is the capture's noun ("Lunch w/ Fatima", "Coffee with").
AFTER_A_SUBJECT = {
    "is", "was", "are", "were", "has", "had", "have", "says", "said", "wants", "wanted",
    "mentioned", "just", "loves", "loved", "likes", "liked", "prefers", "preferred", "and",
    "doesn't", "didn't", "can't", "won't", "isn't", "wasn't", "hasn't", "will", "would",
    "could", "should", "might", "needs", "needed", "thinks", "thought", "told", "asked",
    "called", "texted", "emailed", "rang", "turns", "turned", "got", "gets", "starts",
    "started", "recommended", "lent", "sent", "gave", "also", "still", "from", "owes",
    "knows", "knew", "hates", "hated", "left", "came", "comes",
    "seems", "looks", "went", "goes", "lives", "works", "invited", "offered", "suggested",
}  # fmt: skip
# Words that follow a sentence's subject but are no verb ("Porto and", "Figma just").
_NOT_VERBS = {"and", "also", "just", "still", "from"}
# What only a person does after their name ("Bex says", "hollis wants", "con did a speech").
A_PERSONS_VERBS = (SUBJECT_VERBS | AFTER_A_SUBJECT) - _NOT_VERBS
# Verbs that things do as well as people ("the receipt is in the glovebox", "workaround sent",
# "library books back"): after a word the lexicon does not know, they say nothing of a person.
WEAK_VERBS = {
    "is", "isn't", "isnt", "was", "wasn't", "wasnt", "are", "were", "has", "had", "have", "can",
    "cant", "can't", "could", "couldnt", "couldn't", "will", "wont", "won't", "would", "should",
    "might", "must", "got", "gets", "sent", "sends", "left", "leaves", "came", "comes",
    "coming", "goes", "went", "going", "running", "starts", "starting", "finished", "fixed",
    "merged", "does", "did", "didn't", "didnt", "doesn't", "doesnt", "dont", "don't", "books",
    "booked", "found", "owns", "signed", "checks", "ist", "hat", "kommt", "es", "está",
    "tiene", "viene", "needs", "needed", "covering", "just", "also", "still", "from", "and",
    "turns", "turned", "looks", "seems", "works", "lives",
}  # fmt: skip
# Pasts that no "-ed" shows ("uncle threw", "auntie came", "jonno fell at the wall").
IRREGULAR_PASTS = {
    "came", "went", "was", "were", "rang", "had", "got", "did", "saw", "took", "gave", "sent",
    "thought", "brought", "bought", "caught", "felt", "heard", "lost", "met", "dug", "ate",
    "drank", "ran", "swam", "wrote", "broke", "flew", "drove", "rode", "sang", "spoke",
    "threw", "woke", "wore", "chose", "forgot", "froze", "knew", "meant", "paid", "sold",
    "slept", "spent", "stood", "taught", "began", "blew", "built", "drew", "fought", "grew",
    "held", "made", "shook", "kept", "found", "became", "fell", "left", "told", "said",
}  # fmt: skip
# A message's sign-off, before a comma and its writer's name ("Kind regards, Glesni").
SIGN_OFFS = {"regards", "thanks", "cheers", "wishes", "best", "love", "sincerely", "faithfully"}
# What joins two names in a list ("gav and tom", "Pilar y Lucía", "majella n bríd").
CONJUNCTIONS = {"and", "y", "und", "et", "e", "n"}
# The pronouns and helper verbs that follow a verb ("tell me", "to be"): never a name.
OBJECTS = {"me", "him", "her", "us", "them", "you", "it", "be", "do"}
# "pitch it to marguerite?", "send the variation to gary + pay": what is handed to someone.
GIVEN = {
    "it", "them", "this", "that", "these", "those", "him", "her", "over", "back", "across",
    "one", "something", "everything", "variation", "invite", "invites", "link", "card",
    "form", "note", "email", "message", "details", "photos", "photo", "keys", "key",
}  # fmt: skip
# A capitalised word after these is a place or a firm ("in Berlin", "at Google", "the Peak").
# Not "a": Spanish and Portuguese say "a Lucía" for "to Lucía".
PLACE_WORDS = {
    "in", "at", "the", "near", "via", "around", "across", "through", "nach", "en",
    "semana",  # "Semana Santa", Holy Week
}  # fmt: skip
# After "to", a person ("send it to Sofia") unless someone goes there ("flying to Porto").
TO_A_PLACE = {
    "move", "moves", "moving", "moved", "fly", "flies", "flying", "flew", "flight", "flights",
    "go", "goes", "going", "went", "gone", "trip", "trips", "travel", "travelling",
    "traveling", "drive", "driving", "drove", "train", "trains", "walk", "walks", "walking",
    "ticket", "tickets", "return", "returning", "holiday", "holidays", "back", "relocate",
    "relocating", "emigrate", "emigrating", "commute", "bus", "ride", "road", "way", "route",
    "journey", "visit", "visiting", "cycle", "cycling", "sail", "sailing", "ferry", "coach",
    "get", "getting", "head", "heading", "taxi", "cab", "uber", "lift", "come", "coming",
    "ship", "shipping",
}  # fmt: skip
# Capitalised words after these are things in German or Spanish ("die Hamburger
# Rechnungen", "el Prado"); English articles are in PLACE_WORDS.
ARTICLES = {
    "der", "die", "das", "den", "dem", "des", "ein", "eine", "einen", "el", "los", "las",
    "la", "le", "les", "un", "una", "our", "my", "your", "their", "his", "her",
    # German's article in a preposition, and the words said before a time ("im Sommer",
    # "nächsten Sommer", "letzten Winter"): a noun follows.
    "im", "zum", "zur", "vom", "beim", "ins", "nächsten", "nachsten", "letzten", "diesen",
    "jeden", "kommenden",
}  # fmt: skip
# Capitalised words that make a phrase a place, a firm or a thing ("App Store", "Red Lion",
# "Topps Tiles", "Offline mode"), not a person.
THINGS = {
    "app", "apps", "store", "shop", "tiles", "lion", "arms", "inn", "pub", "bar", "cafe",
    "café", "restaurant", "kitchen", "street", "st", "road", "rd", "lane", "avenue", "ave",
    "square", "park", "house", "hall", "centre", "center", "library", "hospital", "school",
    "college", "university", "uni", "church", "station", "airport", "bank", "building",
    "tower", "bridge", "depot", "office", "gym", "club", "studio", "market", "mall", "hotel",
    "team", "teams", "group", "ltd", "inc", "plc", "co", "sons", "partners", "logistics",
    "freight", "offline", "online", "mode", "maps", "cloud", "pro", "day", "night", "week",
    "weekend", "mobile", "web", "sprint", "version", "planning",
}  # fmt: skip
# How the rules read around a word of the capture (`words`: its matches, in order).
POSSESSIVE = re.compile(r"['\u2019]s$")
# Where a clause breaks, so the word after it starts a new one.
CLAUSE_BREAK = re.compile(r"[.!?;:,()\[\]\n+/&\u2013\u2014-]|[^\w\s'\u2019]")


def gap_after(text: str, words: list[re.Match[str]], i: int) -> str:
    """The text between `words[i]` and the next word ("" after the last)."""
    return text[words[i].end() : words[i + 1].start()] if i + 1 < len(words) else ""


def capitalised(word: str) -> str:
    return word[:1].upper() + word[1:]


# What says the next word is what someone is called ("called her Ada", "is called kit", "a
# little girl, Ivy"): a name whatever lists hold it.
_NAMED_AFTER = re.compile(
    r"\b(?:(?:called|named|calling|naming|christened)(?: (?:her|him))? "
    r"|(?:boy|girl|baby|son|daughter), ?)(?=[^\W\d_])",
    re.IGNORECASE,
)


def named_at(text: str) -> frozenset[int]:
    """Where in `text` a word starts that is what someone is called: after "called"/"named"
    (and "her", "him"), or after a child's word and a comma ("a little boy, Reggie")."""
    lowered = text.lower()
    if not any(cue in lowered for cue in _NAMED_CUES):  # most captures: no regex at all
        return frozenset()
    return frozenset(match.end() for match in _NAMED_AFTER.finditer(text))


_NAMED_CUES = ("call", "nam", "christen", "boy,", "girl,", "baby,", "son,", "daughter,")
