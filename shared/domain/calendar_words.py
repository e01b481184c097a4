"""How days and months are written, in English and in the other languages people capture in:
what the due-date rules read as a day, and the people rules never read as a name."""

from __future__ import annotations

import calendar

WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
MONTHS = [m.lower() for m in calendar.month_name[1:]]
# The same days and months in the other languages people capture in (French, Spanish,
# German, Italian, Portuguese, Dutch, Polish, Swedish), lowercase, Monday and January first;
# Polish as it is said with a date or after "w" ("w sobotę", "5 grudnia").
WEEKDAYS_ELSEWHERE = [
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
MONTHS_ELSEWHERE = [
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
# Lowercase weekdays, months and their short forms: times, never names.
TIME_WORDS = {
    *WEEKDAYS, *MONTHS, *(d for days in WEEKDAYS_ELSEWHERE for d in days),
    "mon", "tue", "tues", "wed", "weds", "thu", "thur", "thurs", "fri", "sat", "sun",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
    "today", "tomorrow", "tmrw", "tmw", "tonight", "the",
}  # fmt: skip
