"""The Range header of a GET (RFC 9110 §14): one byte range read against a file's size. Several
ranges, or a header that does not parse, are ignored (the whole file is sent), as the RFC
allows; a range the file has no byte of is a 416 with `Content-Range: bytes */size`."""

from __future__ import annotations

import re

from shared.http.problems import Problem

_ONE_RANGE = re.compile(r"bytes=(\d*)-(\d*)")


def byte_range(header: str | None, size: int) -> tuple[int, int] | None:
    """(first, last) byte of the one range asked for, within `size`; None for the whole file.
    Problem 416 (RANGE_NOT_SATISFIABLE) when the file has none of the range."""
    if header is None:
        return None
    m = _ONE_RANGE.fullmatch(header.strip().replace(" ", ""))
    if m is None or m.group(1) == m.group(2) == "":
        return None
    first, last = m.group(1), m.group(2)
    if first == "":  # a suffix: the last N bytes
        n = int(last)
        if n == 0 or size == 0:
            raise _unsatisfiable(size)
        return max(size - n, 0), size - 1
    start = int(first)
    if last != "" and int(last) < start:
        return None  # not a valid range: ignored
    if start >= size:
        raise _unsatisfiable(size)
    return start, size - 1 if last == "" else min(int(last), size - 1)


def _unsatisfiable(size: int) -> Problem:
    return Problem(
        416,
        "The recording has no byte of the range asked for.",
        code="RANGE_NOT_SATISFIABLE",
        headers={"Content-Range": f"bytes */{size}"},
    )
