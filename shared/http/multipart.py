"""Finding one file in a multipart/form-data body and handing its bytes on as they arrive,
so an upload can go straight to storage without being held in memory or spooled to disk."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from python_multipart import MultipartParser
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import parse_options_header

from shared.http.problems import Problem

DEFAULT_MAX_PREAMBLE_BYTES = 64 * 1024


@dataclass(frozen=True)
class FilePart:
    filename: str | None
    content_type: str | None
    """The part's own Content-Type, lower-cased, parameters dropped."""
    chunks: AsyncIterator[bytes]
    """The file's bytes as they arrive, never empty; `Problem(400)` if the body ends early."""


def _text(raw: bytes) -> str:
    # Clients send UTF-8 names raw (RFC 7578 §4.2); latin-1 keeps anything else legible.
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


class _Parse:
    """The push parser's callbacks, turned into state that the async side can pull from."""

    def __init__(self, boundary: bytes, field: str) -> None:
        self.field = field
        self.pending: list[bytes] = []  # file bytes from the chunk just fed, not yet yielded
        self.file: tuple[str | None, str | None] | None = None
        self.in_file = False
        self.file_done = False
        self.ended = False
        self.error: Problem | None = None  # a parse error met after the file started
        # Bytes seen before the file's data starts: what the preamble limit is about.
        self.preamble = 0
        self._boundary_len = len(boundary) + 4
        self._headers: list[tuple[bytes, bytes]] = []
        self._name = bytearray()
        self._value = bytearray()
        self.parser = MultipartParser(
            boundary,
            callbacks={
                "on_part_begin": self._part_begin,
                "on_header_field": self._header_field,
                "on_header_value": self._header_value,
                "on_header_end": self._header_end,
                "on_headers_finished": self._headers_finished,
                "on_part_data": self._part_data,
                "on_part_end": self._part_end,
                "on_end": self._end,
            },
        )

    def feed(self, chunk: bytes) -> None:
        try:
            self.parser.write(chunk)
        except FormParserError as exc:
            # Whatever follows the file is not ours to judge: once its closing delimiter
            # has been seen, a broken part after it (perhaps in this same chunk) doesn't matter.
            if self.file_done:
                return
            problem = Problem(400, f"The multipart body is malformed: {exc}")
            if self.file is None:
                raise problem from exc
            problem.__cause__ = exc
            # The file has started, so it is the chunks iterator's to report, whichever
            # chunk the error came in: open_file_field's caller then sees one contract.
            self.error = problem

    def _looking(self) -> bool:
        return self.file is None

    def _part_begin(self) -> None:
        self._headers.clear()
        if self._looking():
            # The delimiter line itself; counting it stops endless empty parts slipping by.
            self.preamble += self._boundary_len

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        if self._looking():
            self._name += data[start:end]
            self.preamble += end - start

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        if self._looking():
            self._value += data[start:end]
            self.preamble += end - start

    def _header_end(self) -> None:
        if self._looking():
            self._headers.append((bytes(self._name).lower(), bytes(self._value)))
        self._name.clear()
        self._value.clear()

    def _headers_finished(self) -> None:
        if not self._looking():
            return
        headers = dict(self._headers)
        # Header bytes go through latin-1 both ways, so the options come back as the raw bytes.
        disposition = headers.get(b"content-disposition", b"").decode("latin-1")
        _, options = parse_options_header(disposition)
        name = options.get(b"name")
        filename = options.get(b"filename")
        # A part with the right name but no filename is a text field, not the upload.
        if name is None or filename is None or _text(name) != self.field:
            return
        ctype, _ = parse_options_header(headers.get(b"content-type", b"").decode("latin-1"))
        # Browsers send filename="" for an empty file input: reported as no name, and the
        # caller sees it is empty rather than being told the field is missing.
        self.file = (_text(filename) or None, ctype.decode("latin-1") or None)
        self.in_file = True

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if self.in_file:
            # `data` is the whole fed chunk (or the parser's copy of a delimiter prefix that
            # turned out to be data); only the span is the file's.
            self.pending.append(data if start == 0 and end == len(data) else data[start:end])
        elif self._looking():
            self.preamble += end - start

    def _part_end(self) -> None:
        if self.in_file:
            self.in_file = False
            self.file_done = True

    def _end(self) -> None:
        self.ended = True


async def open_file_field(
    body: AsyncIterator[bytes],
    content_type: str | None,
    field: str = "file",
    *,
    max_preamble_bytes: int = DEFAULT_MAX_PREAMBLE_BYTES,
) -> FilePart:
    """Read `body` up to the start of the file part named `field` and return it, still streaming.

    Raises `Problem`: 415 if not multipart/form-data, 400 if malformed or cut short,
    413 if more than `max_preamble_bytes` of other parts come first, 422 if there is no such file.
    Once the file has started, a malformed or cut-short body is raised from `chunks` instead.
    """
    try:
        media_type, params = parse_options_header(content_type)
    except ValueError as exc:  # a str header with characters outside latin-1
        raise Problem(415, "Send the file as multipart/form-data.") from exc
    if media_type != b"multipart/form-data":
        raise Problem(415, "Send the file as multipart/form-data.")
    boundary = params.get(b"boundary")
    if not boundary:
        raise Problem(400, "The multipart/form-data Content-Type has no boundary.")
    try:
        state = _Parse(boundary, field)
    except FormParserError as exc:  # e.g. a boundary over the parser's 256-byte cap
        raise Problem(400, f"The multipart boundary is unusable: {exc}") from exc

    source = aiter(body)
    # The parser silently skips an RFC 2046 preamble (anything before the first delimiter,
    # without callbacks), so the callback count alone can't bound it: also count whole chunks
    # that end before the file starts.
    skipped = 0
    while state.file is None:
        if state.ended:
            raise Problem(422, f"There is no file in the {field!r} field.", code="NO_FILE")
        chunk = await anext(source, None)
        if chunk is None:
            raise Problem(400, "The multipart body ended before any file part.")
        if chunk:
            state.feed(chunk)
        if state.file is None:
            skipped += len(chunk)
        if max(state.preamble, skipped) > max_preamble_bytes:
            raise Problem(
                413,
                f"More than {max_preamble_bytes} bytes of other fields come before the file.",
                code="FIELDS_TOO_LARGE",
            )

    filename, part_type = state.file
    return FilePart(filename=filename, content_type=part_type, chunks=_file_chunks(state, source))


async def _file_chunks(state: _Parse, source: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    # Stops at the file's closing delimiter without draining the parts after it: the delimiter
    # already proves the file is whole, and reading on would only make the caller wait for
    # (and the client keep uploading) bytes that would be thrown away.
    while True:
        pending, state.pending = state.pending, []
        for piece in pending:
            yield piece
        if state.file_done:
            return
        if state.error is not None:
            raise state.error
        chunk = await anext(source, None)
        if chunk is None:
            raise Problem(400, "The multipart body ended before the file was complete.")
        if chunk:
            state.feed(chunk)
