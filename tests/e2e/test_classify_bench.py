"""The classification benchmark asks the model what the app asks it: the request a capture sent
to POST /api/capture makes, and the one `python -m bench classify --model openai` makes for the
same text, are the same request."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from testkit import fake_openai
from testkit.fake_openai import FakeOpenAI
from testkit.support import KEY, bench_classify, run_input, running_devhost
from tests.sse import post_run

TEXT = "Lunch with Priya: she is looking for a data engineering job, ask Marco if his team hires"


@pytest.fixture(scope="module")
def host(scripted_env: dict[str, str], tmp_path_factory) -> Iterator[str]:
    with running_devhost(scripted_env, tmp_path_factory.mktemp("classify-bench")) as url:
        yield url


def test_the_bench_sends_what_the_app_sends(client, fake: FakeOpenAI, tmp_path: Path) -> None:
    fake.enqueue(fake_openai.classification("People", 0.9, "Ask Marco about Priya"))
    run = post_run(client, "/api/capture", run_input(TEXT), headers=KEY)
    assert run.last()["result"]["outcome"] == "CLASSIFIED"
    [from_app] = fake.requests_of(fake_openai.CHAT)  # (and the capture's embedding)

    fake.reset()
    fake.enqueue(fake_openai.classification("People", 0.9, "Ask Marco about Priya"))
    # Made on the day the app's capture was: both count relative days from the same day.
    day = from_app.json["messages"][0]["content"].rsplit(" ", 1)[-1].rstrip(".")
    capture = {"text": TEXT, "label": "People", "captured": f"{day}T09:00"}
    done, report = bench_classify(fake.base_url, [capture], tmp_path)
    assert done.returncode == 0, done.stderr
    [from_bench] = fake.requests

    assert from_bench.path == from_app.path == "/v1/chat/completions"
    assert from_bench.json == from_app.json  # model, messages, response_format: all of it
    assert from_app.json["messages"][1] == {"role": "user", "content": TEXT}
    assert report is not None and report["captures"][0]["outcome"] == "CLASSIFIED"
