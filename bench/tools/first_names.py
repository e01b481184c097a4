"""`python -m bench.tools.first_names`: regenerate `shared/domain/first_names.txt`, the lexicon
of first names the people rules read (shared/domain/details.py), from Faker's person providers,
and `shared/domain/english_words.txt.gz`, the English words they read (Debian's `wbritish`,
SCOWL size 50: apt-get install wbritish): its lowercase words tell a word no list names
("keiko", "femi") from a thing ("receipt", "dinosaurs"), its proper nouns a place or a brand
("Berlin", "Lego") from someone.

Two MIT-licensed sources, both pinned: Faker for Python (requirements-dev.txt) and
@faker-js/faker from the npm registry (fetched by `npm pack` into a temporary folder and read
with `node`, so the web app's dependencies do not grow), whose lists hold more names from
India, Nigeria, Ghana, Italy and France. Every name written in the Latin script is taken
(Cyrillic, Greek, Arabic, Devanagari... are left out: the rules read Latin-script captures),
but Icelandic's long list. A name that is also a common English word ("will", "rose",
"grant") is marked, from the word list of Debian's `wbritish-small` (SCOWL, permissive:
apt-get install wbritish-small): written in lowercase it is a name only where the sentence
says so. Run it again after upgrading a pin and commit the file with it."""

from __future__ import annotations

import argparse
import gzip
import importlib
import json
import pkgutil
import subprocess
import tarfile
import tempfile
import unicodedata
from pathlib import Path

import faker
import faker.providers.person as person

from shared.domain.details import inflection_stems

OUT = Path(__file__).resolve().parents[2] / "shared" / "domain" / "first_names.txt"
WORDS = Path("/usr/share/dict/british-english-small")
EVERYDAY = Path("/usr/share/dict/british-english")
WORDS_OUT = OUT.with_name("english_words.txt.gz")
FAKER_JS = "@faker-js/faker@10.6.0"
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
LONG_TAIL = {"en", "js:en"}


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
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tools.first_names", description=__doc__)
    parser.add_argument("--words", type=Path, default=WORDS, help="English words, one a line")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--everyday", type=Path, default=EVERYDAY, help="the longer list")
    parser.add_argument("--words-out", type=Path, default=WORDS_OUT)
    args = parser.parse_args(argv)
    words = {
        line.strip()
        for line in args.words.read_text(encoding="utf-8").splitlines()
        if line.strip().islower()
    }
    names = first_names()
    header = [
        "# First names, lowercase, one a line; a tab and 'w' marks a name that is also a",
        "# common English word, 'r' one found only in the long English lists.",
        "# Generated by bench/tools/first_names.py (do not edit by hand)",
        f"# from Faker {faker.VERSION} (MIT License, Copyright (c) 2012 Daniele Faraglia),",
        f"# faker/providers/person/*, and {FAKER_JS} (MIT License, Faker - Copyright (c)",
        "# 2022-2025, faker.js - Copyright (c) 2011-2020 Marak Squires): the Latin-script",
        "# first names of every locale but is_IS; words from Debian's wbritish-small (SCOWL,",
        "# Copyright 2000-2011 Kevin Atkinson, permissive).",
        f"# {len(names)} names.",
    ]
    words = (words - NAMES_FIRST) | UNTICKED
    lines = [
        f"{name}\tw" if name in words else f"{name}\tr" if locales <= LONG_TAIL else name
        for name, locales in sorted(names.items())
    ]
    args.out.write_text("\n".join(header + lines) + "\n", encoding="utf-8")
    marked = {kind: sum(ln.endswith(f"\t{kind}") for ln in lines) for kind in ("w", "r")}
    print(f"{args.out}: {len(names)} names, {marked['w']} words, {marked['r']} rare")
    write_words(args.everyday, args.words_out)
    return 0


def write_words(source: Path, out: Path) -> None:
    """The list's words of letters (no possessives), gzipped: lowercase words but those that
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
    # mtime=0: the same list gives the same bytes.
    with gzip.GzipFile(out, "wb", compresslevel=9, mtime=0) as packed:
        packed.write(("\n".join(header + words) + "\n").encode("utf-8"))
    print(f"{out}: {len(words)} words")


if __name__ == "__main__":
    raise SystemExit(main())
