"""`python -m bench.tools.month_examples`: write the offline classifier's months
(`shared/adapters/classifier/months.json`): every tuning month's captures, by label; then its
embedding voter fitted on them and the written examples (`fitted-e5.json`, which a new clone's
first start reads instead of encoding every example).

The months (`bench/data/month*_captures.jsonl`, bench/data/MONTH_SET.md) are one person's
real-life captures each, written blind by independent hands: the more lives the classifier
learns from, the better a month of a life it never saw is filed (`python -m bench classify
--model offline --leave-one-out --set …` measures that). The frozen month is never taken
(tests/integration/test_offline_classifier.py checks it), nor a capture the written examples
(`examples.json`) hold already, nor a month after LAST_TUNING_MONTH (held out). Run it again
after folding a month in, or after editing `examples.json`."""

from __future__ import annotations

import json
from pathlib import Path

from bench.labelled import BUCKETS, DATA, load

CLASSIFIER = Path(__file__).resolve().parents[2] / "shared" / "adapters" / "classifier"
EXAMPLES = CLASSIFIER / "examples.json"
MONTHS = CLASSIFIER / "months.json"
FROZEN = DATA / "month_frozen_captures.jsonl"


# The months after this one were written blind to be run once, untouched, as a fresh estimate
# (bench/data/MONTH_SET.md): they are held out, never tuned on, until this line moves to fold
# them in. Named, not globbed, so that a held-out month added to bench/data is not taken.
LAST_TUNING_MONTH = 36


def tuning_months() -> list[Path]:
    """The tuning month (`month_dev`) and months 2 to LAST_TUNING_MONTH; never the frozen
    month nor a month written after."""
    numbered = (DATA / f"month{n}_captures.jsonl" for n in range(2, LAST_TUNING_MONTH + 1))
    return sorted([DATA / "month_dev_captures.jsonl", *numbered])


def main() -> int:
    examples: dict[str, list[str]] = json.loads(EXAMPLES.read_text(encoding="utf-8"))
    known = {text for texts in examples.values() for text in texts}
    months: dict[str, list[str]] = {label: [] for label in BUCKETS}
    for path in tuning_months():
        for capture in load(path):
            if capture.is_bucket and capture.text not in known:
                months[capture.label].append(capture.text)
                known.add(capture.text)
    MONTHS.write_text(json.dumps(months, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    counts = ", ".join(f"{label} {len(texts)}" for label, texts in months.items())
    print(f"{MONTHS.name}: {len(tuning_months())} months: {counts}")
    from shared.adapters.classifier.offline import write_fit

    print(f"{write_fit().name}: fitted on the examples and the months")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
