"""A scripted OpenAI-compatible HTTP server on 127.0.0.1: the project's one test double for the
model (chat completions, audio transcriptions and embeddings, OpenAI and Azure OpenAI routes),
for tests and the benchmark.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
import math
import re
import struct
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from aiohttp import BodyPartReader, hdrs, web

from testkit.loopback_server import LoopbackServer

# Never keep credentials in the records: tests assert on headers and may print them on failure.
SECRET_HEADERS = frozenset(
    {"authorization", "api-key", "x-api-key", "ocp-apim-subscription-key", "cookie"}
)

CHAT = "chat"
TRANSCRIBE = "transcribe"
EMBED = "embed"


@dataclass(frozen=True)
class Step:
    """One scripted reply; build it with the helpers below rather than by hand."""

    status: int = 200
    content: str | None = None
    finish_reason: str = "stop"
    refusal: str | None = None
    # When set, sent as the whole JSON body instead of a chat.completion built from the above.
    body: Any = None
    # When set, sent verbatim as a non-JSON body (e.g. a proxy's HTML error page).
    text: str | None = None
    content_type: str = "text/plain"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    # Embeddings: the vectors to answer with (None: each input's words hashed, `word_vector`).
    vectors: list[list[float]] | None = None
    # A bare delay: wait, then answer with the server's default reply.
    use_default: bool = False
    # When set, the reply waits until the test sets this event (see `held`).
    gate: threading.Event | None = None
    # A transcription's segments (start, end, text), told when verbose_json is asked for.
    segments: list[tuple[float, float, str]] | None = None
    # When set, the message's tool calls (see `tool_calls`).
    tool_calls: tuple[dict[str, Any], ...] = ()


def completion(
    content: str | None,
    *,
    finish_reason: str = "stop",
    refusal: str | None = None,
    delay_s: float = 0.0,
) -> Step:
    """A chat.completion whose message content is exactly `content` (garbage is fine)."""
    return Step(content=content, finish_reason=finish_reason, refusal=refusal, delay_s=delay_s)


def classification(
    bucket: str | None = "Ideas",
    confidence: float = 0.9,
    title: str = "Captured idea",
    question: str | None = None,
    *,
    also_fits: str | None = None,
    people: list[str] | None = None,
    due_date: str | None = None,
    delay_s: float = 0.0,
) -> Step:
    """A well-formed structured-output answer for the classifier's schema."""
    payload = {
        "bucket": bucket,
        "confidence": confidence,
        "title": title,
        "question": question,
        "also_fits": also_fits,
        "people": people or [],
        "due_date": due_date,
    }
    return completion(json.dumps(payload), delay_s=delay_s)


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> dict:
    """One function call as the API writes it; `arguments` as JSON (or any text, to be wrong)."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "id": call_id or f"call_{name}_{abs(hash(text)) % 10**8}",
        "type": "function",
        "function": {"name": name, "arguments": text},
    }


def tool_calls(*calls: dict[str, Any], delay_s: float = 0.0) -> Step:
    """An assistant turn that calls tools (finish_reason tool_calls, no content)."""
    return Step(content=None, finish_reason="tool_calls", tool_calls=calls, delay_s=delay_s)


def refusal(message: str = "I can't help with that.") -> Step:
    return completion(None, refusal=message)


def transcription(
    text: str,
    *,
    delay_s: float = 0.0,
    segments: list[tuple[float, float, str]] | None = None,
) -> Step:
    """A transcription answered as `{"text": text}` (response_format=json), untrimmed; asked
    for verbose_json, as whisper's verbose answer with `segments` (start, end, text) in
    seconds (by default, one segment of the whole text, 0 to 2 s, when there is any)."""
    return Step(content=text, delay_s=delay_s, segments=segments)


def http_error(
    status: int,
    *,
    message: str | None = None,
    code: str | None = None,
    retry_after_s: float | None = None,
    retry_after_ms: float | None = None,
    headers: dict[str, str] | None = None,
    delay_s: float = 0.0,
) -> Step:
    """An error shaped like OpenAI's `{"error": {...}}`; retry-after(-ms) steer client backoff."""
    all_headers = dict(headers or {})
    if retry_after_s is not None:
        all_headers["retry-after"] = f"{retry_after_s:g}"
    if retry_after_ms is not None:
        all_headers["retry-after-ms"] = f"{retry_after_ms:g}"
    body = {
        "error": {
            "message": message or f"fake error {status}",
            "type": "fake_error",
            "param": None,
            "code": code,
        }
    }
    return Step(status=status, body=body, headers=all_headers, delay_s=delay_s)


def delay(seconds: float, then: Step | None = None) -> Step:
    """Wait `seconds` before answering (with `then`, or the default reply): triggers timeouts."""
    if then is not None:
        return replace(then, delay_s=seconds)
    return Step(delay_s=seconds, use_default=True)


def held(gate: threading.Event, then: Step | None = None) -> Step:
    """Answer (with `then`, or the default reply) only once the test sets `gate`: the caller
    stays inside the model call for exactly as long as the test needs, however slow it runs.
    A caller that gives up first hangs up, and the held reply is dropped with it."""
    if then is not None:
        return replace(then, gate=gate)
    return Step(gate=gate, use_default=True)


def raw(body: Any, *, status: int = 200, headers: dict[str, str] | None = None) -> Step:
    """Any JSON body, e.g. a completion with no choices."""
    return Step(status=status, body=body, headers=dict(headers or {}))


def raw_text(text: str, *, content_type: str = "text/html", status: int = 200) -> Step:
    """A non-JSON body, e.g. the HTML page a misbehaving proxy returns with 200."""
    return Step(status=status, text=text, content_type=content_type)


@dataclass(frozen=True)
class UploadedFile:
    """A file part of a multipart request: its metadata only, the bytes are not kept."""

    filename: str | None
    content_type: str | None
    size: int


@dataclass(frozen=True)
class RecordedRequest:
    kind: str
    method: str
    path: str
    query: dict[str, str]
    # Lower-cased names, credentials removed; `auth` says which scheme was used.
    headers: dict[str, str]
    auth: str | None
    json: Any
    # Path parameters, e.g. {"deployment": "gpt-4o-mini"} on the Azure route.
    params: dict[str, str]
    # A multipart body (audio routes): the plain fields, and the file parts by field name.
    form: dict[str, str] = field(default_factory=dict)
    files: dict[str, UploadedFile] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.json or {}).get("messages", []))

    @property
    def model(self) -> str | None:
        """The `model` the client sent, in the JSON body or as a form field."""
        return (self.json or {}).get("model") or self.form.get("model")

    @property
    def file(self) -> UploadedFile | None:
        """The uploaded audio (the `file` part), if any."""
        return self.files.get("file")


Handler = Callable[[web.Request, RecordedRequest, Step], Awaitable[web.StreamResponse]]


class FakeOpenAI(LoopbackServer):
    """The server. One FIFO script and one default reply per route kind: CHAT and TRANSCRIBE.

    `async with FakeOpenAI() as fake:` serves from the running event loop; `with FakeOpenAI() as
    fake:` serves from a background thread for sync callers. Queue replies with
    `fake.enqueue(classification(...), http_error(429, retry_after_ms=10), delay(2.0))`; once the
    queue is empty each request gets `default` (e.g. `classification(delay_s=0.3)` for a
    benchmark). `fake.requests` lists what arrived, credentials removed.

    Transcriptions are scripted the same way with `kind=TRANSCRIBE`:
    `fake.enqueue(transcription("Call Sarah"), http_error(400), kind=TRANSCRIBE)`. Their default
    reply is `transcription("")`, i.e. `{"text": ""}` (what the service says for silence);
    change it with `fake.set_default(step, kind=TRANSCRIBE)`.
    """

    # (method, path, kind). A new kind needs routes here, a handler in `_handlers` and a default
    # reply in `__init__`; scripts and records are already per kind.
    thread_name = "fake-openai"
    cancel_handlers = True

    ROUTES: tuple[tuple[str, str, str], ...] = (
        ("POST", "/v1/chat/completions", CHAT),
        ("POST", "/openai/deployments/{deployment}/chat/completions", CHAT),
        ("POST", "/v1/audio/transcriptions", TRANSCRIBE),
        ("POST", "/openai/deployments/{deployment}/audio/transcriptions", TRANSCRIBE),
        ("POST", "/v1/embeddings", EMBED),
        ("POST", "/openai/deployments/{deployment}/embeddings", EMBED),
    )

    def __init__(
        self,
        *,
        default: Step | None = None,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        """`default` is the chat reply once its script is empty. `api_key`, when set, must
        arrive as `api-key` or `Authorization: Bearer`, else 401."""
        super().__init__(host, port)
        self._api_key = api_key
        self._defaults: dict[str, Step] = {
            CHAT: default or classification(),
            TRANSCRIBE: transcription(""),
            EMBED: Step(),
        }
        self._scripts: dict[str, deque[Step]] = {kind: deque() for kind in self._defaults}
        self._records: list[RecordedRequest] = []
        # A threading lock, not asyncio: sync callers enqueue from another thread. Never held
        # across an await.
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._handlers: dict[str, Handler] = {
            CHAT: self._chat,
            TRANSCRIBE: self._transcription,
            EMBED: self._embeddings,
        }

    # -- scripting and inspection -------------------------------------------------------------

    def enqueue(self, *steps: Step, kind: str = CHAT) -> None:
        with self._lock:
            self._scripts[kind].extend(steps)

    def set_default(self, step: Step, kind: str = CHAT) -> None:
        with self._lock:
            self._defaults[kind] = step

    def pending(self, kind: str = CHAT) -> int:
        with self._lock:
            return len(self._scripts[kind])

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._records)

    def requests_of(self, kind: str) -> list[RecordedRequest]:
        """What arrived on one kind of route (CHAT, TRANSCRIBE, EMBED), in order."""
        return [r for r in self.requests if r.kind == kind]

    def reset(self) -> None:
        """Forget records and queued steps (defaults stay)."""
        with self._lock:
            self._records.clear()
            for script in self._scripts.values():
                script.clear()

    @property
    def base_url(self) -> str:
        """For `AsyncOpenAI(base_url=...)`."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def azure_endpoint(self) -> str:
        """For `AsyncAzureOpenAI(azure_endpoint=...)`."""
        return f"http://{self.host}:{self.port}"

    def openai_client(
        self,
        *,
        api_key: str | None = "sk-test-secret",
        max_retries: int = 0,
        timeout_s: float = 5.0,
        base_url: str | None = None,
        azure: bool = False,
    ):
        """The app's own client (`shared.adapters.openai_client`), pointed at this server: its Azure
        OpenAI route with `azure=True` (no `api_key` means Entra ID), else OpenAI's."""
        from shared.adapters.clients import Clients
        from shared.adapters.openai_client import build_openai_client
        from shared.settings import get_settings

        keyless = azure and api_key is None
        return build_openai_client(
            # As the app's: the managed identity of the settings (AZURE_CLIENT_ID).
            credential=Clients(get_settings()).credential if keyless else None,
            azure_endpoint=self.azure_endpoint if azure else None,
            api_key=api_key,
            base_url=None if azure else base_url or self.base_url,
            api_version="2024-10-21",
            timeout_s=timeout_s,
            max_retries=max_retries,
        )

    # -- lifecycle -----------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application()
        for method, path, kind in self.ROUTES:
            app.router.add_route(method, path, self._make_route_handler(kind))
        return app

    # -- serving -------------------------------------------------------------------------------

    def _make_route_handler(
        self, kind: str
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            record = await self._record(request, kind)
            problem = self._check(request, record)
            if problem is not None:
                return problem
            step = self._next_step(kind)
            if step.delay_s > 0:
                await asyncio.sleep(step.delay_s)
            if step.gate is not None:
                # Set from the test's thread, so a threading.Event, polled without blocking.
                while not step.gate.is_set():  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
            if step.use_default:
                step = self._defaults[kind]
            return await self._handlers[kind](request, record, step)

        return handle

    async def _record(self, request: web.Request, kind: str) -> RecordedRequest:
        body: Any = None
        form: dict[str, str] = {}
        files: dict[str, UploadedFile] = {}
        if request.can_read_body and request.content_type == "application/json":
            try:
                body = await request.json()
            except json.JSONDecodeError:
                body = None
        elif request.can_read_body and request.content_type == "multipart/form-data":
            form, files = await _read_multipart(request)
        headers = {k.lower(): v for k, v in request.headers.items()}
        auth = None
        if "api-key" in headers:
            auth = "api-key"
        elif headers.get("authorization", "").lower().startswith("bearer "):
            auth = "bearer"
        record = RecordedRequest(
            kind=kind,
            method=request.method,
            path=request.path,
            query=dict(request.query),
            headers={k: v for k, v in headers.items() if k not in SECRET_HEADERS},
            auth=auth,
            json=body,
            params=dict(request.match_info),
            form=form,
            files=files,
        )
        with self._lock:
            self._records.append(record)
        return record

    def _check(self, request: web.Request, record: RecordedRequest) -> web.Response | None:
        # Checked before a step is taken, so a misconfigured client doesn't eat the script.
        if self._api_key is not None:
            given = request.headers.get("api-key")
            bearer = request.headers.get("Authorization", "")
            if given != self._api_key and bearer != f"Bearer {self._api_key}":
                return _error_response(http_error(401, message="bad or missing key", code="401"))
        if "deployment" in record.params and "api-version" not in record.query:
            return _error_response(http_error(404, message="api-version is required"))
        return None

    def _next_step(self, kind: str) -> Step:
        with self._lock:
            script = self._scripts[kind]
            return script.popleft() if script else self._defaults[kind]

    async def _chat(
        self, request: web.Request, record: RecordedRequest, step: Step
    ) -> web.StreamResponse:
        if (verbatim := _verbatim_response(step)) is not None:
            return verbatim
        sent = record.json or {}
        if sent.get("stream"):
            return await self._chat_stream(request, sent, step)
        prompt_chars = sum(len(str(m.get("content") or "")) for m in sent.get("messages", []))
        completion_tokens = len(step.content or "") // 4 + 1
        prompt_tokens = prompt_chars // 4 + 1
        body: dict[str, Any] = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": sent.get("model") or record.params.get("deployment", "fake-model"),
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": step.content,
                        "refusal": step.refusal,
                        "annotations": [],
                        **({"tool_calls": list(step.tool_calls)} if step.tool_calls else {}),
                    },
                    "logprobs": None,
                    "finish_reason": step.finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return web.json_response(body, status=step.status, headers=_response_headers(step))

    async def _chat_stream(
        self, request: web.Request, sent: dict[str, Any], step: Step
    ) -> web.StreamResponse:
        """`stream: true`: the content as chat.completion.chunk events, a word a chunk, then the
        finish reason and `[DONE]`, as the service streams (the peer of `python -m bench peer`)."""
        response = web.StreamResponse(
            headers={"content-type": "text/event-stream", **_response_headers(step)}
        )
        await response.prepare(request)
        base = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": sent.get("model") or "fake-model",
        }
        words = (step.content or "").split(" ")
        deltas = [{"role": "assistant", "content": ""}]
        deltas += [{"content": w if i == 0 else " " + w} for i, w in enumerate(words)]
        for delta in deltas:
            chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        end = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": step.finish_reason}]}
        await response.write(f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode())
        await response.write_eof()
        return response

    async def _transcription(
        self, request: web.Request, record: RecordedRequest, step: Step
    ) -> web.Response:
        if (verbatim := _verbatim_response(step)) is not None:
            return verbatim
        text = step.content or ""
        body: dict[str, Any] = {"text": text}
        if record.form.get("response_format") == "verbose_json":
            body = _verbose_transcription(text, step.segments)
        return web.json_response(body, status=step.status, headers=_response_headers(step))

    async def _embeddings(
        self, request: web.Request, record: RecordedRequest, step: Step
    ) -> web.Response:
        """An embeddings list: `step.vectors`, else each input's `word_vector` at the
        `dimensions` asked (1536 without), as the service answers (floats, not base64)."""
        if (verbatim := _verbatim_response(step)) is not None:
            return verbatim
        sent = record.json or {}
        texts = sent.get("input") or []
        texts = [texts] if isinstance(texts, str) else list(texts)
        dimensions = int(sent.get("dimensions") or 1536)
        vectors = step.vectors or [word_vector(str(t), dimensions) for t in texts]
        tokens = sum(len(str(t)) // 4 + 1 for t in texts)
        # The SDK asks for base64 (little-endian float32) unless told otherwise, as the service
        # answers it.
        packed = sent.get("encoding_format") == "base64"
        body = {
            "object": "list",
            "data": [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode()
                    if packed
                    else v,
                }
                for i, v in enumerate(vectors)
            ],
            "model": sent.get("model") or record.params.get("deployment", "fake-embedding"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return web.json_response(body, status=step.status, headers=_response_headers(step))


def embeddings(vectors: list[list[float]], *, delay_s: float = 0.0) -> Step:
    """An embeddings reply with exactly these vectors (of any length, any count)."""
    return Step(vectors=vectors, delay_s=delay_s)


def word_vector(text: str, dimensions: int) -> list[float]:
    """A unit vector of `text`'s words, each hashed to one dimension: texts sharing words are
    near, others are not (the scripted server has no model, so no paraphrase)."""
    counts = [0.0] * dimensions
    for word in re.findall(r"\w+", text.casefold()):
        counts[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dimensions] += 1.0
    norm = math.sqrt(sum(c * c for c in counts)) or 1.0
    return [c / norm for c in counts]


def _verbose_transcription(text: str, segments: list[tuple[float, float, str]] | None) -> Any:
    """whisper's verbose_json, as the OpenAI and Azure OpenAI services answer it."""
    if segments is None:
        segments = [(0.0, 2.0, text)] if text.strip() else []
    return {
        "task": "transcribe",
        "language": "english",
        "duration": max((end for _, end, _ in segments), default=0.0),
        "text": text,
        "segments": [
            {
                "id": n,
                "seek": 0,
                "start": start,
                "end": end,
                "text": words,
                "tokens": [],
                "temperature": 0.0,
                "avg_logprob": -0.2,
                "compression_ratio": 1.0,
                "no_speech_prob": 0.01,
            }
            for n, (start, end, words) in enumerate(segments)
        ],
    }


async def _read_multipart(request: web.Request) -> tuple[dict[str, str], dict[str, UploadedFile]]:
    """Plain fields as text; file parts are counted in chunks, never kept (audio can be large)."""
    form: dict[str, str] = {}
    files: dict[str, UploadedFile] = {}
    reader = await request.multipart()
    async for part in reader:
        if not isinstance(part, BodyPartReader) or part.name is None:
            continue
        if part.filename is None:
            form[part.name] = await part.text()
            continue
        size = 0
        while chunk := await part.read_chunk():
            size += len(chunk)
        files[part.name] = UploadedFile(
            filename=part.filename,
            content_type=part.headers.get(hdrs.CONTENT_TYPE),
            size=size,
        )
    return form, files


def _response_headers(step: Step) -> dict[str, str]:
    return {"x-request-id": f"req_fake_{time.monotonic_ns()}", **step.headers}


def _verbatim_response(step: Step) -> web.Response | None:
    """The reply for `raw_text`, `raw` and `http_error` steps, the same on every route kind."""
    if step.text is not None:
        return web.Response(
            text=step.text,
            status=step.status,
            content_type=step.content_type,
            headers=_response_headers(step),
        )
    if step.body is not None or step.status >= 400:
        return _error_response(step)
    return None


def _error_response(step: Step) -> web.Response:
    return web.json_response(step.body, status=step.status, headers=_response_headers(step))
