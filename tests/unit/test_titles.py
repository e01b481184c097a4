"""Titles made from text are cut at a word boundary and store no ellipsis: a title is data
(searched, exported as a file name, edited by the user), and a screen marks a cut itself."""

from __future__ import annotations

from shared.adapters.classifier.openai_chat import ModelAnswer, _to_classification
from shared.domain.answers import title_of
from shared.domain.classification import TITLE_MAX, Bucket, cut_title
from shared.services.bucket_pick import pick_bucket
from tests.fakes import USER, Fakes, text_item

LONG = "please could you remember to ring the plumber about the boiler " * 5


def test_a_long_text_is_cut_at_a_word_with_no_ellipsis() -> None:
    title = cut_title(LONG)
    assert len(title) <= TITLE_MAX and "…" not in title
    assert LONG.startswith(title) and LONG[len(title)] == " "
    assert cut_title("tiles, grout…  and more", 13) == "tiles, grout"
    assert cut_title("x" * 130) == "x" * TITLE_MAX  # one word longer than a title
    assert cut_title("  short \n title ") == "short title"


def test_an_answers_title_and_a_models_title_store_no_ellipsis() -> None:
    assert "…" not in title_of(LONG) and LONG.lower().startswith(title_of(LONG).lower())
    answer = ModelAnswer(
        bucket=Bucket.ADMIN, confidence=0.9, title=LONG, question=None, also_fits=None,
        people=[], due_date=None,
    )  # fmt: skip
    title = _to_classification(answer).title
    assert len(title) <= TITLE_MAX and LONG.startswith(title) and LONG[len(title)] == " "


async def test_a_picks_title_is_cut_at_a_word(fakes: Fakes) -> None:
    words = "Supercalifragilisticexpialidocious" * 4 + " then more words after it"
    item = fakes.repo.seed(text_item(words))
    picked = await pick_bucket(USER, item.id, Bucket.IDEAS, fakes.adapters)
    assert picked.title is not None and len(picked.title) <= TITLE_MAX
    assert "…" not in picked.title and picked.title.startswith("Supercali")
