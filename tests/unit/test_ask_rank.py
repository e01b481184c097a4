"""The offline answer's ranker (`shared/services/ask_rank.py`): what it reads of a question and
its captures, and that it only picks which captures, never how many."""

from __future__ import annotations

import pytest

from shared.services.ask import new_question
from shared.services.ask_offline import _have, kinship
from shared.services.ask_rank import FEATURES, Evidence, features, rerank, wanted, weights
from shared.services.ask_run import Source
from shared.services.ask_words import read_question
from tests.unit.ask_sources import source


def evidence(found: list[Source], words: dict[str, float]) -> Evidence:
    return Evidence(
        words=words,
        held={s.id: _have(s) for s in found},
        kin=kinship(found),
        meaning={},
        floor=0.3,
        named=set(),
        referents=set(),
        weight=lambda s: words.get(s.id, 0.0),
    )


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("how much did the plumber charge?", ["amount"]),
        ("what did Darren quote for the job?", ["amount"]),
        ("did I pay the gas bill?", []),  # a yes or no, not an amount
        ("when is the MOT due?", ["day"]),
        ("did I consider cycling when it snows?", []),  # "when" inside, not asked
        ("what time is the rehearsal?", ["time"]),
        ("how many tickets did I sell?", ["count"]),
        ("who is tiling the kitchen?", ["name"]),
    ],
)
def test_what_a_question_asks_for(question: str, kinds: list[str]) -> None:
    assert wanted(read_question(new_question(question)), question) == kinds


# The kitchen's tiler changed; a third capture is about something else.
TILING = [
    source(1, "Marco is tiling the kitchen, £900", 2, ["Marco"]),
    source(2, "Marco dropped out, Kuba is tiling the kitchen now, £1,100", 9, ["Kuba"]),
    source(3, "bought milk and bread", 10),
]
WHO = "who's tiling the kitchen?"
SEEN = evidence(TILING, {"c1": 1.0, "c2": 1.0, "c3": 0.0})


def test_what_the_chooser_said_and_what_a_newer_capture_says() -> None:
    first = TILING[0]
    rows = features(read_question(new_question(WHO)), WHO, TILING, [first], SEEN)
    assert all(set(r) == set(FEATURES) for r in rows)
    assert rows[0]["chooser_cites"] == rows[0]["chooser_first"] == 1.0
    assert rows[1]["chooser_cites"] == 0.0
    # The older one has a newer capture about the same thing; the newer one an older.
    assert rows[0]["superseded"] > 0.0 == rows[0]["supersedes"]
    assert rows[1]["supersedes"] > 0.0 == rows[1]["superseded"]


def test_it_picks_as_many_as_the_chooser_did_by_its_weights() -> None:
    first, then, _ = TILING
    asked = read_question(new_question(WHO))
    newer_wins = {"words": 1.0, "supersedes": 5.0}
    assert rerank(asked, WHO, TILING, [first], SEEN, newer_wins) == [then]
    assert rerank(asked, WHO, TILING, [first, then], SEEN, newer_wins) == [then, first]
    # Nothing chosen stays nothing: the ranker never answers where the chooser would not.
    assert rerank(asked, WHO, TILING, [], SEEN, newer_wins) == []


def test_the_shipped_weights_read_every_feature_and_follow_the_chooser() -> None:
    fitted = weights()
    assert set(fitted) == set(FEATURES)
    # Fit on the tuning sets: the chooser's own pick, a capture about the question and one
    # newer than another about the same thing count for it; one lacking what is asked, against.
    assert fitted["chooser_cites"] > 0.0
    assert fitted["words"] > 0.0
    assert fitted["supersedes"] > 0.0
    assert fitted["wants_missing"] < 0.0
