"""shared.http.multipart: the file field of a multipart upload, streamed without buffering it."""

from __future__ import annotations

import hashlib
import itertools
import random
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from shared.http.multipart import FilePart, open_file_field
from shared.http.problems import Problem

BOUNDARY = "b0undary-7f3a"
KIB = 1024
MIB = 1024 * KIB
MARKER = b"\x00<<PAYLOAD>>\x00"


def build(
    files: Any = None, data: dict[str, str] | None = None, *, boundary: str | None = BOUNDARY
) -> tuple[bytes, str]:
    """A body and Content-Type as httpx would send them (a fixed boundary when given)."""
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"} if boundary else {}
    request = httpx.Request("POST", "http://x", headers=headers, files=files, data=data)
    return request.read(), request.headers["Content-Type"]


def voice(data: bytes, name: str = "a.m4a", ctype: str = "audio/mp4") -> dict[str, Any]:
    return {"file": (name, data, ctype)}


async def feed(body: bytes, size: int) -> AsyncIterator[bytes]:
    for i in range(0, len(body), size):
        yield body[i : i + size]


async def feed_split(body: bytes, cuts: list[int]) -> AsyncIterator[bytes]:
    edges = [0, *cuts, len(body)]
    for a, b in itertools.pairwise(edges):
        yield body[a:b]


async def read_all(part: FilePart) -> bytes:
    chunks = [c async for c in part.chunks]
    assert all(chunks), "an empty chunk was yielded"
    return b"".join(chunks)


def nasty_bytes(n: int, seed: int = 1) -> bytes:
    """Random binary salted with CRLFs, dashes and near-misses of the real delimiter."""
    rng = random.Random(seed)
    near = [b"\r\n--", b"\r\n", b"--", b"\r\n--" + BOUNDARY[:-1].encode(), b"\r\n--b0und", b"\r"]
    out = bytearray()
    while len(out) < n:
        out += rng.randbytes(rng.randint(0, 40))
        out += rng.choice(near)
    # Ending on a partial delimiter makes the real one overlap it.
    return bytes(out[:n]) + b"\r\n-"


# --- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 7, 13, 64 * KIB, 10 * MIB])
async def test_bytes_round_trip_in_any_chunking(size: int) -> None:
    payload = nasty_bytes(20 * KIB if size < 64 else 300 * KIB)
    body, ctype = build(voice(payload))
    part = await open_file_field(feed(body, size), ctype)
    assert await read_all(part) == payload


async def test_delimiter_split_at_every_point() -> None:
    payload = nasty_bytes(2 * KIB)
    body, ctype = build(voice(payload))
    end = body.index(payload) + len(payload)  # where the delimiter after the file starts
    for cut in range(end - 3, end + len(BOUNDARY) + 8):
        part = await open_file_field(feed_split(body, [cut]), ctype)
        assert await read_all(part) == payload, f"cut at {cut}"


async def test_headers_split_at_every_point() -> None:
    body, ctype = build(voice(b"abc", name="x.m4a"), {"lang": "en"})
    start = body.index(b"abc")
    for cut in range(1, start + 1):
        part = await open_file_field(feed_split(body, [cut]), ctype)
        assert (part.filename, await read_all(part)) == ("x.m4a", b"abc"), f"cut at {cut}"


async def test_httpx_random_boundary() -> None:
    payload = nasty_bytes(5 * KIB)
    body, ctype = build(voice(payload), boundary=None)
    assert BOUNDARY not in ctype
    part = await open_file_field(feed(body, 7), ctype)
    assert await read_all(part) == payload


async def test_empty_file() -> None:
    body, ctype = build(voice(b""))
    part = await open_file_field(feed(body, 5), ctype)
    assert [c async for c in part.chunks] == []


# --- what is reported ----------------------------------------------------------------------


async def test_filename_and_content_type() -> None:
    body, ctype = build(voice(b"x", name="memo 2024.m4a", ctype="audio/mp4"))
    part = await open_file_field(feed(body, 64 * KIB), ctype)
    assert (part.filename, part.content_type) == ("memo 2024.m4a", "audio/mp4")


async def test_content_type_lowered_and_parameters_dropped() -> None:
    body, ctype = build(voice(b"x", ctype="Audio/MP4; Codecs=mp4a.40.2"))
    part = await open_file_field(feed(body, 64 * KIB), ctype)
    assert part.content_type == "audio/mp4"


async def test_non_ascii_filename() -> None:
    body, ctype = build(voice(b"x", name="Sprachnotiz Über 日本.m4a"))
    part = await open_file_field(feed(body, 3), ctype)
    assert part.filename == "Sprachnotiz Über 日本.m4a"


async def test_part_without_content_type() -> None:
    body = (
        f"--{BOUNDARY}\r\n"
        'Content-Disposition: form-data; name="file"; filename="raw.bin"\r\n'
        "\r\nbytes\r\n"
        f"--{BOUNDARY}--\r\n"
    ).encode()
    part = await open_file_field(feed(body, 4), f'multipart/form-data; boundary="{BOUNDARY}"')
    assert (part.content_type, await read_all(part)) == (None, b"bytes")


async def test_request_content_type_case_and_quoting() -> None:
    body, _ = build(voice(b"payload"))
    ctype = f'Multipart/Form-Data; charset=utf-8; boundary="{BOUNDARY}"'
    part = await open_file_field(feed(body, 9), ctype)
    assert await read_all(part) == b"payload"


# --- other fields --------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 7, 64 * KIB])
async def test_fields_before_and_after_the_file(size: int) -> None:
    payload = nasty_bytes(3 * KIB)
    files = [
        ("note", (None, "before")),
        ("file", ("a.m4a", payload, "audio/mp4")),
        ("after", (None, "x" * 500)),
        ("another", ("b.txt", b"second file", "text/plain")),
    ]
    body, ctype = build(files, {"lang": "en", "file": "a text field named file"})
    part = await open_file_field(feed(body, size), ctype)
    assert (part.filename, await read_all(part)) == ("a.m4a", payload)


async def test_stops_at_the_end_of_the_file_without_draining() -> None:
    files = [("file", ("a.m4a", b"short", "audio/mp4")), ("trailer", (None, "t" * (2 * MIB)))]
    body, ctype = build(files)
    pulled = 0

    async def counting() -> AsyncIterator[bytes]:
        nonlocal pulled
        async for chunk in feed(body, 64 * KIB):
            pulled += len(chunk)
            yield chunk

    part = await open_file_field(counting(), ctype)
    assert await read_all(part) == b"short"
    assert pulled == 64 * KIB


@pytest.mark.parametrize("size", [1, 64 * KIB])
async def test_garbage_after_the_file_is_ignored(size: int) -> None:
    body, ctype = build(voice(b"complete"))
    end = body.index(b"complete") + len(b"complete")
    broken = body[:end] + f"\r\n--{BOUNDARY}\r\nBad Header\x01: x\r\n\r\n".encode()
    part = await open_file_field(feed(broken, size), ctype)
    assert await read_all(part) == b"complete"


# --- errors --------------------------------------------------------------------------------


async def problem(body: bytes, ctype: str | None, size: int = 64 * KIB, **kw: Any) -> Problem:
    with pytest.raises(Problem) as info:
        part = await open_file_field(feed(body, size), ctype, **kw)
        await read_all(part)
    return info.value


@pytest.mark.parametrize("ctype", ["application/json", None, "", "multipart/mixed; boundary=x"])
async def test_415_when_not_form_data(ctype: str | None) -> None:
    assert (await problem(b'{"a": 1}', ctype)).status == 415


async def test_400_without_boundary() -> None:
    body, _ = build(voice(b"x"))
    assert (await problem(body, "multipart/form-data")).status == 400
    assert (await problem(body, "multipart/form-data; boundary=")).status == 400


async def test_400_for_an_overlong_boundary() -> None:
    assert (await problem(b"--", "multipart/form-data; boundary=" + "x" * 300)).status == 400


async def test_400_for_a_body_that_is_not_multipart() -> None:
    _, ctype = build(voice(b"x"))
    err = await problem(b"this is not a multipart body at all", ctype)
    assert err.status == 400


async def test_400_for_a_wrong_boundary() -> None:
    body, _ = build(voice(b"x"))
    err = await problem(body, "multipart/form-data; boundary=something-else")
    assert err.status == 400


@pytest.mark.parametrize("size", [1, 64 * KIB])
async def test_400_for_a_bad_header_before_the_file(size: int) -> None:
    body, ctype = build(voice(b"x"), {"lang": "en"})
    bad = body.replace(b'name="lang"', b'name="lang"\r\nBad Header\x01: y', 1)
    assert (await problem(bad, ctype, size=size)).status == 400


@pytest.mark.parametrize("size", [1, 64 * KIB])
async def test_400_for_a_bad_delimiter_after_the_file(size: int) -> None:
    body, ctype = build(voice(b"payload"))
    end = body.index(b"payload") + len(b"payload")
    bad = body[:end] + f"\r\n--{BOUNDARY}  junk\r\n".encode()
    part = await open_file_field(feed(bad, size), ctype)
    with pytest.raises(Problem) as info:
        await read_all(part)
    assert info.value.status == 400


@pytest.mark.parametrize("size", [1, 7, 64 * KIB])
async def test_400_for_a_body_cut_inside_the_file(size: int) -> None:
    payload = nasty_bytes(10 * KIB)
    body, ctype = build(voice(payload))
    end = body.index(payload) + len(payload)
    got = bytearray()
    part = await open_file_field(feed(body[: end - 100], size), ctype)
    with pytest.raises(Problem) as info:
        async for chunk in part.chunks:
            got += chunk
    assert info.value.status == 400
    assert payload.startswith(bytes(got))


async def test_400_for_a_body_cut_inside_the_closing_delimiter() -> None:
    body, ctype = build(voice(b"payload"))
    end = body.index(b"payload") + len(b"payload")
    delimiter = f"\r\n--{BOUNDARY}-".encode()
    for cut in range(end, end + len(delimiter) + 1):
        err = await problem(body[:cut], ctype, size=5)
        assert err.status == 400, f"cut at {cut}"


async def test_400_for_a_body_cut_before_the_file() -> None:
    body, ctype = build(voice(b"payload"), {"lang": "en"})
    err = await problem(body[: body.index(b"payload") - 5], ctype)
    assert err.status == 400
    assert (await problem(b"", ctype)).status == 400


async def test_422_with_only_text_fields() -> None:
    # (None, value) tuples: httpx sends data= alone url-encoded, not as form-data.
    body, ctype = build([("text", (None, "no audio here")), ("lang", (None, "en"))])
    err = await problem(body, ctype, size=7)
    assert (err.status, err.code) == (422, "NO_FILE")


async def test_422_when_the_file_has_another_name() -> None:
    body, ctype = build({"audio": ("a.m4a", b"data", "audio/mp4")})
    err = await problem(body, ctype)
    assert (err.status, err.code) == (422, "NO_FILE")


async def test_422_when_file_is_a_text_field() -> None:
    body, ctype = build([("file", (None, "not an upload"))])
    err = await problem(body, ctype)
    assert (err.status, err.code) == (422, "NO_FILE")


async def test_custom_field_name() -> None:
    body, ctype = build({"audio": ("a.m4a", b"data", "audio/mp4")})
    part = await open_file_field(feed(body, 3), ctype, "audio")
    assert await read_all(part) == b"data"


@pytest.mark.parametrize("size", [7, 64 * KIB, 10 * MIB])
async def test_413_for_a_huge_preamble(size: int) -> None:
    body, ctype = build(voice(b"x"), {"notes": "n" * (100 * KIB)})
    assert (await problem(body, ctype, size=size)).status == 413


async def test_413_counts_other_files_and_many_small_parts() -> None:
    other, ctype = build({"photo": ("p.jpg", b"\xff" * 5000, "image/jpeg"), **voice(b"x")})
    assert (await problem(other, ctype, max_preamble_bytes=4 * KIB)).status == 413
    fields = {f"f{i}": "" for i in range(300)}
    many, ctype = build(voice(b"x"), fields)
    assert (await problem(many, ctype, max_preamble_bytes=8 * KIB)).status == 413


async def test_413_for_a_long_rfc_preamble() -> None:
    # python-multipart skips a preamble (text before the first delimiter) without a callback,
    # at least when each chunk of it starts with a line break.
    body, ctype = build(voice(b"x"))
    noise = [b"\r\n" + b"x" * 998] * 200

    async def padded() -> AsyncIterator[bytes]:
        for chunk in [*noise, b"\r\n", body]:
            yield chunk

    part = await open_file_field(padded(), ctype, max_preamble_bytes=300 * KIB)
    assert await read_all(part) == b"x"
    with pytest.raises(Problem) as info:
        await open_file_field(padded(), ctype)
    assert info.value.status == 413


async def test_empty_filename_is_reported_as_none() -> None:
    # What a browser sends for an empty file input (httpx drops an empty filename).
    body = (
        f"--{BOUNDARY}\r\n"
        'Content-Disposition: form-data; name="file"; filename=""\r\n'
        "Content-Type: application/octet-stream\r\n"
        f"\r\n\r\n--{BOUNDARY}--\r\n"
    ).encode()
    part = await open_file_field(feed(body, 7), f"multipart/form-data; boundary={BOUNDARY}")
    assert (part.filename, part.content_type) == (None, "application/octet-stream")
    assert await read_all(part) == b""


async def test_preamble_under_the_limit_is_fine() -> None:
    body, ctype = build(voice(b"x"), {"notes": "n" * (40 * KIB)})
    part = await open_file_field(feed(body, 1000), ctype)
    assert await read_all(part) == b"x"


# --- laziness and memory -------------------------------------------------------------------


class BigUpload:
    """A real httpx framing around a large payload generated on the fly, counting bytes pulled."""

    def __init__(self, size: int, chunk: int = 64 * KIB, seed: int = 7) -> None:
        body, self.content_type = build(voice(MARKER), {"lang": "en"})
        self.head, self.tail = body.split(MARKER)
        self.size, self.chunk, self.seed = size, chunk, seed
        self.pulled = 0
        self.sha = hashlib.sha256()

    async def stream(self) -> AsyncIterator[bytes]:
        rng = random.Random(self.seed)
        for piece in self._pieces(rng):
            self.pulled += len(piece)
            yield piece

    def _pieces(self, rng: random.Random) -> Any:
        yield self.head
        left = self.size
        while left:
            n = min(self.chunk, left)
            piece = rng.randbytes(n)
            self.sha.update(piece)
            left -= n
            yield piece
        yield self.tail


async def test_open_returns_before_reading_the_file() -> None:
    upload = BigUpload(30 * MIB)
    part = await open_file_field(upload.stream(), upload.content_type)
    assert part.filename == "a.m4a"
    assert upload.pulled < 1 * MIB

    first = await anext(part.chunks)
    assert first
    # Back-pressure: one source chunk at a time, nothing read ahead.
    assert upload.pulled <= len(upload.head) + 64 * KIB
    assert upload.pulled < 1 * MIB

    seen = hashlib.sha256(first)
    total = len(first)
    async for chunk in part.chunks:
        seen.update(chunk)
        total += len(chunk)
    assert total == 30 * MIB
    assert seen.digest() == upload.sha.digest()


async def test_peak_memory_stays_small_while_streaming() -> None:
    upload = BigUpload(30 * MIB)
    total = 0
    tracemalloc.start()
    try:
        part = await open_file_field(upload.stream(), upload.content_type)
        async for chunk in part.chunks:
            total += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == 30 * MIB
    assert peak < 5 * MIB, f"peak {peak / MIB:.1f} MiB"
