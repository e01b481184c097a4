"""`python -m bench details [--set FILE …]`: the filing rules alone (shared/domain/details.py)
on every bucketed capture of a labelled set, each in its labelled bucket and dated as the set
is: people and due dates against the labels, with no classifier in the way (a capture the
model would ask about, such as one in another language, counts too). The same figures as
`bench classify`'s details line, which counts only what the model filed."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench.figures import Judged, details, due_labelled, filed_details
from bench.labelled import EVAL_SET, load
from shared.domain.classification import Bucket, Classification
from shared.domain.outcomes import Outcome


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench details", description=__doc__)
    parser.add_argument(
        "--set", type=Path, action="append", help="labelled captures (default: the frozen set)"
    )
    parser.add_argument(
        "--misses",
        action="store_true",
        help="list the misses (of a set you tune on, never the frozen one)",
    )
    args = parser.parse_args(argv)
    judged = [
        Judged(
            capture=capture,
            classification=Classification(
                bucket=Bucket(capture.label), confidence=1.0, title=capture.text[:60]
            ),
            outcome=Outcome.CLASSIFIED,
            latency_s=0.0,
        )
        for path in args.set or [EVAL_SET]
        for capture in load(path)
        if capture.is_bucket
    ]
    print(json.dumps(details(judged), indent=1))
    if args.misses:
        for j in judged:
            filed = filed_details(j)
            wrong_due = due_labelled(j) and filed["due_date"] != j.capture.due
            wrong_people = j.capture.people is not None and set(filed["people"]) != set(
                j.capture.people
            )
            if wrong_due or wrong_people:
                print(j.capture.id, j.capture.text, filed["people"], filed["due_date"])
    return 0
