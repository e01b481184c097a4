"""`python -m bench followups [--set FILE]`: a follow-up set (by default
bench/data/followups_captures.jsonl; `--set bench/data/follow_month_captures.jsonl` for issue
40's) played
through a devhost with the offline models, as a person would in the app: the first capture,
then, when the run asks, the person's typed answer as the AG-UI resume `{answer}`; then the
capture as stored. Reports the share filed in the right bucket."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import httpx
from pydantic import BaseModel, ConfigDict

from bench.stack import Stack
from testkit.support import KEY, eventually

FOLLOWUPS = Path(__file__).resolve().parent / "data" / "followups_captures.jsonl"
BUCKET_NAMES = {"people", "projects", "ideas", "admin"}


class FollowUp(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    kind: str
    first: str
    answer: str
    label: str


def load(path: Path = FOLLOWUPS) -> list[FollowUp]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [FollowUp.model_validate_json(line) for line in lines if line.strip()]


def run(s: Stack, path: Path = FOLLOWUPS) -> dict:
    pairs = load(path)
    with (
        s.devhost("followups", scripted=False) as host,
        httpx.Client(base_url=host.base_url, timeout=120, headers=KEY) as client,
    ):
        started = time.perf_counter()
        eventually(lambda: client.get("/api/health").status_code == 200, timeout=300)
        warm_up_s = round(time.perf_counter() - started, 1)
        rows = [play(client, pair) for pair in pairs]
    return {"warm_up_s": warm_up_s, **summary(rows), "rows": rows}


def play(client: httpx.Client, pair: FollowUp) -> dict:
    thread = f"bench-{uuid.uuid4()}"
    first = _last_event(client, _body(thread, pair.first))
    capture_id = (first.get("result") or {}).get("inboxItemId")
    asked = (first.get("outcome") or {}).get("interrupts") or []
    answered = None
    if asked:
        resume = [{"interruptId": asked[0]["id"], "status": "resolved"}]
        resume[0]["payload"] = {"answer": pair.answer}
        last = _last_event(client, _body(thread, "", resume=resume) | {"messages": []})
        answered = last.get("code") or (last.get("result") or {}).get("outcome")
    item = client.get(f"/api/captures/{capture_id}").json() if capture_id else {}
    return {
        "id": pair.id,
        "kind": pair.kind,
        "label": pair.label,
        "first_outcome": (first.get("result") or {}).get("outcome"),
        "asked": asked[0]["metadata"]["kind"] if asked else None,
        "answered": answered,
        "status": item.get("status"),
        "bucket": item.get("filedBucket"),
        "confidence": item.get("confidence"),
        "title": item.get("title"),
    }


def summary(rows: list[dict]) -> dict:
    def share(selected: list[dict], right) -> float:
        return round(sum(map(right, selected)) / len(selected), 2) if selected else 0.0

    def filed_right(r: dict) -> bool:
        return r["status"] == "filed" and r["bucket"] == r["label"]

    def right_bucket(r: dict) -> bool:
        return r["bucket"] == r["label"]

    kinds = sorted({r["kind"] for r in rows})
    return {
        "pairs": len(rows),
        "filed_right": share(rows, filed_right),
        "right_bucket_even_provisional": share(rows, right_bucket),
        "by_kind": {k: share([r for r in rows if r["kind"] == k], filed_right) for k in kinds},
        "bucket_name_titles": sum(
            (r["title"] or "").strip(" .!").lower() in BUCKET_NAMES for r in rows
        ),
    }


def table(report: dict) -> str:
    lines = [
        f"pairs: {report['pairs']}",
        f"filed in the right bucket (status filed): {report['filed_right']:.2f}",
        f"right bucket, provisional included: {report['right_bucket_even_provisional']:.2f}",
        f"titles that are a bare bucket name: {report['bucket_name_titles']}",
    ]
    lines += [f"  {kind}: {value:.2f}" for kind, value in report["by_kind"].items()]
    wrong = [
        r for r in report["rows"] if not (r["status"] == "filed" and r["bucket"] == r["label"])
    ]
    lines += ["not filed right:"] + [
        f"  {r['id']} {r['kind']}: {r['status']} {r['bucket']} {r['confidence']} "
        f"(want {r['label']}; first {r['first_outcome']}, answer {r['answered']}) {r['title']!r}"
        for r in wrong
    ]
    return "\n".join(lines)


def _body(thread: str, text: str, **extra: object) -> dict:
    return {
        "threadId": thread,
        "runId": f"r-{uuid.uuid4()}",
        "protocolVersion": "1.0",
        "messages": [{"id": f"m-{uuid.uuid4()}", "role": "user", "content": text}],
        **extra,
    }


def _last_event(client: httpx.Client, body: dict) -> dict:
    response = client.post("/api/capture", json=body)
    response.raise_for_status()
    frames = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    return json.loads(frames[-1])
