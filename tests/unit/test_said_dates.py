"""The days an answer quotes beside a capture's words, judged as due dates judge them."""

from datetime import date

import pytest

from shared.domain.due_dates import due_date_in
from shared.domain.said_dates import dates_in

TUE_10_NOV = date(2026, 11, 10)


@pytest.mark.parametrize(
    "text",
    ["santa signups so far: 9. need to remind the 2nd floor lot", "came 3rd in the comp"],
)
def test_an_ordinal_that_is_no_day_is_quoted_as_none(text: str) -> None:
    assert dates_in(text, TUE_10_NOV) == []
    assert due_date_in(text, TUE_10_NOV) is None


@pytest.mark.parametrize(
    ("text", "quoted", "due"),
    [
        # Thu 12 Nov is no Saturday: the next 12th that is one
        ("swap to sat 12th on the morning shift", "sat 12th — Sat 12 Dec", date(2026, 12, 12)),
        ("drinks thurs 17th", "thurs 17th — Thu 17 Dec", date(2026, 12, 17)),
        ("fri 20th", "fri 20th — Fri 20 Nov", date(2026, 11, 20)),
        # none of the next three 21sts is a Friday: a slip of the weekday, the 21st as written
        ("fri 21st", "fri 21st — Sat 21 Nov", date(2026, 11, 21)),
    ],
)
def test_a_weekday_before_a_day_of_the_month_says_which_month(
    text: str, quoted: str, due: date
) -> None:
    assert dates_in(text, TUE_10_NOV) == [quoted]
    assert due_date_in(text, TUE_10_NOV) == due
