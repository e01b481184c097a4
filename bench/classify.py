"""Classification quality of the offline model on the labelled set, and the prompt size of the
OpenAI path."""

from __future__ import annotations

import asyncio
import json
import statistics

from bench.text import LABELLED

LABELS = ["People", "Projects", "Ideas", "Admin", "misunderstood"]


def offline_quality() -> dict:
    from shared.adapters.classifier.minilm import MiniLMClassifier

    rows = [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]
    classifier = MiniLMClassifier()
    classifier.warm_up()

    async def classify_all() -> list:
        return [await classifier.classify(r["text"]) for r in rows]

    results = asyncio.run(classify_all())
    truth = [r["label"] for r in rows]
    predicted = [c.bucket.value if c.bucket else "misunderstood" for c in results]
    per_label = {}
    for label in LABELS:
        hits = sum(t == p == label for t, p in zip(truth, predicted, strict=True))
        said = predicted.count(label)
        per_label[label] = {
            "precision": round(hits / said, 3) if said else None,
            "recall": round(hits / truth.count(label), 3),
            "n": truth.count(label),
        }
    # Misunderstood detection as the server decides it: no bucket, or confidence under 0.3.
    flagged = [c.bucket is None or c.confidence < 0.3 for c in results]
    gibberish = [t == "misunderstood" for t in truth]
    caught = sum(f and g for f, g in zip(flagged, gibberish, strict=True))
    false_alarms = sum(f and not g for f, g in zip(flagged, gibberish, strict=True))
    return {
        "captures": len(rows),
        "accuracy": round(
            sum(t == p for t, p in zip(truth, predicted, strict=True)) / len(rows), 3
        ),
        "per_label": per_label,
        "misunderstood_recall": round(caught / sum(gibberish), 3),
        "false_alarm_rate": round(false_alarms / (len(rows) - sum(gibberish)), 3),
    }


def prompt_tokens() -> dict:
    """The OpenAI path's prompt per classification, by the app's own estimate (an upper-ish
    bound: prose at 4 characters or 3/4 word per token, JSON at 3 characters per token)."""
    from shared.adapters.classifier.openai_chat import prompt_tokens_estimate

    rows = [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]
    counts = [prompt_tokens_estimate(r["text"]) for r in rows]
    return {
        "captures": len(counts),
        "median": statistics.median(counts),
        "max": max(counts),
    }
