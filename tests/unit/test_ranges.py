"""shared/http/ranges.py: one byte range of RFC 9110 against a file's size."""

from __future__ import annotations

import pytest

from shared.http.problems import Problem
from shared.http.ranges import byte_range


@pytest.mark.parametrize(
    ("header", "size", "expected"),
    [
        (None, 100, None),
        ("bytes=0-", 100, (0, 99)),
        ("bytes=10-19", 100, (10, 19)),
        ("bytes=90-200", 100, (90, 99)),  # the end past the file: cut to it
        ("bytes=-30", 100, (70, 99)),
        ("bytes=-300", 100, (0, 99)),
        ("bytes=5-4", 100, None),  # not a range: ignored
        ("bytes=0-1,5-6", 100, None),  # several: the whole file
        ("items=0-1", 100, None),
        ("bytes=-", 100, None),
    ],
)
def test_a_range_read_against_the_size(
    header: str | None, size: int, expected: tuple[int, int] | None
) -> None:
    assert byte_range(header, size) == expected


@pytest.mark.parametrize(
    ("header", "size"), [("bytes=100-", 100), ("bytes=-0", 100), ("bytes=-5", 0)]
)
def test_a_range_the_file_has_nothing_of_is_416(header: str, size: int) -> None:
    with pytest.raises(Problem) as refused:
        byte_range(header, size)
    assert (refused.value.status, refused.value.code) == (416, "RANGE_NOT_SATISFIABLE")
    assert refused.value.headers == {"Content-Range": f"bytes */{size}"}
