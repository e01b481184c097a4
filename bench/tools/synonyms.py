"""`python -m bench.tools.synonyms WORDNET_DIR`: regenerate `bench/data/wordnet_related.txt.gz`,
each English word with the words WordNet relates to it, for the offline answer's measure of
"words a person treats as one" (`bench/tools/ask_wordnet.py`): "surgery" / "operation",
"solicitor" / "lawyer", "flat" / "apartment".

WordNet 3.0 from Debian (`wordnet-base`, bookworm main): `cd /tmp && apt-get download
wordnet-base && dpkg-deb -x wordnet-base_*.deb wn`, then WORDNET_DIR is
`/tmp/wn/usr/share/wordnet` (its `index.noun`, `data.noun`, `index.verb`, `data.verb`; the
format is wndb(5WN)). Run it again with another WordNet and commit the file with it.

Only nouns and verbs, lowercase single words of MIN_LETTERS letters or more; for each word all
its senses (`--senses N`: its first N that tagged texts used, most frequent first, or its
first alone where none were), and for each sense the words of four relations, tagged on the
line: `s` the same synset, `d` derivation (`+`, word to word: "survey" / "surveyor", "agency" /
"agent"), `u` one hop up (hypernym, `@`/`@i`: "solicitor" -> "lawyer"), `n` one hop down
(hyponym, `~`/`~i`: "lawyer" -> "solicitor"), at most CAP words a relation a part of speech.
A line: `word<TAB>s:a,b<TAB>d:c<TAB>u:e<TAB>n:f,g` (a relation with no word left out).

WordNet 3.0's licence (as the head of its data files gives it), written as the file's first
lines:
"""

from __future__ import annotations

import argparse
import gzip
import re
from collections.abc import Iterable
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "wordnet_related.txt.gz"
# Senses kept a word: 0 all (the committed file), else its first N, tagged ones only (a word
# no tagged text used keeps its first): that loses "flat" / "apartment" (its 7th noun sense),
# "mum" / "mother" (3rd), "solicitor" / "lawyer", and measured no better (ASK_SETS.md).
SENSES = 0
MIN_LETTERS = 3
CAP = 12
POS = {"n": "noun", "v": "verb"}
RELATIONS = ("s", "d", "u", "n")
POINTERS = {"+": "d", "@": "u", "@i": "u", "~": "n", "~i": "n"}

LICENCE = """\
This software and database is being provided to you, the LICENSEE, by Princeton University
under the following license. By obtaining, using and/or copying this
software and database, you agree that you have read, understood, and will comply with these
terms and conditions.: Permission to use, copy, modify and distribute this software and
database and its documentation for any purpose and without fee or royalty is hereby granted,
provided that you agree to comply with the following copyright notice and statements,
including the disclaimer, and that the same appear on ALL copies of the software, database
and documentation, including modifications that you make for internal use or for
distribution. WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. THIS
SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR
WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY
MAKES NO REPRESENTATIONS OR WARRANTIES OF MERCHANT- ABILITY OR FITNESS FOR ANY PARTICULAR
PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT INFRINGE
ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS. The name of Princeton
University or Princeton may not be used in advertising or publicity pertaining to distribution
of the software and/or database. Title to copyright in this software, database and any
associated documentation shall at all times remain with Princeton University and LICENSEE
agrees to preserve same."""
__doc__ += "\n" + LICENCE

_WORD = re.compile(rf"[a-z]{{{MIN_LETTERS},}}")

# A synset: its words (lemma, as written in the data file) and its pointers
# (symbol, target synset key, source word number, target word number; 0 = the whole synset).
Synset = tuple[list[str], list[tuple[str, str, int, int]]]


def parse_data_line(line: str, pos: str) -> tuple[str, Synset] | None:
    """One line of a `data.*` file as (its key `pos:offset`, its synset); None for the licence
    lines at the top (they start with two spaces)."""
    if line.startswith(" ") or not line.strip():
        return None
    fields = line.split(" | ", 1)[0].split()
    offset = fields[0]
    count = int(fields[3], 16)
    words = [fields[4 + 2 * i] for i in range(count)]
    at = 4 + 2 * count
    pointers: list[tuple[str, str, int, int]] = []
    for i in range(int(fields[at])):
        symbol, target, target_pos, source_target = fields[at + 1 + 4 * i : at + 5 + 4 * i]
        target_pos = "a" if target_pos == "s" else target_pos
        pointers.append(
            (
                symbol,
                f"{target_pos}:{target}",
                int(source_target[:2], 16),
                int(source_target[2:], 16),
            )
        )
    return f"{pos}:{offset}", (words, pointers)


def parse_index_line(line: str) -> tuple[str, list[str], int] | None:
    """One line of an `index.*` file as (lemma, its synset offsets most frequent first, how
    many of its senses tagged texts used); None for the licence lines."""
    if line.startswith(" ") or not line.strip():
        return None
    fields = line.split()
    lemma, p_cnt = fields[0], int(fields[3])
    tagged = int(fields[5 + p_cnt])
    return lemma, fields[6 + p_cnt :], tagged


def _lemma(word: str) -> str:
    """A data file's word without its adjective marker ("(a)") and lowercased."""
    return re.sub(r"\(.*\)$", "", word).lower()


def _usable(word: str) -> bool:
    return bool(_WORD.fullmatch(word))


def related(
    index: Iterable[tuple[str, str, list[str], int]],
    synsets: dict[str, Synset],
    senses_kept: int = SENSES,
) -> dict[str, dict[str, list[str]]]:
    """Each usable lemma of `index` ((pos, lemma, offsets, tagged) rows) with its related words
    per relation, over its first `senses_kept` senses (0: all of them)."""
    out: dict[str, dict[str, list[str]]] = {}
    for pos, lemma, offsets, tagged in index:
        if not _usable(lemma):
            continue
        first = offsets[: senses_kept if tagged else 1][: max(tagged, 1)]
        senses = first if senses_kept else offsets
        rel = out.setdefault(lemma, {r: [] for r in RELATIONS})
        for offset in senses:
            key = f"{pos}:{offset}"
            if key not in synsets:
                continue
            words, pointers = synsets[key]
            lemmas = [_lemma(w) for w in words]
            rel["s"].extend(lemmas)
            own = lemmas.index(lemma) + 1 if lemma in lemmas else 0
            for symbol, target, source_no, target_no in pointers:
                relation = POINTERS.get(symbol)
                if relation is None or target not in synsets:
                    continue
                if source_no and source_no != own:
                    continue  # a lexical pointer of another word of this synset
                targets = [_lemma(w) for w in synsets[target][0]]
                rel[relation].extend(targets[target_no - 1 : target_no] if target_no else targets)
    for lemma, rel in out.items():
        for relation, words in rel.items():
            kept = [w for w in dict.fromkeys(words) if _usable(w) and w != lemma]
            rel[relation] = kept[:CAP]
    return {lemma: rel for lemma, rel in out.items() if any(rel.values())}


def read(folder: Path, senses_kept: int = SENSES) -> dict[str, dict[str, list[str]]]:
    synsets: dict[str, Synset] = {}
    index: list[tuple[str, str, list[str], int]] = []
    for pos, name in POS.items():
        for line in (folder / f"data.{name}").read_text(encoding="latin-1").splitlines():
            if parsed := parse_data_line(line, pos):
                synsets[parsed[0]] = parsed[1]
        for line in (folder / f"index.{name}").read_text(encoding="latin-1").splitlines():
            if row := parse_index_line(line):
                index.append((pos, *row))
    merged: dict[str, dict[str, list[str]]] = {}
    # A noun's and a verb's senses together.
    for lemma, rel in related(index, synsets, senses_kept).items():
        mine = merged.setdefault(lemma, {r: [] for r in RELATIONS})
        for relation, words in rel.items():
            mine[relation] = list(dict.fromkeys(mine[relation] + words))[: 2 * CAP]
    return merged


def lines(table: dict[str, dict[str, list[str]]]) -> list[str]:
    out = []
    for lemma in sorted(table):
        parts = [f"{r}:{','.join(w)}" for r, w in table[lemma].items() if w]
        out.append("\t".join([lemma, *parts]))
    return out


def parse_line(line: str) -> tuple[str, dict[str, list[str]]]:
    """A line of the written file as (word, {relation: words})."""
    word, *parts = line.split("\t")
    return word, {p[0]: p[2:].split(",") for p in parts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tools.synonyms", description=__doc__)
    parser.add_argument("wordnet", type=Path, help="the folder of WordNet's data and index files")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--senses", type=int, default=SENSES, help="senses a word, 0: all")
    args = parser.parse_args(argv)
    table = read(args.wordnet, args.senses)
    header = [f"# {row}" for row in LICENCE.splitlines()]
    header.append("# word<TAB>s:same synset<TAB>d:derivation<TAB>u:one up<TAB>n:one down")
    text = "\n".join([*header, *lines(table)]) + "\n"
    with gzip.GzipFile(args.out, "wb", mtime=0) as out:
        out.write(text.encode())
    print(f"{len(table)} words, {args.out.stat().st_size} bytes: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
