"""The offline model's examples, K-fold cross-validated: each fold is classified by the app's
own classifier built from the other K-1 folds, so no example votes for itself."""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bench.figures import Judged, figures
from bench.labelled import AMBIGUOUS, UNINTELLIGIBLE, LabelledCapture
from shared.domain.outcomes import decide

EXAMPLES = (
    Path(__file__).resolve().parent.parent / "shared" / "adapters" / "classifier" / "examples.json"
)
SEED = 20  # a fixed shuffle: the same folds on every run
# Example groups that are not buckets, as the labelled sets call them.
_LABELS = {"misunderstood": UNINTELLIGIBLE, "vague": AMBIGUOUS}


def folds(examples: dict[str, list[str]], k: int) -> list[dict[str, list[str]]]:
    """K folds, each holding about 1/K of every group's examples (stratified)."""
    out: list[dict[str, list[str]]] = [{group: [] for group in examples} for _ in range(k)]
    rng = random.Random(SEED)
    for group, texts in examples.items():
        shuffled = list(texts)
        rng.shuffle(shuffled)
        for i, text in enumerate(shuffled):
            out[i % k][group].append(text)
    return out


def cross_validate(k: int, examples_path: Path = EXAMPLES, encoder: str = "minilm") -> dict:
    from shared.adapters.classifier.offline import OfflineClassifier

    examples = json.loads(examples_path.read_text(encoding="utf-8"))
    parts = folds(examples, k)
    judged: list[Judged] = []
    with tempfile.TemporaryDirectory(prefix="bench-folds-") as tmp:
        for held_out, part in enumerate(parts):
            train = {
                group: [t for i, p in enumerate(parts) if i != held_out for t in p[group]]
                for group in examples
            }
            path = Path(tmp) / f"fold-{held_out}.json"
            path.write_text(json.dumps(train), encoding="utf-8")
            classifier = OfflineClassifier(examples_path=path, encoder=encoder)  # type: ignore[arg-type]
            classifier.warm_up()
            rows = [
                LabelledCapture(
                    id=f"{group}-{n}",
                    text=text,
                    label=_LABELS.get(group, group),  # type: ignore[arg-type]  # pydantic checks it
                )
                for group, texts in part.items()
                for n, text in enumerate(texts)
            ]
            judged += asyncio.run(_judge(classifier, rows))
    return {"folds": k, "examples": str(examples_path.name), "figures": figures(judged)}


def leave_one_set_out(
    sets: dict[str, list[LabelledCapture]], examples_path: Path = EXAMPLES, encoder: str = "minilm"
) -> dict:
    """Each labelled set classified by a classifier that has none of its captures: the written
    examples and the months (`months.json`) without them, and the other sets among the months
    (those not there yet are added under their label): how the classifier does on one more
    person's life, as the held-out sets test it."""
    from shared.adapters.classifier.offline import OfflineClassifier

    per_set: dict[str, dict] = {}
    pooled: list[Judged] = []
    with tempfile.TemporaryDirectory(prefix="bench-sets-") as tmp:
        for name, held_out, path in sets_left_out(sets, Path(tmp), examples_path):
            classifier = OfflineClassifier(examples_path=path, encoder=encoder)  # type: ignore[arg-type]
            classifier.warm_up()
            judged = asyncio.run(_judge(classifier, held_out))
            per_set[name] = figures(judged)
            pooled += judged
    return {"sets": per_set, "pooled": figures(pooled)}


def sets_left_out(
    sets: dict[str, list[LabelledCapture]], folder: Path, examples_path: Path = EXAMPLES
) -> Iterator[tuple[str, list[LabelledCapture], Path]]:
    """Per set: its name, its captures, and the examples file (under `folder`, with its
    months beside it) of a classifier that has none of them."""
    from shared.adapters.classifier.offline import MONTHS_FILE

    examples = json.loads(examples_path.read_text(encoding="utf-8"))
    months_path = examples_path.with_name(MONTHS_FILE)
    months = json.loads(months_path.read_text(encoding="utf-8")) if months_path.exists() else {}
    for name, held_out in sets.items():
        own = {c.text for c in held_out}
        train = {group: [t for t in texts if t not in own] for group, texts in examples.items()}
        others = {group: [t for t in texts if t not in own] for group, texts in months.items()}
        known = {t for texts in [*train.values(), *others.values()] for t in texts}
        for other, captures in sets.items():
            for c in captures:
                if other != name and c.is_bucket and c.text not in known:
                    others.setdefault(c.label, []).append(c.text)
                    known.add(c.text)
        without = folder / f"without-{name}"
        without.mkdir(exist_ok=True)
        (without / MONTHS_FILE).write_text(json.dumps(others), encoding="utf-8")
        path = without / "examples.json"
        path.write_text(json.dumps(train), encoding="utf-8")
        yield name, held_out, path


async def _judge(classifier, rows: list[LabelledCapture]) -> list[Judged]:
    out = []
    for row in rows:
        start = time.perf_counter()
        c = await classifier.classify(row.text, said_on=row.today)
        out.append(Judged(row, c, decide(c), time.perf_counter() - start))
    return out
