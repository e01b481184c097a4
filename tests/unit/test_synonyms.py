"""WordNet's related words (bench/tools/synonyms.py): its data and index lines parsed as
wndb(5WN) writes them, the relations kept per word (same synset, derivation word to word, one
hop up and down) over its first senses only, and the written line read back."""

from __future__ import annotations

import gzip
from pathlib import Path

from bench.tools import synonyms
from bench.tools.synonyms import lines, parse_data_line, parse_index_line, parse_line, related

# Hand-made lines in WordNet 3.0's form: offset, lex file, pos, word count (hex), words with
# lex ids, pointer count, pointers (symbol, offset, pos, source/target), then the gloss.
SURGERY = "00000100 04 n 02 surgery 0 operation 0 002 @ 00000300 n 0000 + 00000400 v 0101 | cutting"
APARTMENT = "00000200 06 n 02 flat 0 apartment 0 001 ~ 00000500 n 0000 | rooms to live in"
PROCEDURE = "00000300 04 n 01 procedure 0 000 | a way of doing"
OPERATE = "00000400 29 v 02 operate 0 run 0 000 | perform surgery"
STUDIO = "00000500 06 n 02 studio 0 Studio_Flat 0 000 | one room"
LAND = "00000600 15 n 02 flat 0 plain 0 000 | level land"
SLOPE = "00000700 15 n 01 flat 1 000 | a third sense"


def _synsets() -> dict[str, synonyms.Synset]:
    out = {}
    for line, pos in [
        (SURGERY, "n"), (APARTMENT, "n"), (PROCEDURE, "n"), (OPERATE, "v"), (STUDIO, "n"),
        (LAND, "n"), (SLOPE, "n"),
    ]:  # fmt: skip
        parsed = parse_data_line(line, pos)
        assert parsed is not None
        out[parsed[0]] = parsed[1]
    return out


def test_a_data_line_is_its_words_and_pointers() -> None:
    key, (words, pointers) = parse_data_line(SURGERY, "n") or ("", ([], []))
    assert key == "n:00000100"
    assert words == ["surgery", "operation"]
    assert pointers == [("@", "n:00000300", 0, 0), ("+", "v:00000400", 1, 1)]
    assert parse_data_line("  1 This software and database is being provided", "n") is None


def test_an_index_line_is_its_senses_most_frequent_first() -> None:
    line = "flat n 3 2 @ ~ 3 2 00000200 00000600 00000700  "
    assert parse_index_line(line) == ("flat", ["00000200", "00000600", "00000700"], 2)
    assert parse_index_line("  2 Princeton University under the following license.") is None


def test_relations_over_the_first_senses() -> None:
    index = [
        ("n", "surgery", ["00000100"], 1),
        ("n", "flat", ["00000200", "00000600", "00000700"], 2),
        ("n", "studio", ["00000500"], 0),
    ]
    table = related(index, _synsets(), senses_kept=3)
    assert table["surgery"]["s"] == ["operation"]
    assert table["surgery"]["u"] == ["procedure"]
    # The derivation pointer is word to word: surgery (word 1) to operate (word 1), not "run".
    assert table["surgery"]["d"] == ["operate"]
    # Two senses tagged: the apartment and the land, not the third; one hop down the
    # apartment's hyponym's single words ("studio"; "studio_flat" is two words).
    assert table["flat"]["s"] == ["apartment", "plain"]
    assert table["flat"]["n"] == ["studio"]


def test_an_untagged_word_keeps_its_first_sense_unless_all_are_asked() -> None:
    index = [("n", "flat", ["00000600", "00000200"], 0)]
    assert related(index, _synsets(), senses_kept=3)["flat"]["s"] == ["plain"]
    assert related(index, _synsets(), senses_kept=0)["flat"]["s"] == ["plain", "apartment"]


def test_the_written_file_reads_back(tmp_path: Path) -> None:
    table = {"surgery": {"s": ["operation"], "d": ["operate"], "u": [], "n": []}}
    assert lines(table) == ["surgery\ts:operation\td:operate"]
    assert parse_line(lines(table)[0]) == ("surgery", {"s": ["operation"], "d": ["operate"]})


def test_the_committed_file_carries_the_licence_and_bridges_known_pairs() -> None:
    with gzip.open(synonyms.OUT, "rt") as text:
        head = [next(text) for _ in range(20)]
        rows = dict(parse_line(line.rstrip("\n")) for line in text if not line.startswith("#"))
    assert any("Copyright 2006 by Princeton University" in line for line in head)
    assert "operation" in rows["surgery"]["s"]
    assert "agent" in rows["agency"]["d"]
    assert "apartment" in rows["flat"]["s"] and "lawyer" in rows["solicitor"]["u"]
    assert synonyms.OUT.stat().st_size < 2_000_000
