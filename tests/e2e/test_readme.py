"""The README's examples run exactly as written: each shell block marked
`<!-- readme-example: NAME -->` is run with bash (-eu: a variable set nowhere fails it) from the
repo's folder, against a devhost of the test's own with the offline models, as `make dev`
runs them, once it is ready. Only `API` is given, the variable the examples read for it, and
`MASTER_KEY`, the test's devhost's own master key (a developer's comes from local.settings.json)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from shared.domain.documents import utc_text
from testkit.support import DEV_KEYS, MASTER_KEY, REPO, docs, eventually, running_devhost
from tests.sse import parse_sse

EXAMPLE = re.compile(r"<!-- readme-example: (\w+) -->\n```sh\n(.*?)```", re.DOTALL)


def examples() -> dict[str, str]:
    return dict(EXAMPLE.findall((REPO / "README.md").read_text()))


@pytest.fixture(scope="module")
def api(provisioned: dict[str, str], tmp_path_factory) -> Iterator[str]:
    # Empty rather than unset, so that no local.settings.json can name a model server.
    env = {**provisioned, "API_KEYS": DEV_KEYS, "AZURE_OPENAI_ENDPOINT": "", "OPENAI_BASE_URL": ""}
    with running_devhost(env, tmp_path_factory.mktemp("readme")) as url:
        api = f"{url}/api"

        def ready() -> bool:
            return httpx.get(f"{api}/health", timeout=30).status_code == 200

        eventually(ready, timeout=300, interval=0.5)  # what "Ready" in `make dev` waits for
        yield api


def run_example(name: str, api: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("API", "API_KEY", "MASTER_KEY")}
    done = subprocess.run(
        ["bash", "-eu", "-o", "pipefail", "-c", examples()[name]],
        cwd=REPO,
        env={**env, "API": api, "MASTER_KEY": MASTER_KEY},
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, f"{name}: exit {done.returncode}\n{done.stderr}\n{done.stdout}"
    return done.stdout


def test_the_readme_has_a_text_a_voice_and_a_digest_example() -> None:
    assert set(examples()) == {"text", "voice", "digest"}


def test_the_text_example_files_the_capture(api: str, cosmos) -> None:
    health, _, stream = run_example("text", api).partition("\n")
    assert '"status":"ok"' in health
    events, _ = parse_sse(stream)
    assert [events[0]["type"], events[-1]["type"]] == ["RUN_STARTED", "RUN_FINISHED"]
    result = events[-1]["result"]
    assert result["outcome"] == "CLASSIFIED" and result["bucket"] == "People", result
    (filed,) = docs(cosmos, "People", result["inboxItemId"])
    assert filed["userId"] == "dev"


def test_the_voice_example_uploads_a_wav_that_is_transcribed_and_filed(api: str, cosmos) -> None:
    events, _ = parse_sse(run_example("voice", api))
    assert [events[0]["type"], events[-1]["type"]] == ["RUN_STARTED", "RUN_FINISHED"]
    result = events[-1]["result"]
    assert result["outcome"] == "CLASSIFIED" and result["bucket"] == "People", result
    (item,) = docs(cosmos, "Inbox", result["inboxItemId"])
    assert item["source"] == "voice" and item["audioContentType"] == "audio/wav"
    assert "Sarah" in item["text"]  # transcribed from the WAV the example uploaded


def json_objects(text: str) -> list[dict]:
    """The JSON objects curl printed one after another (no newline between them)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text.strip()):
        value, at = decoder.raw_decode(text, at)
        found.append(value)
        while at < len(text) and text[at].isspace():
            at += 1
    return found


def test_the_digest_example_sends_todays_digest_whenever_it_is_run(api: str, cosmos) -> None:
    # It sets the digest to the coming minute, waits for it and fires the timer by hand, so it
    # works at any time of day (it once sent nothing unless 07:30 London had passed).
    started = datetime.now(UTC)
    put, digest = json_objects(run_example("digest", api))
    assert put["saved"] is True and put["timeZone"] == "UTC"
    today = datetime.now(UTC).date().isoformat()
    assert digest["timeZone"] == "UTC" and digest["date"] == today
    preferences = cosmos.get_container_client("Preferences")

    def moved_on() -> bool:
        doc = preferences.read_item("preferences", partition_key="dev")
        return doc["nextDigestAt"] > utc_text(datetime.now(UTC))

    # The worker took the job the timer sent: the day's record is done, the next digest is
    # tomorrow's.
    eventually(moved_on, timeout=60)
    record = cosmos.get_container_client("Digests").read_item(f"dev:{today}", partition_key="dev")
    assert record["done"] is True
    assert record["sentAt"] >= utc_text(started - timedelta(days=1))
