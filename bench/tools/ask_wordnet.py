"""`python -m bench.tools.ask_wordnet`: would WordNet bridge the words a person treats as one
("surgery" / "operation", "solicitor" / "lawyer", "flat" / "apartment")? The offline answer's
soft word match (`shared/services/ask_soft.py`) with a second way for a question's unheard term
to be matched: a candidate's word WordNet relates to it (`bench/data/wordnet_related.txt.gz`,
written by `bench/tools/synonyms.py`), credited WN_CREDIT of the term's weight, beside (the
better of the two) the single-word MiniLM match; a term near nothing either way still blanks
the soft match, as in the app.

Measured on the tuning parts (eleven then; `bench.ask.TUNING_SETS`) through the app's own
offline path (`bench.tools.ask_soft_words.measure`, each variant in `ask_offline._soft`'s
place), each `--variant` `RELATIONS:CREDIT` (relations of `s` same synset, `d` derivation, `u`
one up, `n` one down; "today": the app as it is), with `--file` choosing the table (e.g. one
written with `--senses 0`). Never the held-out sets.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench.ask import FIGURES
from bench.tools.synonyms import OUT as TABLE
from bench.tools.synonyms import parse_line

Table = dict[str, dict[str, frozenset[str]]]


def load_table(path: Path = TABLE) -> Table:
    """The generator's file as word -> relation -> words."""
    out: Table = {}
    with gzip.open(path, "rt") as lines:
        for line in lines:
            if line.startswith("#") or not line.strip():
                continue
            word, rel = parse_line(line.rstrip("\n"))
            out[word] = {r: frozenset(w) for r, w in rel.items()}
    return out


def base_forms(word: str) -> list[str]:
    """The word and what it may be the plural or third person of ("solicitors", "lorries")."""
    out = [word]
    if word.endswith("ies") and len(word) > 4:
        out.append(word[:-3] + "y")
    if word.endswith("es") and len(word) > 4:
        out.append(word[:-2])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        out.append(word[:-1])
    return out


def related_to(
    table: Mapping[str, Mapping[str, frozenset[str]]], word: str, relations: str
) -> set[str]:
    """The words `table` relates to `word` (or a base form of it) by any of `relations`."""
    out: set[str] = set()
    for form in base_forms(word):
        for relation in relations:
            out |= table.get(form, {}).get(relation, frozenset())
    return out


def wordnet_credits(
    table: Mapping[str, Mapping[str, frozenset[str]]],
    relations: str,
    credit: float,
    terms: Mapping[str, str],
    words: Mapping[str, set[str]],
) -> dict[str, dict[str, float]]:
    """Per unheard term (term -> the word asked), the captures (ids) holding a word WordNet
    relates to it, each credited `credit`: the word itself or a base form of it related."""
    out: dict[str, dict[str, float]] = {}
    for term, asked in terms.items():
        near = related_to(table, asked, relations)
        credits: dict[str, float] = {}
        if near:
            for word, ids in words.items():
                if any(form in near for form in base_forms(word)):
                    for i in ids:
                        credits[i] = credit
        out[term] = credits
    return out


def soft_with_wordnet(
    table: Table,
    relations: str,
    credit: float,
    guard: bool = True,
    made: list[tuple[str, str]] | None = None,
) -> Callable[..., Any]:
    """An `ask_offline._soft` that also credits WordNet's related words; without `guard` a
    term WordNet relates to a candidate's word is credited even where another unheard term is
    near nothing (the MiniLM match keeps its guard); `made` collects (term, word) pairs."""
    from shared.domain.errors import EmbedderUnavailable
    from shared.services import ask_offline, ask_soft

    async def _soft(run: Any, asked: Any, meaning: dict[str, float]) -> ask_soft.Soft:
        found = list(run.seen.values())
        held: set[str] = set().union(*(ask_offline._have(s) for s in found))
        anchor, weights, named = ask_offline.anchored_terms(asked, found)
        embedder = run.adapters.embedder
        weight = ask_offline._weigh(weights, meaning, embedder.min_similarity, named)
        best = sorted(
            (s for s in found if ask_offline._anchored(anchor, s)),
            key=lambda s: (-weight(s), s.id),
        )[: ask_offline.SOFT_CANDIDATES]
        terms = ask_soft.unheard(asked, held)
        words = ask_soft.vocabulary(best, set(asked.terms)) if terms else {}
        if not words:
            return {}
        out = wordnet_credits(table, relations, credit, terms, words)
        if made is not None:
            made.extend(
                (terms[t], w)
                for t in terms
                for w in words
                if any(f in related_to(table, terms[t], relations) for f in base_forms(w))
            )
        wordnet = {t: dict(c) for t, c in out.items() if c}
        line = embedder.word_line
        if line is not None and ask_soft.SOFT_CREDIT:
            try:
                rows = await embedder.word_similarities(list(terms.values()), list(words))
            except EmbedderUnavailable:
                rows = []
            for term, row in zip(terms, rows, strict=False):
                credits = out[term]
                for ids, cosine in zip(words.values(), row, strict=True):
                    if cosine >= line:
                        for i in ids:
                            credits[i] = max(credits.get(i, 0.0), ask_soft.SOFT_CREDIT * cosine)
        if any(not credits for credits in out.values()):
            return {} if guard else wordnet
        return out

    return _soft


def main(argv: list[str] | None = None) -> int:
    from bench.ask import TUNING_SETS
    from bench.stack import stack
    from bench.tools import ask_soft_words

    parser = argparse.ArgumentParser(prog="python -m bench.tools.ask_wordnet", description=__doc__)
    parser.add_argument(
        "--variant", action="append", default=[], help="RELATIONS:CREDIT[:FILE][:loose] or today"
    )
    parser.add_argument("--file", type=Path, default=TABLE)
    parser.add_argument("--parts", default=",".join(p for p, _, _ in TUNING_SETS))
    parser.add_argument("--json", type=Path, help="write the results here too")
    args = parser.parse_args(argv)
    tables: dict[str, Table] = {}
    variants: list[dict[str, Any]] = []
    names = []
    made: dict[str, list[tuple[str, str]]] = {}
    for spec in args.variant or ["today", "sdun:0.6"]:
        names.append(spec)
        if spec == "today":
            variants.append({})
        else:
            relations, credit, *rest = spec.split(":")
            loose = "loose" in rest
            path = [r for r in rest if r != "loose"]
            file = Path(path[0]) if path else args.file
            table = tables.setdefault(str(file), load_table(file))
            pairs = made.setdefault(spec, [])
            soft = soft_with_wordnet(table, relations, float(credit), not loose, pairs)
            variants.append({"_soft": soft})
    parts = [p for p in args.parts.split(",") if p]
    with stack():
        results = asyncio.run(ask_soft_words.measure(variants, parts))
    report = []
    for name, result in zip(names, results, strict=True):
        print(f"variant {name}")
        for part, n in result["counts"].items():
            s = result["sets"][part]
            figures = " / ".join(f"{s[f]:.3f}" for f in FIGURES)
            print(f"  {part:9} {figures}   ({' '.join(str(n[f]) for f in FIGURES)})")
        m = result["mean"]
        pairs = sorted(set(made.get(name, [])))
        if pairs:
            print(f"  {len(pairs)} WordNet pairs: " + ", ".join(f"{a}/{b}" for a, b in pairs))
        print("  mean      " + " / ".join(f"{m[f]:.3f}" for f in FIGURES))
        for scored in result["sets"].values():
            scored.pop("misses", None)
        report.append(
            {"variant": name, "counts": result["counts"], "sets": result["sets"], "mean": m}
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
